package diagnose

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/results"
)

// execMarks is what the events of `agentsim exec` add: the harness's processes (agent_start
// with a pid, agent_done with an exit code), the User-Agent their requests carried, and the
// harness's own retries.
type execMarks struct {
	on      bool
	procs   map[int]*procMark
	retries []harnessRetry
}

// procMark is one harness process.
type procMark struct {
	agent    int
	startS   float64
	lastEndS float64 // its latest request end, or its start before any
	open     int     // its requests in flight
	sent     int
	exited   bool
	code     int
	how      string           // how it ended, with the last line of its stderr
	stopped  events.EndReason // set when agentsim stopped it, "" when it exited by itself
	ua       string
}

// harnessRetry is a request the harness re-sent after the failed attempt's silence.
type harnessRetry struct {
	agent         int
	request       string
	atS, silenceS float64
	backoffS      float64
	class         events.Class
}

// onExecEvent follows the processes and the harness's retries.
func (a *Analyzer) onExecEvent(e events.Event) {
	m := &a.exec
	if e.Kind == events.AgentStart && e.PID > 0 {
		m.on = true
		if m.procs == nil {
			m.procs = map[int]*procMark{}
		}
		m.procs[e.Agent] = &procMark{agent: e.Agent, startS: e.TS, lastEndS: e.TS}
		return
	}
	p := m.procs[e.Agent]
	if !m.on || p == nil {
		return
	}
	switch {
	case e.Kind == events.AgentDone && e.ExitCode != nil:
		p.exited, p.code, p.how, p.stopped = true, *e.ExitCode, e.Message, e.Reason
	case e.Kind == events.RequestSent:
		p.open++
		p.sent++
		if p.ua == "" {
			p.ua = e.UserAgent
		}
	case e.Kind.Terminal():
		p.open = max(0, p.open-1)
		p.lastEndS = e.TS
	case e.Kind == events.Retry:
		m.retries = append(m.retries, harnessRetry{agent: e.Agent, request: e.Request, atS: e.TS, silenceS: e.SinceLastByteS,
			backoffS: e.BackoffS, class: e.Class})
	}
}

// sortedProcs returns the processes by agent.
func (m *execMarks) sortedProcs() []*procMark {
	out := make([]*procMark, 0, len(m.procs))
	for _, p := range m.procs {
		out = append(out, p)
	}
	slices.SortFunc(out, func(x, y *procMark) int { return x.agent - y.agent })
	return out
}

// execRule judges the harness's processes once nothing has moved for ≥ StallAfter: the
// running processes whose requests in flight are all silent wait on the server
// (stalled-streams, naming them); those with nothing in flight for ≥ StallAfter are blocked
// outside the stream — their own pacer, a lock, a tool — and when only they remain the
// verdict is harness-stopped. A process started less than StallAfter ago without a request
// leaves the judgement to the other rules.
func (a *Analyzer) execRule(v *view, _ *results.Results) (results.Verdict, bool) {
	if !a.exec.on || v.quietS < a.stallS {
		return results.Verdict{}, false
	}
	var silent, blocked []*procMark
	for _, p := range a.exec.sortedProcs() {
		switch {
		case p.exited:
		case p.open > 0 && a.allSilent(p.agent, v):
			silent = append(silent, p)
		case p.open == 0 && v.nowS-p.lastEndS >= a.stallS:
			blocked = append(blocked, p)
		default:
			return results.Verdict{}, false
		}
	}
	switch {
	case len(silent) > 0:
		return a.procsWait(v, silent, blocked), true
	case len(blocked) > 0:
		return a.procsBlocked(v, blocked), true
	}
	return results.Verdict{}, false
}

// allSilent reports whether every request of agent in flight is silent ≥ StallAfter.
func (a *Analyzer) allSilent(agent int, v *view) bool {
	n := 0
	for _, r := range v.silent {
		if r.agent == agent {
			n++
		}
	}
	for _, r := range a.open {
		if r.agent == agent {
			n--
		}
	}
	return n == 0
}

// procsWait describes processes whose streams are all silent.
func (a *Analyzer) procsWait(v *view, silent, blocked []*procMark) results.Verdict {
	var rs []*request
	for _, r := range v.silent {
		for _, p := range silent {
			if r.agent == p.agent {
				rs = append(rs, r)
			}
		}
	}
	server, _ := a.serverLoad(v.nowS)
	summary := fmt.Sprintf("%s of %d harness processes (%s) wait on streams silent for ≥ %s (longest %s) and %s",
		strconv.Itoa(len(silent)), len(a.exec.procs), procAgents(silent), secs(minSilence(rs, v.nowS)), secs(rs[0].silenceS(v.nowS)), server)
	if len(blocked) > 0 {
		summary += fmt.Sprintf("; %s (%s) sent nothing while nothing of theirs was in flight: blocked outside the stream", otherProcesses(len(blocked)), procAgents(blocked))
	}
	ev := a.streamLines(rs, v.nowS)
	ev = append(ev, a.guardLines(silent, rs[0].silenceS(v.nowS))...)
	if len(blocked) > 0 {
		ev = append(ev, a.blockedLine(blocked, v.nowS))
	}
	return results.Verdict{Kind: results.StalledStreams, Summary: summary, Evidence: a.withGauges(ev, v.nowS)}
}

// procsBlocked describes processes that stopped sending with nothing in flight.
func (a *Analyzer) procsBlocked(v *view, blocked []*procMark) results.Verdict {
	server, _ := a.serverLoad(v.nowS)
	summary := fmt.Sprintf("%s of %d harness processes (%s) run but have sent nothing for ≥ %s with nothing in flight, and %s: the harness is blocked outside the stream (its pacer, a lock, a tool, a network call of its own), not waiting on the server",
		strconv.Itoa(len(blocked)), len(a.exec.procs), procAgents(blocked), secs(minQuiet(blocked, v.nowS)), server)
	ev := []string{a.blockedLine(blocked, v.nowS),
		"nothing the server does can hold these processes now: every request they sent has ended"}
	return results.Verdict{Kind: results.HarnessStopped, Summary: summary, Evidence: a.withGauges(ev, v.nowS)}
}

// blockedLine lists processes blocked outside the stream and since when.
func (a *Analyzer) blockedLine(blocked []*procMark, nowS float64) string {
	var parts []string
	for i, p := range blocked {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("… %d more", len(blocked)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("agent %d: %d request%s sent, nothing in flight for %s", p.agent, p.sent, plural.S(p.sent), secs(nowS-p.lastEndS)))
	}
	return "blocked outside the stream: " + strings.Join(parts, "; ")
}

// minQuiet returns the shortest time the processes have had nothing in flight.
func minQuiet(ps []*procMark, nowS float64) float64 {
	q := nowS - ps[0].lastEndS
	for _, p := range ps {
		q = min(q, nowS-p.lastEndS)
	}
	return q
}

// procAgents names processes by agent: "agents 0, 1, 3".
func procAgents(ps []*procMark) string {
	ids := make([]int, len(ps))
	for i, p := range ps {
		ids[i] = p.agent
	}
	return agentList(ids)
}

// guardLines say, per harness family among procs, which guard would end their silence.
func (a *Analyzer) guardLines(procs []*procMark, silenceS float64) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range procs {
		if seen[p.ua] {
			continue
		}
		seen[p.ua] = true
		if f, ok := FamilyOf(p.ua); ok {
			out = append(out, f.silentLine(p.ua, silenceS))
		} else {
			out = append(out, fmt.Sprintf("the harness's User-Agent %q is not in the timeout atlas (docs/timeouts.md): which of its guards ends a silent stream, and when, is unknown", p.ua))
		}
	}
	return out
}

// execExitRule gives the errors verdict when every process has exited and some exited with
// an error by themselves (not stopped by agentsim).
func (a *Analyzer) execExitRule(_ *view, _ *results.Results) (results.Verdict, bool) {
	if !a.exec.on {
		return results.Verdict{}, false
	}
	var failed []*procMark
	for _, p := range a.exec.sortedProcs() {
		if !p.exited {
			return results.Verdict{}, false
		}
		if p.code != 0 && p.stopped == "" {
			failed = append(failed, p)
		}
	}
	if len(failed) == 0 {
		return results.Verdict{}, false
	}
	return results.Verdict{Kind: results.Errors,
		Summary:  fmt.Sprintf("%s of %d harness processes exited with an error: %s", strconv.Itoa(len(failed)), len(a.exec.procs), failed[0].exitText()),
		Evidence: []string{}}, true
}

// exitText says how p ended: "agent 2: exit status 1 (\"Error: timed out\")".
func (p *procMark) exitText() string {
	return fmt.Sprintf("agent %d: %s", p.agent, p.how)
}

// execLines is what every verdict of an exec run adds: the processes, how those that failed
// ended, and the harness's own retries with the guard that fired.
func (a *Analyzer) execLines() []string {
	if !a.exec.on {
		return nil
	}
	ps := a.exec.sortedProcs()
	var exited, ok, stopped int
	var failed []string
	for _, p := range ps {
		if !p.exited {
			continue
		}
		exited++
		switch {
		case p.stopped != "":
			stopped++
		case p.code == 0:
			ok++
		default:
			failed = append(failed, p.exitText())
		}
	}
	out := []string{fmt.Sprintf("harness processes: %d started, %d exited (%d with status 0, %d with an error, %d stopped by agentsim: %s)",
		len(ps), exited, ok, len(failed), stopped, stopReasons(ps))}
	if len(failed) > 8 {
		failed = append(failed[:8], fmt.Sprintf("… %d more", len(failed)-8))
	}
	out = append(out, failed...)
	return append(out, a.retryLines()...)
}

// stopReasons says why agentsim stopped the processes it stopped, "none" when none.
func stopReasons(ps []*procMark) string {
	n := map[events.EndReason]int{}
	for _, p := range ps {
		if p.stopped != "" {
			n[p.stopped]++
		}
	}
	if len(n) == 0 {
		return "none"
	}
	var out []string
	for _, r := range slices.Sorted(maps.Keys(n)) {
		out = append(out, fmt.Sprintf("%d at %s", n[r], r))
	}
	return strings.Join(out, ", ")
}

// retryLines describe the harness's own retries: which request, after what silence, and the
// guard of its family that fired.
func (a *Analyzer) retryLines() []string {
	rs := a.exec.retries
	if len(rs) == 0 {
		return nil
	}
	longest := slices.MaxFunc(rs, func(x, y harnessRetry) int { return cmp.Compare(x.silenceS, y.silenceS) })
	line := fmt.Sprintf("the harness re-sent %s after a failure of its own; the longest silence before one: %s re-sent at t=%s after %s without a byte (%s), %s later",
		plural.Of(len(rs), "request"), longest.request, secs(longest.atS), secs(longest.silenceS), longest.class, secs(longest.backoffS))
	out := []string{line}
	if p := a.exec.procs[longest.agent]; p != nil {
		if f, ok := FamilyOf(p.ua); ok {
			out = append(out, "the guard that fired: "+f.firedGuard(longest.silenceS))
		} else {
			out = append(out, fmt.Sprintf("the guard that fired: a timeout of ≈ %s (User-Agent %q is not in the timeout atlas)", secs(longest.silenceS), p.ua))
		}
	}
	var each []string
	for i, r := range rs {
		if i == 8 {
			each = append(each, fmt.Sprintf("… %d more", len(rs)-i))
			break
		}
		each = append(each, fmt.Sprintf("%s after %s silent", r.request, secs(r.silenceS)))
	}
	return append(out, "retries: "+strings.Join(each, "; "))
}

// execWakeLine says, for the silent requests rs of an exec run, which guard of each harness
// family among their processes can end them (the workload's timeouts are not the harness's).
func (a *Analyzer) execWakeLine(rs []*request) string {
	var ps []*procMark
	longest := 0.0
	for _, r := range rs {
		if p := a.exec.procs[r.agent]; p != nil && !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
		longest = max(longest, r.silenceS(a.lastS))
	}
	if len(ps) == 0 {
		return "the silent requests come from no process of the run: which guard could end them is unknown"
	}
	return strings.Join(a.guardLines(ps, longest), "; ")
}

// otherProcesses counts the other processes: "1 other process", "2 other processes".
func otherProcesses(n int) string {
	if n == 1 {
		return "1 other process"
	}
	return strconv.Itoa(n) + " other processes"
}

// onExecStop fixes the stop mark at the run's stop under exec (see stopMark): a process the
// stop kills closes its streams before its own end is recorded, so the first record of the
// stop that an agent makes can come after its cancellations.
func (a *Analyzer) onExecStop(e events.Event) {
	if !a.exec.on || e.Kind != events.Stop || a.stop != nil {
		return
	}
	var r results.Results
	a.counts(&r, e.TS)
	a.stop = &stopMark{atS: e.TS, verdict: a.rules(e.TS, &r)}
}
