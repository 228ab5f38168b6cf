package diagnose

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentsim/agentsim/internal/rundir"
)

// ErrNoEvents marks a run directory whose events.jsonl holds no event: nothing to judge.
var ErrNoEvents = errors.New("nothing recorded")

// runFiles are the files that make a directory a run directory to diagnosis: the ones it
// reads (a results.json alone is also the top of a compare or a bench sweep).
var runFiles = []string{rundir.Events, rundir.Samples, rundir.Config}

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
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == dir {
			err = pe.Err // the path is said once, below
		}
		return fmt.Errorf("read %s: %w", dir, err)
	}
	for _, e := range entries {
		if slices.Contains(runFiles, e.Name()) {
			return nil
		}
	}
	runs := rundir.Parts(dir)
	agentic := filepath.Join(dir, rundir.Agentic)
	switch {
	case slices.Contains(runs, agentic):
		return fmt.Errorf("%w: %s is a compare directory; its agentic run is %s (agentsim diagnose %s), the synthetic bench %s",
			ErrNotRunDir, dir, agentic, agentic, filepath.Join(dir, rundir.Synthetic))
	case len(runs) > 0:
		return fmt.Errorf("%w: %s holds runs, not one (a bench sweep holds one per concurrency): diagnose one of %s",
			ErrNotRunDir, dir, strings.Join(runs, ", "))
	case len(entries) == 0:
		return fmt.Errorf("%w: %s is empty (%s: no such file or directory; no %s or %s either): want a directory a run wrote",
			ErrNotRunDir, dir, rundir.Config, rundir.Events, rundir.Samples)
	}
	return fmt.Errorf("%w: %s holds none of %s: want a directory a run wrote (runs/<UTC time>-<workload>)",
		ErrNotRunDir, dir, strings.Join(runFiles, ", "))
}
