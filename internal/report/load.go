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
	"sort"
	"time"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
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

// partDirs returns dir itself when it holds events.jsonl, else its subdirectories that do.
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
		return nil, fmt.Errorf("%s: not a directory: want a run directory holding events.jsonl, samples.jsonl and config.yaml", dir)
	}
	if exists(filepath.Join(dir, diagnose.EventsFile)) {
		return []string{dir}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	var parts []string
	for _, e := range entries {
		if e.IsDir() && exists(filepath.Join(dir, e.Name(), diagnose.EventsFile)) {
			parts = append(parts, filepath.Join(dir, e.Name()))
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%s: not a run directory: no %s in it or in its subdirectories", dir, diagnose.EventsFile)
	}
	// compare runs its synthetic part first; keep that order rather than the alphabet's.
	sort.SliceStable(parts, func(i, j int) bool {
		return filepath.Base(parts[i]) == "synthetic" && filepath.Base(parts[j]) != "synthetic"
	})
	return parts, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// loadRun reads one run directory.
func loadRun(dir string) (*Run, error) {
	r := &Run{Label: filepath.Clean(dir), Dir: dir, StallAfterS: DefaultStallAfter.Seconds()}
	var err error
	if r.Events, err = events.ReadFile[events.Event](filepath.Join(dir, diagnose.EventsFile)); err != nil {
		return nil, err
	}
	if r.Samples, err = events.ReadFile[events.Sample](filepath.Join(dir, diagnose.SamplesFile)); err != nil {
		return nil, err
	}
	if data, err := os.ReadFile(filepath.Join(dir, diagnose.ConfigFile)); err == nil {
		if w, err := workloads.LoadRecorded(data); err == nil {
			r.StallAfterS = w.Watchdog.StallAfter.Seconds()
			r.Agents, r.Rounds = w.Agents, w.Rounds
		}
	}
	if r.Results, err = results.Read(dir); err != nil {
		// A killed run has no results.json: judge it from its files as diagnose does.
		_, res, derr := diagnose.FromDir(dir)
		if derr != nil {
			return nil, fmt.Errorf("%s: no results.json (%v), and its files cannot be judged: %w", dir, err, derr)
		}
		r.Results = res
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
