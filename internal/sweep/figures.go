package sweep

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/results"
)

// Figures are what one finished run contributes to its cell's row, read from its run
// directory. Times are simulated seconds.
type Figures struct {
	// Verdict is results.json's verdict.
	Verdict results.Verdict
	// Interrupted is set when the run was interrupted: its figures are partial, and the
	// sweep runs it again.
	Interrupted bool
	// RoundsCompleted, SimSeconds and WallSeconds are results.json's.
	RoundsCompleted int
	SimSeconds      float64
	WallSeconds     float64
	// E2E holds the end-to-end latency of every request that ended ok, PacerWait every
	// pacer wait that ended with a permit: the observations results.json summarises, so
	// that a cell's percentiles are taken over all its runs' requests.
	E2E       []float64
	PacerWait []float64
	// FirstStallS is when a request had first gone StallAfter without a byte (not counting
	// requests queueing at the server), to the run's sample interval; nil when none did.
	FirstStallS *float64
	// LagP99S is the harness's p99 scheduling lag; LagWarning is set when it distorted the
	// run's figures.
	LagP99S    float64
	LagWarning string
}

// ErrNoRun is returned by ReadFigures for a directory that holds no finished run.
var ErrNoRun = errors.New("no finished run")

// ReadFigures reads a run directory's results.json and replays its events.jsonl and
// samples.jsonl to find the first stall. A directory without results.json gives ErrNoRun.
func ReadFigures(dir string) (*Figures, error) {
	res, err := results.Read(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoRun
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	f := &Figures{Verdict: res.Verdict, Interrupted: res.Interrupted, RoundsCompleted: res.Rounds.Completed,
		SimSeconds: res.SimSeconds, WallSeconds: res.WallSeconds}
	if res.Harness != nil {
		f.LagP99S, f.LagWarning = res.Harness.Lag.P99, res.Harness.Warning
	}
	run, err := rundir.Open(dir, rundir.Options{Samples: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	f.replay(run)
	return f, nil
}

// replay feeds the run's records to a diagnose.Analyzer in time order, as diagnose.Replay
// does, asking after every sample whether a stream has stalled; it collects the per-request
// observations on the way.
func (f *Figures) replay(run *rundir.Run) {
	evs, samples := run.Events, run.Samples // sorted in place: run is the caller's own
	slices.SortStableFunc(evs, func(x, y events.Event) int { return cmp.Compare(x.TS, y.TS) })
	slices.SortStableFunc(samples, func(x, y events.Sample) int { return cmp.Compare(x.TS, y.TS) })
	a := diagnose.New(diagnose.ConfigFrom(run.Workload))
	i, j := 0, 0
	for i < len(evs) || j < len(samples) {
		if j == len(samples) || (i < len(evs) && evs[i].TS <= samples[j].TS) {
			f.event(evs[i])
			a.Event(evs[i])
			i++
			continue
		}
		a.Sample(samples[j])
		if st := a.Stall(samples[j].TS); st.Stalled > 0 && f.FirstStallS == nil {
			t := samples[j].TS
			f.FirstStallS = &t
		}
		j++
	}
}

// event collects an event's observation, as results.Builder counts it.
func (f *Figures) event(e events.Event) {
	switch e.Kind {
	case events.Done:
		f.E2E = append(f.E2E, e.LatencyS)
	case events.PacerAcquired:
		f.PacerWait = append(f.PacerWait, e.PacerWaitS)
	}
}
