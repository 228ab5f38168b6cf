package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReport writes a report of a smoke run, and refuses what is not a run directory with a
// usage error naming it.
func TestReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := execute(t, "run", "--workload", "smoke", "--speedup", "20", "--out", dir)
	// Real time at a speedup: on a loaded machine the verdict may not be healthy; any verdict
	// makes a report.
	require.Contains(t, finished, code, "run: %s %s", stdout, stderr)

	out := filepath.Join(t.TempDir(), "r.html")
	code, stdout, stderr = execute(t, "report", dir, "-o", out)
	require.Equal(t, ExitOK, code, "report: %s %s", stdout, stderr)
	assert.Contains(t, stdout, "report: "+out+" (1 run, ")
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<svg")

	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		// No directory at all.
		{"no args", []string{"report"}, "report takes one or more run directories"},
		// A directory that does not exist.
		{"missing", []string{"report", filepath.Join(dir, "nope")}, "nope: no such file or directory"},
		// A directory without a run.
		{"not a run", []string{"report", t.TempDir()}, "not a run directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := execute(t, append(tc.args, "-o", filepath.Join(t.TempDir(), "r.html"))...)
			assert.Equal(t, ExitUsage, code, "agentsim %v: %s", tc.args, stderr)
			assert.Contains(t, stderr, tc.msg)
		})
	}
}

// TestReportKeepsItsInputs checks that -o never replaces what the report is made from, nor
// a device or directory, and an existing file only with --force.
func TestReportKeepsItsInputs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := execute(t, "run", "--workload", "smoke", "--speedup", "1000", "--out", dir)
	require.Contains(t, finished, code, "run: %s %s", stdout, stderr)
	events := filepath.Join(dir, "events.jsonl")
	before, err := os.ReadFile(events)
	require.NoError(t, err)
	existing := writeFile(t, "old.html", "old")
	for _, tc := range []struct {
		name string
		out  string
		msg  string
	}{
		// A file of the run itself, even with --force.
		{"input", events, "-o " + events + ": is one of the inputs (" + dir + "): want a file outside them"},
		// A device: written in place, it would not be a report.
		{"device", os.DevNull, "-o /dev/null: is a device, not a regular file"},
		// A directory.
		{"directory", t.TempDir(), "is a directory, not a regular file"},
	} {
		code, _, stderr := execute(t, "report", dir, "-o", tc.out, "--force")
		assert.Equal(t, ExitUsage, code, "%s: %s", tc.name, stderr)
		assert.Contains(t, stderr, tc.msg, tc.name)
	}
	after, err := os.ReadFile(events)
	require.NoError(t, err)
	assert.Equal(t, before, after, "events.jsonl is untouched")

	code, _, stderr = execute(t, "report", dir, "-o", existing)
	assert.Equal(t, ExitUsage, code, stderr)
	assert.Contains(t, stderr, "-o "+existing+": exists: pass --force to replace it")
	code, _, stderr = execute(t, "report", dir, "-o", existing, "--force")
	assert.Equal(t, ExitOK, code, stderr)
}
