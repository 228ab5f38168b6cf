package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/agentsim/agentsim/events"
)

// sampleLoop samples server and harness state every sample interval until ctx is done, feeds
// the watchdog, and ends the run (stop rounds, cancel requests) when the watchdog says so.
func (r *run) sampleLoop(ctx context.Context, stopRounds, cancelRequests func()) {
	t := r.o.Clock.NewTicker(r.o.Workload.SampleInterval)
	defer t.Stop()
	status := newStatusLine(r.o.Out, r.o.Live, r.o.Clock)
	progress := newProgressLog(r.o.Out, r.o.Progress && !r.o.Live, r.o.Clock)
	var free time.Time // wall time the previous sample was done
	for {
		select {
		case <-ctx.Done():
			status.clear()
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
		for _, w := range []string{warning, r.checkLag()} {
			if w != "" {
				status.clear()
				fmt.Fprintf(r.o.Out, "%s\n", w)
				r.Record(events.Event{Kind: events.Warning, Agent: -1, Message: w})
			}
		}
		status.show(s, r.log.Since(), r.watch.live())
		progress.show(s, r.log.Since(), r.watch.live())
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
	server := r.scraper.Scrape(ctx)
	cancel()
	now := r.o.Clock.Now()
	s, waiters := r.board.Snapshot(now)
	s.TS = now.Sub(r.start).Seconds()
	s.Wall = r.o.Clock.WallNow().UTC().Format(time.RFC3339Nano)
	if len(server.Gauges) > 0 {
		s.Server = server.Gauges
	}
	s.ServerErrors = server.Errors
	s.Pacer = r.pacerSample(now, waiters, s.Streams)
	s.LagS = r.o.Clock.Lag().TakeRecentMax().Seconds()
	if r.o.Sampled != nil {
		r.o.Sampled(s, r.scraper.Found())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.now.release(r.emit) // the watchdog judges the sample against every event before it
	r.samples.Write(s)
	r.gauges.sample(s)
	r.watch.sample(s)
	if r.metrics != nil {
		r.metrics.sample(s)
	}
	warning, ending := r.watch.check(s.TS)
	return s, warning, ending
}

// pacerSample describes the pacer at now; a held permit is leaked when no open stream of its
// agent uses it.
func (r *run) pacerSample(now time.Time, waiters []events.Waiter, streams []events.Stream) *events.PacerSample {
	st := r.pacer.Stats()
	ps := &events.PacerSample{InUse: st.InUse, Waiting: st.Waiting, LongestWaitS: st.LongestWait.Seconds(),
		Limit: st.Limit, Acquired: int64(st.Acquired), Released: int64(st.Released), Leaked: int64(st.Leaked),
		Granted: st.Granted, Waiters: waiters}
	inUse := map[uint64]bool{}
	for _, s := range streams {
		inUse[s.Permit] = true
	}
	for _, h := range st.Held {
		ps.Held = append(ps.Held, events.Holding{Permit: h.PermitID, Agent: h.Agent,
			HeldS: now.Sub(h.Since).Seconds(), Leaked: st.Leaked > 0 && !inUse[h.PermitID]})
	}
	return ps
}
