package diagnose

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrNoEvents marks a run directory whose events.jsonl holds no event: nothing to judge.
var ErrNoEvents = errors.New("nothing recorded")

// runFiles are the files that make a directory a run directory.
var runFiles = []string{EventsFile, SamplesFile, ConfigFile}

// ErrNotRunDir marks a directory that holds no run: empty, someone else's, or the parent of
// runs (a compare or a bench sweep directory). Its message says which and, for a parent,
// where its runs are.
var ErrNotRunDir = errors.New("not a run directory")

// checkRunDir returns nil when dir holds at least one of a run's files, and otherwise an
// ErrNotRunDir error saying what dir is: empty, foreign, a compare directory (pointing to its
// agentic/ part) or a directory of runs such as a bench sweep (pointing to one of them).
func checkRunDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return readError(dir, err)
	}
	var runs []string // subdirectories that are runs
	for _, e := range entries {
		if slices.Contains(runFiles, e.Name()) {
			return nil
		}
		if e.IsDir() && exists(filepath.Join(dir, e.Name(), EventsFile)) {
			runs = append(runs, e.Name())
		}
	}
	switch {
	case slices.Contains(runs, "agentic"):
		return fmt.Errorf("%w: %s is a compare directory; its agentic run is %s (agentsim diagnose %s), the synthetic bench %s",
			ErrNotRunDir, dir, filepath.Join(dir, "agentic"), filepath.Join(dir, "agentic"), filepath.Join(dir, "synthetic"))
	case len(runs) > 0:
		paths := make([]string, len(runs))
		for i, r := range runs {
			paths[i] = filepath.Join(dir, r)
		}
		return fmt.Errorf("%w: %s holds runs, not one (a bench sweep holds one per concurrency): diagnose one of %s",
			ErrNotRunDir, dir, strings.Join(paths, ", "))
	case len(entries) == 0:
		return fmt.Errorf("%w: %s is empty (%s: no such file or directory; no %s or %s either): want a directory a run wrote",
			ErrNotRunDir, dir, ConfigFile, EventsFile, SamplesFile)
	}
	return fmt.Errorf("%w: %s holds none of %s: want a directory a run wrote (runs/<UTC time>-<workload>)",
		ErrNotRunDir, dir, strings.Join(runFiles, ", "))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
