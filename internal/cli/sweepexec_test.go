package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/sweep"
	"github.com/agentsim/agentsim/results"
)

// TestSweepExecCells sweeps the test harness as exec cells over the healthy simulator and the
// long-context wedge at a low threshold: each run is an agentsim exec, and the table has the
// healthy cell progressing and the wedged one stalled-streams.
func TestSweepExecCells(t *testing.T) {
	useTestBinary(t)
	h := buildHarness(t)
	dir := filepath.Join(t.TempDir(), "s")
	code, out, errOut := execute(t, "sweep", "--agents", "2", "--speedup", "20", "--set", "watchdog.stall_after=20s", "--set", "watchdog.hang_after=60s",
		"--sim-fault", "none,long-context-wedge", "--sim-fault-param", "long-context-wedge.threshold_tokens=250",
		"--parallel", "2", "--expect", "healthy,slow", "--out", dir, "--", h, "-idle-timeout", "30s")
	require.Equal(t, ExitVerdict, code, "the wedged cell falls outside healthy,slow\n%s\n%s", out, errOut)
	assert.Contains(t, out, "fault=long-context-wedge: 1/1 stalled-streams (not stalled-streams)")

	plan, _, err := sweep.ReadPlan(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{h, "-idle-timeout", "30s"}, plan.Base.Exec)
	_, sum, err := sweep.Collect(dir)
	require.NoError(t, err)
	require.Len(t, sum.Cells, 2)
	for kind := range sum.Cells[0].Verdicts {
		assert.True(t, kind.Progressing(), "the healthy cell's verdict %s", kind)
	}
	assert.Equal(t, map[results.VerdictKind]int{results.StalledStreams: 1}, sum.Cells[1].Verdicts)
	res, err := results.Read(filepath.Join(dir, plan.Runs[1].Dir))
	require.NoError(t, err)
	assert.Equal(t, "exec", res.Command)
	assert.FileExists(t, filepath.Join(dir, plan.Runs[1].Dir, "procs", "1.out"), "two harness processes ran")

	code, out, _ = execute(t, "sweep", "collect", dir)
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, out, "1/1 stalled-streams")
}

// TestSweepExecRefused checks that the settings of run that exec has not, and a harness that
// is not found, are refused before anything runs.
func TestSweepExecRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	code, _, errOut := execute(t, "sweep", "--workload", "smoke", "--fit-context", "--out", dir, "--", "./no-such-harness")
	assert.Equal(t, ExitUsage, code)
	for _, want := range []string{
		"--workload: exec cells (a command after --) run agentsim exec, which has no --workload",
		"--fit-context: exec cells (a command after --) run agentsim exec, which has no --fit-context",
		`the harness command after --: command "./no-such-harness"`,
	} {
		assert.Contains(t, errOut, want)
	}
	assert.NoDirExists(t, dir)

	code, _, errOut = execute(t, "sweep", "--out", dir, "--")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "-- is followed by no command")
	code, _, errOut = execute(t, "sweep", "extra", "--", "h")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "sweep takes no arguments before --")
}

// TestSweepExecCellPod plans exec cells for Kubernetes, where the harness need not be on this
// machine, and runs one index as a pod would: the harness processes get the pod's environment.
func TestSweepExecCellPod(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	code, out, errOut := execute(t, "sweep", "--agents", "1", "--speedup", "20", "--out", dir, "--emit", "k8s", "--", "harness-in-the-image")
	require.Equal(t, ExitOK, code, "%s\n%s", out, errOut)
	plan, _, err := sweep.ReadPlan(dir)
	require.NoError(t, err)
	assert.Equal(t, "exec", plan.RunArgs(plan.Runs[0], dir)[0])

	h := buildHarness(t)
	dir = filepath.Join(t.TempDir(), "s")
	code, out, errOut = execute(t, "sweep", "--agents", "1", "--speedup", "20", "--out", dir, "--emit", "k8s",
		"--", "sh", "-c", `echo "mark=$SWEEP_CELL_MARK" >&2; exec "$0" "$@"`, h, "-idle-timeout", "30s")
	require.Equal(t, ExitOK, code, "%s\n%s", out, errOut)
	t.Setenv("SWEEP_CELL_MARK", "kept")
	code, out, errOut = execute(t, "sweep", "cell", "--plan", dir, "--index", "0")
	require.Equal(t, ExitOK, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "agentsim exec --set agents=1")
	b, err := os.ReadFile(filepath.Join(dir, "cells", "0000-none-seed1", "procs", "0.err"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "mark=kept")
}
