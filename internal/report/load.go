// Package report renders `agentsim report`: one self-contained HTML file of one or more run
// directories — the verdict and its evidence, timelines from samples.jsonl, a per-request Gantt
// chart from events.jsonl and latency distributions — drawn with gonum/plot as inline SVG, so
// the file opens offline and makes no network request. Several runs overlay on the same axes.
// Computing (this file, timeline.go, gantt.go) is apart from rendering (chart*.go, html.go).
package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/results"
)

// DefaultStallAfter is the silence after which a stream counts as silent when a run's
// config.yaml does not say (the workloads' default).
const DefaultStallAfter = 2 * time.Minute

// Run is one run directory read back: its results, events and samples.
type Run struct {
	// Label names the run in legends: the directory as given, with the part for a compare's
	// parts and a sweep's tests ("runs/x/agentic").
	Label string
	Dir   string
	// Results is results.json, or, for a run killed before writing it, what diagnose
	// re-derives from the other files.
	Results *results.Results
	Events  []events.Event
	Samples []events.Sample
	// StallAfterS is the watchdog's stall_after, in simulated seconds: a stream silent that
	// long is drawn as silent.
	StallAfterS float64
	// Agents and Rounds are the workload's.
	Agents, Rounds int
}

// Load reads each directory as a run. A directory of compare (synthetic/, agentic/) or of a
// bench sweep (n<N>/) stands for its parts, each a run of its own. Errors name the directory
// and the file.
func Load(dirs ...string) ([]*Run, error) {
	var runs []*Run
	for _, d := range dirs {
		parts, err := partDirs(d)
		if err != nil {
			return nil, err
		}
		for _, p := range parts {
			r, err := loadRun(p)
			if err != nil {
				return nil, err
			}
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// partDirs returns dir itself when it holds events.jsonl, else its parts (rundir.Parts).
func partDirs(dir string) ([]string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory: want a run directory holding %s, %s and %s", dir, rundir.Events, rundir.Samples, rundir.Config)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.Events)); err == nil {
		return []string{dir}, nil
	}
	if _, err := os.ReadDir(dir); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	parts := rundir.Parts(dir)
	if len(parts) == 0 {
		return nil, fmt.Errorf("%s: not a run directory: no %s in it or in its subdirectories", dir, rundir.Events)
	}
	return parts, nil
}

// loadRun reads one run directory: its events, samples and results — results.json, or for a
// run killed before writing it, what diagnose re-derives from the other files. Its
// config.yaml may be missing or unreadable: the run is then drawn with the default
// stall_after.
func loadRun(dir string) (*Run, error) {
	run, err := rundir.Open(dir, rundir.Options{Samples: true, Results: true, Derive: diagnose.Derive, OptionalWorkload: true})
	if err != nil {
		return nil, err
	}
	r := &Run{Label: filepath.Clean(dir), Dir: dir, StallAfterS: DefaultStallAfter.Seconds(),
		Events: run.Events, Samples: run.Samples, Results: run.Results}
	if w := run.Workload; w != nil {
		r.StallAfterS = w.Watchdog.StallAfter.Seconds()
		r.Agents, r.Rounds = w.Agents, w.Rounds
	}
	for _, e := range r.Events {
		r.Agents = max(r.Agents, e.Agent+1)
	}
	return r, nil
}

// EndS is the run's last recorded time, in simulated seconds.
func (r *Run) EndS() float64 {
	end := 0.0
	if n := len(r.Events); n > 0 {
		end = r.Events[n-1].TS
	}
	if n := len(r.Samples); n > 0 {
		end = max(end, r.Samples[n-1].TS)
	}
	return end
}
