package harness

import (
	"errors"

	"github.com/agentsim/agentsim/results"
)

// results assembles results.json from the builder, the watchdog's verdict, the run's checks
// (its warnings) and its settings.
func (r *run) results(interrupted bool) *results.Results {
	w := r.o.Workload
	res := &results.Results{
		Command: r.o.Command, Workload: w.Name, Server: r.o.Target.Server(), Speedup: r.o.Clock.Speedup(), Reproduce: r.o.Reproduce,
		WallSeconds: r.o.Clock.WallNow().Sub(r.wallFrom).Seconds(), Interrupted: interrupted,
	}
	if r.pace != nil {
		a := r.pace.Achieved()
		res.SpeedupAchieved, res.Speedup = a, a.Median
		if rp := r.o.Reproduce; rp != nil && rp.Simulator != nil {
			// What reproduces it is --speedup max; the rates it held are the machine's.
			sim := *rp.Simulator
			sim.Speedup, sim.SpeedupMax = a.Median, true
			sim.Achieved = &results.SpeedupRange{Min: a.Min, Median: a.Median, Max: a.Max}
			copied := *rp
			copied.Simulator = &sim
			res.Reproduce = &copied
		}
	}
	res.Server.Metrics = r.scraper.Found()
	if m := r.o.Model; m != nil {
		res.Server.Model, res.Server.ModelSource = m.Name, string(m.Source)
		res.Server.ContextWindow, res.Server.ContextWindowSource = m.ContextWindow, m.ContextSource
	}
	res.Server.FitWindow = r.fitted
	r.mu.Lock()
	r.watch.fill(res)
	res.Stream.Server = serverStream(r.scraper) // fill sets the stream the harness measured
	res.Rounds.Scripted = r.o.Scripts != nil
	res.Warnings = r.checks.Warnings(res, w)
	r.mu.Unlock()
	res.Rounds.Planned = w.Agents * w.Rounds
	res.Harness = r.harnessResults(res.Speedup, res.Latency.E2E.P50)
	r.mu.Lock()
	r.watch.a.Doubt(res)
	r.mu.Unlock()
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
