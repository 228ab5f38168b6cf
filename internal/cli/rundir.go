package cli

import (
	"github.com/spf13/pflag"

	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/internal/rundir"
)

// maxRunDirSuffix bounds the search for a free default run directory name.
const maxRunDirSuffix = 1000

// newRunDir creates the directory a run writes to and returns its path, so that nothing
// recorded is overwritten or mixed with other files:
//
//   - with out (--out) empty, it creates runs/<UTC second>-<name> exclusively; when a run
//     started in the same second holds that name, it takes <name>-2, <name>-3 and so on.
//   - with out set, it creates out (and its parents), or takes it if it exists and is empty.
//     An existing directory that is not empty is refused: it holds a run (which would be
//     overwritten) or other files (which the run's would be mixed into). force takes it
//     anyway, first removing the files of the run it holds.
//
// Refusals are usage errors; a directory that cannot be created is a runtime failure. discard
// removes the directory again if newRunDir created it and it is still empty, and the default
// runs/ beside it if this call created that too: a run that failed before writing anything
// (its server unreachable) leaves no trace.
func newRunDir(out string, force bool, name string, now time.Time) (dir string, discard func(), err error) {
	created := true
	if out == "" {
		_, statErr := os.Stat("runs")
		newParent := errors.Is(statErr, fs.ErrNotExist)
		dir, err = createDefaultRunDir(filepath.Join("runs", now.UTC().Format("20060102T150405Z")+"-"+name))
		if err == nil && newParent {
			return dir, func() { _ = os.Remove(dir); _ = os.Remove("runs") }, nil
		}
	} else {
		dir = out
		created, err = createOrTake(out, force)
	}
	if err != nil {
		return "", nil, err
	}
	if !created {
		return dir, func() {}, nil
	}
	// os.Remove refuses a directory that has entries.
	return dir, func() { _ = os.Remove(dir) }, nil
}

// createOrTake creates out and reports true, or takes it if it exists (see takeExisting).
func createOrTake(out string, force bool) (bool, error) {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return false, runtimeError(fmt.Errorf("create run directory: %w", err))
	}
	err := os.Mkdir(out, 0o755)
	switch {
	case err == nil:
		return true, nil
	case !errors.Is(err, fs.ErrExist):
		return false, runtimeError(fmt.Errorf("create run directory: %w", err))
	}
	return false, takeExisting(out, force)
}

// createDefaultRunDir creates base, or base-2, base-3… when taken, exclusively: of two runs
// started at once, each gets its own directory.
func createDefaultRunDir(base string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return "", runtimeError(fmt.Errorf("create run directory: %w", err))
	}
	for i := 1; i <= maxRunDirSuffix; i++ {
		dir := base
		if i > 1 {
			dir = base + "-" + strconv.Itoa(i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", runtimeError(fmt.Errorf("create run directory: %w", err))
		}
	}
	return "", runtimeError(fmt.Errorf("create run directory: %s and %d others like it exist: name one with --out", base, maxRunDirSuffix-1))
}

// takeExisting decides whether a run may write into the existing path out.
func takeExisting(out string, force bool) error {
	fi, err := os.Stat(out)
	if err != nil {
		return runtimeError(fmt.Errorf("create run directory: %w", err))
	}
	if !fi.IsDir() {
		return usageError(fmt.Errorf("--out %s: not a directory: want a new or empty directory for the run", out))
	}
	empty, err := isEmptyDir(out)
	if err != nil {
		return runtimeError(fmt.Errorf("read run directory: %w", err))
	}
	held := holdsRun(out)
	switch {
	case empty:
		return nil
	case !force && held:
		return usageError(fmt.Errorf("--out %s holds a run: want a new or empty directory (add --force to overwrite that run)", out))
	case !force:
		return usageError(fmt.Errorf("--out %s is not empty: want a new or empty directory, so the run's files are not mixed with others (add --force to write there anyway)", out))
	}
	// Forced: remove the old run's files, so that no file of it outlives the new run (a
	// results.json beside a new events.jsonl would describe the wrong run).
	for _, f := range rundir.Files {
		if err := os.Remove(filepath.Join(out, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return runtimeError(fmt.Errorf("--force: remove the previous run's %s: %w", f, err))
		}
	}
	return nil
}

// holdsRun reports whether dir holds any file a run writes.
func holdsRun(dir string) bool {
	for _, f := range rundir.Files {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// isEmptyDir reports whether dir has no entries.
func isEmptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return false, err
}

// addForceFlag adds --force, which lets --out name a directory that already holds files.
func addForceFlag(f *pflag.FlagSet) {
	f.Bool("force", false, "let --out name a directory that is not empty, replacing the run it holds")
}

// site is what a command that runs agents sets up before they start: its run directory, the
// run's metrics endpoint (nil without --metrics-addr) and the server it talks to.
type site struct {
	dir     string
	discard func() // removes the run directory while nothing has run (see newRunDir)
	metrics *harness.MetricsEndpoint
	target  *target
}

// openSite creates the run directory at out (see newRunDir), serves the run's metrics at
// metricsAddr ("" for none) and starts the target, in that order, so that a refused --out is
// found before anything starts. On failure what was made is undone. close stops the target
// and the metrics endpoint. It also sets the collector's target for the agents to come, unless
// env, the process environment, sets GOGC (tuneGC).
func openSite(c *cobra.Command, env []string, out string, force bool, name, metricsAddr string, tc targetConfig) (*site, error) {
	dir, discard, err := newRunDir(out, force, name, time.Now())
	if err != nil {
		return nil, err
	}
	metrics, err := serveMetrics(c, metricsAddr)
	if err != nil {
		discard()
		return nil, err
	}
	t, err := startTarget(c, tc)
	if err != nil {
		metrics.Close()
		discard()
		return nil, err
	}
	tuneGC(env)
	return &site{dir: dir, discard: discard, metrics: metrics, target: t}, nil
}

// close stops the target, then the metrics endpoint.
func (s *site) close() {
	s.target.stop()
	s.metrics.Close()
}
