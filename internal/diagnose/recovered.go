package diagnose

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/results"
)

// pastStall is a silence of StallAfter or more that ended: a byte came after it, or the
// request ended (done, an error, a timeout; cancelled by the run's stop counts only in
// requests.stalled). Its heardS decides whether it is a stall.
type pastStall struct {
	id    string
	agent int
	silence
	ended events.Kind // the request's terminal event; "" while it is still open
	// byHarness is set when the harness itself cancelled the request before the run's stop
	// (agentsim exec: its own timeout): the silence it ended is a stall like any other.
	byHarness bool
}

// endSilence closes the silences of a request that ends with e and keeps its longest when
// it reached StallAfter. A request's last silence ends with it unless the run's stop
// cancelled it: that one is the stop mark's to judge.
func (a *Analyzer) endSilence(r *request, e events.Event) {
	// The harness's own cancel (exec, before the stop) closes the silence it gave up on.
	byHarness := a.exec.on && e.Kind == events.Cancelled && a.stop == nil
	if (e.Kind != events.Cancelled || byHarness) && (a.samples > 0 || !r.output) {
		a.byteAt(r, e.TS)
	}
	// Without samples the gaps between chunks are known only from the event.
	if a.samples == 0 && e.MaxGapS > r.longest.heardS() {
		r.longest = silence{lengthS: e.MaxGapS, endS: e.TS, untimed: true}
	}
	a.capSilence(r, e)
	if r.longest.lengthS >= a.stallS { // the next sample may still show it was lag
		a.stalls = append(a.stalls, pastStall{id: r.id, agent: r.agent, silence: r.longest, ended: e.Kind,
			byHarness: byHarness})
	}
}

// capSilence holds the longest silence of r after its first byte to the longest gap between
// bytes its stream reader measured (the terminal event's max_gap_s, or since_last_byte_s when
// larger): the samples only bound when a byte came, the reader saw each one.
func (a *Analyzer) capSilence(r *request, e events.Event) {
	gap := max(e.MaxGapS, e.SinceLastByteS)
	s := &r.longest
	if gap <= 0 || r.firstByteS == 0 || s.untimed || s.lengthS <= gap || s.endS-s.lengthS < r.firstByteS-episodeTolerance {
		return
	}
	s.lengthS = gap
	s.behindS, s.baseS = min(s.behindS, gap), min(s.baseS, gap)
	s.simS = min(s.simS, gap-s.behindS)
}

// recovered returns the stalls that ended, those of open requests included, that queueing
// does not explain — a silence before the first token while the server reported queued work
// or served one request at a time — longest first.
func (a *Analyzer) recovered(v *view) []pastStall {
	out := slices.Clone(a.stalls)
	for _, r := range a.open {
		out = append(out, pastStall{id: r.id, agent: r.agent, silence: r.longest})
	}
	out = slices.DeleteFunc(out, func(p pastStall) bool {
		return p.heardS() < a.stallS || (p.ended == events.Cancelled && !p.byHarness) || (p.beforeOutput && (p.queued || v.ser.yes))
	})
	slices.SortFunc(out, func(x, y pastStall) int {
		return cmp.Or(cmp.Compare(y.heardS(), x.heardS()), cmp.Compare(y.lengthS, x.lengthS), cmp.Compare(x.id, y.id))
	})
	return out
}

// recoveredRule is the stalled-streams verdict of a run whose stalls ended: streams went
// StallAfter or more without a byte and then resumed (or ended by themselves). A stall that
// ends is still a stall: the server stopped serving those streams for that long.
func (a *Analyzer) recoveredRule(v *view, r *results.Results) (results.Verdict, bool) {
	ps := a.recovered(v)
	if len(ps) == 0 {
		return results.Verdict{}, false
	}
	long := ps[0]
	how := "then resumed"
	switch long.ended {
	case events.Done:
		how = "then resumed and finished ok"
	case events.Timeout:
		how = "then timed out"
	case events.Error:
		how = "then failed"
	case events.Cancelled:
		how = "then the harness gave up on it (its own timeout)"
	}
	where := "while streaming"
	if long.beforeOutput {
		where = "before its first token"
	}
	when := fmt.Sprintf("received no byte from t=%s to t=%s", secs(long.endS-long.lengthS), secs(long.endS))
	if long.untimed {
		when = "went without a byte"
	}
	ev := []string{
		fmt.Sprintf("longest silence %s: request %s (agent %d) %s %s, %s", secs(long.lengthS), long.id, long.agent, when, where, how),
		fmt.Sprintf("%d request%s went ≥ %s without a byte and then %s; no stream is silent now (last byte or request end %s ago)",
			len(ps), plural.S(len(ps)), secs(a.stallS), wentOn(ps), secs(v.quietS)),
		fmt.Sprintf("rounds: %d completed, %d failed; requests: %d ok, %d failed", r.Rounds.Completed, r.Rounds.Failed, r.Requests.OK, r.Requests.Failed),
	}
	if l, ok := a.little(v.nowS, r); ok {
		ev = append(ev, l.lines()[0])
	}
	return results.Verdict{
		Kind: results.StalledStreams,
		Summary: fmt.Sprintf("%d stream%s stalled for ≥ %s (longest %s) and then %s: a stall that ends is still a stall",
			len(ps), plural.S(len(ps)), secs(a.stallS), secs(long.lengthS), wentOn(ps)),
		Evidence: a.withGauges(ev, v.nowS),
	}, true
}

// wentOn says how the stalls ps ended: the streams went on (resumed, or ended by themselves),
// or the client's own timeout ended them — a timeout is no sign the server came back.
func wentOn(ps []pastStall) string {
	timedOut := 0
	for _, p := range ps {
		if p.ended == events.Timeout {
			timedOut++
		}
	}
	switch {
	case timedOut == 0:
		return "went on"
	case timedOut == len(ps):
		return "timed out (the client's own timeout ended them, not the server)"
	}
	return fmt.Sprintf("went on or timed out (%d ended by the client's own timeout, not the server)", timedOut)
}
