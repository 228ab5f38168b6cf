package rundir

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentsim/agentsim/results"
)

// The files of a run directory.
const (
	// Events is the run's events, one events.Event a line, appended as they happen.
	Events = "events.jsonl"
	// Samples is the run's samples, one events.Sample per sample interval.
	Samples = "samples.jsonl"
	// Results is results.json, written at the end of the run (package results writes and
	// reads it).
	Results = results.File
	// Config is the resolved workload the run used, secrets redacted.
	Config = "config.yaml"
	// Record marks the directory of a watched recording (agentsim record --watch): its
	// events are a recording proxy's view of a real harness (Run.Proxy).
	Record = "record.json"
)

// Files are the files run, bench, compare and replay write into a run directory, in the order
// docs/files.md lists them; a directory that holds any of them holds a run.
var Files = []string{Events, Samples, Results, Config}

// The parts of a compare directory: each a run directory of its own, beside compare's
// results.json; results.json names its parts by the same words.
const (
	// Synthetic is compare's synthetic bench, run first.
	Synthetic = "synthetic"
	// Agentic is compare's agentic run of the workload.
	Agentic = "agentic"
)

// BenchTest is the subdirectory of a bench sweep's test of n requests at once ("n16"), a run
// directory of its own beside the sweep's results.json.
func BenchTest(n int) string { return fmt.Sprintf("n%d", n) }

// Parts returns the subdirectories of dir that hold a run (their own Events file) — a
// compare's Synthetic and Agentic, a bench sweep's BenchTest directories — as paths under
// dir: compare's synthetic part first, as compare runs it, the others in name order. It
// returns none when dir holds none or cannot be read.
func Parts(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var parts []string
	for _, e := range entries {
		if e.IsDir() && exists(filepath.Join(dir, e.Name(), Events)) {
			parts = append(parts, filepath.Join(dir, e.Name()))
		}
	}
	slices.SortStableFunc(parts, func(a, b string) int {
		switch {
		case filepath.Base(a) == Synthetic && filepath.Base(b) != Synthetic:
			return -1
		case filepath.Base(b) == Synthetic && filepath.Base(a) != Synthetic:
			return 1
		}
		return 0
	})
	return parts
}

// exists reports whether path names a file or directory that can be stat'ed.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
