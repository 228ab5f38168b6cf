package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaultRunDirExclusive checks that runs started in the same second get directories of
// their own: the second and third take -2 and -3.
func TestDefaultRunDirExclusive(t *testing.T) {
	t.Chdir(t.TempDir())
	now := time.Date(2026, 11, 30, 19, 45, 16, 0, time.UTC)
	want := []string{"20261130T194516Z-smoke", "20261130T194516Z-smoke-2", "20261130T194516Z-smoke-3"}
	for _, w := range want {
		dir, _, err := newRunDir("", false, "smoke", now)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join("runs", w), dir, "newRunDir(\"\", false, smoke, %s)", now)
		assert.DirExists(t, dir)
	}
}

// TestOutRefusesRunsAndOtherFiles checks --out: a new directory (and its parents) is
// created, an empty one taken; one that holds a run or other files, or a file, is refused
// with exit 2 unless --force, which first removes the old run's files.
func TestOutRefusesRunsAndOtherFiles(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, files ...string) string {
		dir := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for _, f := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("old\n"), 0o644))
		}
		return dir
	}
	file := filepath.Join(root, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct {
		name  string
		out   string
		force bool
		err   string // "" when taken
	}{
		// New, with parents.
		{"new", filepath.Join(root, "a", "b", "run"), false, ""},
		// Empty: taken as is.
		{"empty", mk("empty"), false, ""},
		// Holding a run: it would be overwritten.
		{"run", mk("run", "events.jsonl", "results.json"), false, "holds a run: want a new or empty directory (add --force to overwrite that run)"},
		// Holding other files: the run's would be mixed in.
		{"other files", mk("notes", "notes.txt"), false, "is not empty: want a new or empty directory"},
		{"a file", file, false, "not a directory"},
		// --force takes a directory holding a run or other files.
		{"force run", mk("frun", "events.jsonl", "results.json", "config.yaml", "samples.jsonl", "keep.txt"), true, ""},
		{"force other files", mk("fnotes", "notes.txt"), true, ""},
	} {
		dir, _, err := newRunDir(tc.out, tc.force, "smoke", time.Now())
		if tc.err != "" {
			require.Error(t, err, tc.name)
			assert.Contains(t, err.Error(), tc.err, tc.name)
			assert.Equal(t, ExitUsage, exitCode(err), tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.out, dir, tc.name)
		assert.DirExists(t, dir, tc.name)
	}
	// The forced run directory lost the old run's files, and nothing else.
	entries, err := os.ReadDir(filepath.Join(root, "frun"))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "keep.txt", entries[0].Name())
}

// TestRunOutTwice runs agentsim twice into one --out directory: the second run is refused
// with exit 2 and leaves the first run intact; with --force it replaces it.
func TestRunOutTwice(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	wl := writeFile(t, "tiny.yaml", tinyShape)
	args := []string{"run", "--workload", wl, "--speedup", "1000", "--out", dir}
	code, _, stderr := execute(t, args...)
	require.Contains(t, finished, code, "first run; stderr: %s", stderr)
	first, err := os.ReadFile(filepath.Join(dir, "results.json"))
	require.NoError(t, err)

	code, _, stderr = execute(t, args...)
	assert.Equal(t, ExitUsage, code, "second run; stderr: %s", stderr)
	assert.Contains(t, stderr, "--out "+dir+" holds a run")
	again, err := os.ReadFile(filepath.Join(dir, "results.json"))
	require.NoError(t, err)
	assert.Equal(t, first, again, "the refused run must not touch the first")

	code, _, stderr = execute(t, append(args, "--force", "--seed", "9")...)
	require.Contains(t, finished, code, "forced run; stderr: %s", stderr)
	cfg, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(cfg), "\nseed: 9\n", "config.yaml is the forced run's")
}

// TestFailedRunLeavesNoDirectory checks that a run whose server is unreachable exits 1 and
// leaves no empty run directory behind, nor the runs/ directory it created.
func TestFailedRunLeavesNoDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	code, _, stderr := execute(t, "run", "--workload", "smoke", "--server", "http://"+freeAddr(t))
	assert.Equal(t, ExitRuntime, code, "stderr: %s", stderr)
	assert.NoDirExists(t, "runs", "no run directory for a run that never started, nor the runs/ this run created for it")
}

// TestInterruptedWhileLoading checks that a Ctrl-C that arrives while the workload loads ends
// the command with exit 130 before anything starts: no simulator, no run directory.
func TestInterruptedWhileLoading(t *testing.T) {
	t.Chdir(t.TempDir())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out, errOut bytes.Buffer
	code := Execute(ctx, []string{"run", "--workload", "smoke"}, &out, &errOut)
	assert.Equal(t, ExitInterrupted, code, "stderr: %s", errOut.String())
	assert.Contains(t, errOut.String(), "interrupted before the run started")
	assert.NoDirExists(t, "runs")
}
