// Package diff compares two run directories: every figure of the gate side by side with its
// change and, for latency statistics, the bootstrap confidence interval of that change; it
// refuses runs whose workloads differ in what makes a comparison meaningless.
package diff

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/gate"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// Run is one run directory read back: its workload, results and per-request observations.
type Run struct {
	// Dir is the run directory as named.
	Dir string
	// Workload is the resolved workload its config.yaml recorded.
	Workload *workloads.Workload
	gate.Measurement
}

// ErrNotRun marks a directory that holds no run a diff can read.
var ErrNotRun = errors.New("not a run directory")

// Load reads the run in dir: config.yaml, events.jsonl and results.json, or, for a run killed
// before it wrote results.json, the results its events and samples support (rundir.Open,
// judged by diagnose.Derive). The directory of a compare or a bench sweep holds its runs in
// subdirectories; the error names them.
func Load(dir string) (*Run, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w: want a directory that run, bench, compare or replay wrote", dir, ErrNotRun)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.Events)); errors.Is(err, fs.ErrNotExist) {
		if parts := rundir.Parts(dir); len(parts) > 0 {
			if len(parts) > 3 {
				parts = append(parts[:3], "…")
			}
			return nil, fmt.Errorf("%s holds runs in subdirectories: %w: name one of them, such as %s", dir, ErrNotRun, strings.Join(parts, ", "))
		}
	}
	run, err := rundir.Open(dir, rundir.Options{Results: true, Derive: diagnose.Derive})
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", dir, ErrNotRun, err)
	}
	return &Run{Dir: dir, Workload: run.Workload, Measurement: gate.Measurement{Results: run.Results, Observations: results.ObservationsOf(run.Events)}}, nil
}

// ErrIncomparable marks two runs whose workloads differ in a way that makes comparing their
// figures meaningless.
var ErrIncomparable = errors.New("the runs are not comparable")

// Comparable returns an error wrapping ErrIncomparable when the workloads of base and new
// differ in what decides the work done: the number of agents, of rounds, or the model.
func Comparable(base, new *workloads.Workload) error {
	var diffs []string
	add := func(key string, a, b any) {
		if a != b {
			diffs = append(diffs, fmt.Sprintf("%s %v → %v", key, a, b))
		}
	}
	add("agents", base.Agents, new.Agents)
	add("rounds", base.Rounds, new.Rounds)
	add("model", base.Model, new.Model)
	if len(diffs) > 0 {
		return fmt.Errorf("%w: their workloads differ in %s; a comparison needs the same agents, rounds and model",
			ErrIncomparable, strings.Join(diffs, ", "))
	}
	return nil
}

// Differences lists every workload key whose value differs between base and new, as "key
// old → new", in schema order; thresholds are left out (the gate, not the workload).
func Differences(base, new *workloads.Workload) []string {
	a, b := flat(base), flat(new)
	var out []string
	for _, k := range workloads.Keys() {
		if k != gate.Key && a[k] != b[k] {
			out = append(out, fmt.Sprintf("%s %s → %s", k, a[k], b[k]))
		}
	}
	return out
}

// flat renders each key of w as its YAML text.
func flat(w *workloads.Workload) map[string]string {
	out := map[string]string{}
	data, err := w.YAML()
	if err != nil {
		return out
	}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 {
		return out
	}
	var walk func(prefix string, n *yaml.Node)
	walk = func(prefix string, n *yaml.Node) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, v := prefix+n.Content[i].Value, n.Content[i+1]
			if v.Kind == yaml.MappingNode && !slices.Contains(workloads.Keys(), key) && key != gate.Key {
				walk(key+".", v)
				continue
			}
			b, _ := yaml.Marshal(v)
			out[key] = strings.TrimSpace(string(b))
		}
	}
	walk("", root.Content[0])
	return out
}
