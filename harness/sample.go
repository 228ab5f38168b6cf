package harness

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/agentsim/agentsim/agents"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// sampleLoop samples server and harness state every sample interval until ctx is done, feeds
// the watchdog, and ends the run (stop rounds, cancel requests) when the watchdog says so.
func (r *run) sampleLoop(ctx context.Context, stopRounds, cancelRequests func()) {
	t := r.o.Clock.NewTicker(r.o.Workload.SampleInterval)
	defer t.Stop()
	var free time.Time // wall time the previous sample was done
	for {
		select {
		case <-ctx.Done():
			r.o.observer().Stopped()
			return
		case due := <-t.C:
			// A tick that fell due while the previous sample was still being taken (a slow
			// /metrics scrape) is late because of that work, not because of scheduling.
			if due.Before(free) {
				due = free
			}
			r.o.Clock.Fired(due)
		}
		s, warning, ending := r.sample()
		free = r.o.Clock.WallNow()
		for _, w := range []string{warning, r.checkPace(), r.checkLate(s), r.checkStream()} {
			if w != "" {
				r.o.observer().Warned(w)
				r.Record(events.Event{Kind: events.Warning, Agent: -1, Message: w})
			}
		}
		r.o.observer().Ticked(s, r.log.Since(), r.watch.live())
		if ending {
			r.stopping(events.EndWatchdog, "watchdog: no new rounds, requests in flight cancelled")
			stopRounds()
			cancelRequests()
		}
	}
}

// sample takes one sample, writes it to samples.jsonl and feeds it to the watchdog; it
// returns the sample and the watchdog's warning and decision to end the run.
func (r *run) sample() (events.Sample, string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	before := r.o.Clock.Now()
	server := r.scraper.Scrape(ctx)
	cancel()
	// The sample's instant, its snapshot and the events written before it are taken under mu,
	// so that no event stamped after the instant is written before the sample.
	r.mu.Lock()
	recorded := r.board.Recorded() // before the instant; see agents.Unrecorded
	now := r.o.Clock.Now()
	r.scrapeS = now.Sub(before).Seconds()
	s, waits := r.board.Snapshot(now, r.o.Workload.Watchdog.StallAfter)
	s.TS = now.Sub(r.start).Seconds()
	s.LateS = r.lateness(s.TS)
	s.Wall = events.FormatWall(r.o.Clock.WallNow())
	if len(server.Gauges) > 0 {
		s.Server = server.Gauges
	}
	s.ServerErrors = server.Errors
	s.Pacer = r.pacerSample(now, waits)
	s.LagS = r.o.Clock.Lag().TakeRecentMax().Seconds()
	r.sampleSimLag(&s)
	// The watchdog judges the sample against every event before it; later ones follow it.
	r.flush(s.TS)
	r.now.release(r.emit)
	u := agents.Unrecorded(recorded, r.board.Begun())
	s.InFlightUnrecorded = u.Opens + u.Closes
	if s.Pacer != nil {
		s.Pacer.Unrecorded = max(0, u.Acquires-int64(s.Pacer.Waiting)) + u.Releases
	}
	s.RoundsEnded = r.roundsEnded
	r.samples.Write(s)
	r.checks.Sample(s)
	r.watch.sample(s)
	if r.metrics != nil {
		r.metrics.sample(s)
	}
	warning, ending := r.watch.check(s.TS)
	r.mu.Unlock()
	if r.o.Sampled != nil {
		r.o.Sampled(s, r.scraper.Found())
	}
	return s, warning, ending
}

// pacerSample describes the pacer at now: its counters, the longest waits, and the permits in
// use by class. A held permit is leaked when no open stream of its agent uses it; silent when
// its stream has been silent ≥ stall_after.
func (r *run) pacerSample(now time.Time, w agents.Waits) *events.PacerSample {
	st := r.pacer.Stats()
	ps := &events.PacerSample{InUse: st.InUse, Waiting: st.Waiting, LongestWaitS: st.LongestWait.Seconds(),
		Limit: st.Limit, Acquired: int64(st.Acquired), Released: int64(st.Released), Leaked: int64(st.Leaked),
		Granted: st.Granted, Waiters: w.Longest, WaitP50S: w.P50S, WaitP90S: w.P90S}
	leaked := make([]bool, len(st.Held))
	for i, h := range st.Held {
		open, silent := r.board.Permit(h.PermitID)
		leaked[i] = st.Leaked > 0 && !open
		switch {
		case leaked[i]:
			ps.HeldLeaked++
		case silent:
			ps.HeldSilent++
		}
	}
	// Every leaked permit is named; the others, oldest first, while there is room.
	room := events.MaxListedHeld - ps.HeldLeaked
	var held []events.Holding
	for i, h := range st.Held {
		if !leaked[i] {
			if room <= 0 {
				continue
			}
			room--
		}
		held = append(held, events.Holding{Permit: h.PermitID, Agent: h.Agent, HeldS: now.Sub(h.Since).Seconds(), Leaked: leaked[i]})
	}
	if len(held) > 0 {
		ps.Held = held
	}
	return ps
}

// lateness returns how much later than due, in simulated seconds, the sample at tS (since
// the run's start) was taken: the time since the previous sample beyond one sample interval,
// 0 when under a millisecond. The ticker drops the ticks a slow sampler misses, so this, not
// the tick's own lag, is how far the sampler fell behind.
func (r *run) lateness(tS float64) float64 {
	late := tS - r.lastSampleS - r.o.Workload.SampleInterval.Seconds()
	r.lastSampleS = tS
	if late < 1e-3 {
		return 0
	}
	return math.Round(late*1e3) / 1e3
}

// checkLate gives the warning, once, when a sample was taken more than one sample interval
// late — at --speedup max, more than that and the lag the controller allows (MaxPace) —
// because the server's /metrics took that long to answer; it returns the warning or "". A
// sample late for the machine's pace says nothing the pace line does not: its tick's lateness
// counts in the harness's lag (Clock.Fired), which that one line about the pace reports. So
// does a slow scrape of the embedded simulator: its /metrics is answered in this process, and
// at a speedup a pause of the machine's is seconds of simulated time.
func (r *run) checkLate(s events.Sample) string {
	if r.o.Target.Kind == results.Embedded {
		return ""
	}
	interval := r.o.Workload.SampleInterval
	allowed := interval.Seconds()
	if r.pace != nil {
		allowed = max(allowed, r.pace.bound.Seconds())
	}
	if r.lateWarned || s.LateS <= allowed || r.scrapeS < s.LateS/2 {
		return ""
	}
	r.lateWarned = true
	return fmt.Sprintf("warning: the sampler fell behind: the sample at t=%s came %s after the previous one, %s later than due (sample_interval %s); samples.jsonl misses what happened in between; the server's /metrics took %s (simulated) to answer",
		results.Seconds(s.TS), results.Seconds(s.LateS+interval.Seconds()), results.Seconds(s.LateS), interval, results.Seconds(r.scrapeS))
}

// busy says, of the sample taken before the run sent anything, that the server was already
// busy then: requests of other clients, or ones whose clients left and that it still decodes
// (llm-d-inference-sim does), share it, so rates measured now are not the run's alone. ""
// when its gauges show it idle or it has none.
func busy(s events.Sample) string {
	var parts []string
	for _, g := range []string{events.DecodeRunning, events.PrefillInflight, events.Queued} {
		if v := s.Server[g]; v > 0 {
			parts = append(parts, fmt.Sprintf("%s %g", g, v))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "the server was already busy before this run sent a request (" + strings.Join(parts, ", ") +
		" at t=0 s): other clients' requests, or ones it still decodes after their clients left, share it, so the rates measured are not this run's alone"
}
