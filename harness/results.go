package harness

import (
	"errors"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// results assembles results.json from the builder, the watchdog's verdict and the run's
// settings.
func (r *run) results(interrupted bool) *results.Results {
	w := r.o.Workload
	res := &results.Results{
		Command: r.o.Command, Workload: w.Name, Server: r.o.Target.Server(), Speedup: r.o.Clock.Speedup(), Reproduce: r.o.Reproduce,
		WallSeconds: r.o.Clock.WallNow().Sub(r.wallFrom).Seconds(), Interrupted: interrupted,
	}
	res.Server.Metrics = r.scraper.Found()
	if m := r.o.Model; m != nil {
		res.Server.Model, res.Server.ModelSource = m.Name, string(m.Source)
		res.Server.ContextWindow, res.Server.ContextWindowSource = m.ContextWindow, m.ContextSource
	}
	r.mu.Lock()
	r.watch.fill(res)
	var fitted *refusedPrompt // a copy, read after mu is released
	if r.refused != nil {
		c := *r.refused
		fitted = &c
	}
	res.Warnings = append(append([]string(nil), r.notes...), r.gauges.warning(res, r.scraper.Source(events.GenTokS))...)
	r.mu.Unlock()
	res.Stream.Server = serverStream(r.scraper)
	if r.o.Scripts == nil { // see outputWarning
		res.Warnings = append(res.Warnings, outputWarning(res, w)...)
	}
	res.Warnings = append(res.Warnings, streamWarning(res)...)
	res.Warnings = append(res.Warnings, reasoningWarning(res, w)...)
	if !r.contextWarned {
		res.Warnings = append(res.Warnings, contextRefused(res, w, fitted)...)
	}
	res.Rounds.Planned = w.Agents * w.Rounds
	res.Harness = r.harnessResults(res.Latency.E2E.P50)
	if r.o.Scripts != nil {
		res.Rounds.Planned = 0
		for _, s := range r.o.Scripts {
			res.Rounds.Planned += len(s.Turns)
		}
	}
	return res
}

// closeLogs flushes and closes both logs, returning the first error (a full disk).
func (r *run) closeLogs() error {
	return errors.Join(r.log.Close(), r.samples.Close())
}

// close releases what newRun built; safe on a partly built run.
func (r *run) close() {
	if r.log != nil {
		_ = r.log.Close()
	}
	if r.samples != nil {
		_ = r.samples.Close()
	}
	if c, ok := r.pacer.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}
