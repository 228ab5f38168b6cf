package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/sweep"
	"github.com/agentsim/agentsim/results"
)

// useTestBinary makes local sweeps start this test binary as agentsim (see TestMain).
func useTestBinary(t *testing.T) {
	t.Helper()
	old := sweepProcess
	sweepProcess = func() (string, []string, []string, error) {
		return os.Args[0], []string{"--"}, append(os.Environ(), "AGENTSIM_TEST_MAIN=1"), nil
	}
	t.Cleanup(func() { sweepProcess = old })
}

// smokeSweep is a small, fast sweep: 2 cells × 2 seeds of the smoke workload, one of them
// wedged.
func smokeSweep(dir string, extra ...string) []string {
	return append([]string{"sweep", "--workload", "smoke", "--speedup", "25", "--sim-fault", "none,long-context-wedge",
		"--sim-fault-param", "long-context-wedge.threshold_tokens=1000", "--seeds", "1-2", "--out", dir}, extra...)
}

// TestSweepRuns runs a small sweep through the per-index subprocesses and checks its table,
// its files and --expect.
func TestSweepRuns(t *testing.T) {
	useTestBinary(t)
	dir := filepath.Join(t.TempDir(), "s")
	code, out, errOut := execute(t, smokeSweep(dir, "--parallel", "2", "--expect", "healthy,slow")...)
	assert.Equal(t, ExitVerdict, code, "the wedged cell falls outside healthy,slow\n%s\n%s", out, errOut)
	assert.Contains(t, out, "2/2 healthy")
	assert.Contains(t, out, "2/2 deadlock")
	assert.Contains(t, out, "outside --expect healthy,slow:\n  fault=long-context-wedge: 2/2 deadlock (not deadlock)")
	for _, f := range []string{sweep.PlanFile, sweep.TableFile, sweep.CSVFile, sweep.JSONFile, sweep.HTMLFile} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	_, sum, err := sweep.Collect(dir)
	require.NoError(t, err)
	require.Len(t, sum.Cells, 2)
	assert.Equal(t, map[results.VerdictKind]int{results.Healthy: 2}, sum.Cells[0].Verdicts)
	assert.Nil(t, sum.Cells[0].FirstStallS, "a healthy cell has no stall")
	require.NotNil(t, sum.Cells[1].FirstStallS, "the wedged cell stalls")
	assert.Empty(t, sum.NotRun)

	// Each run records the command that makes it again, as agentsim run.
	res, err := results.Read(filepath.Join(dir, sum.Cells[1].RunList[0].Dir))
	require.NoError(t, err)
	assert.Contains(t, res.Reproduce.Command, "agentsim run --workload smoke")
	assert.Contains(t, res.Reproduce.Command, "--sim-fault long-context-wedge")

	// collect builds the same table from the directories.
	code, out2, _ := execute(t, "sweep", "collect", dir)
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, out2, "2/2 deadlock")
}

// cancelOn cancels a context when a line containing marker is written.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel func()
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.marker) {
		c.cancel()
	}
	return len(p), nil
}

// TestSweepInterruptResume interrupts a sweep after its first run, checks that it keeps the
// finished run and says which did not run, then resumes it with the same command.
func TestSweepInterruptResume(t *testing.T) {
	useTestBinary(t)
	dir := filepath.Join(t.TempDir(), "s")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelOn{marker: "[1/4]", cancel: cancel}
	var errOut bytes.Buffer
	code := Execute(ctx, smokeSweep(dir, "--parallel", "1"), out, &errOut)
	assert.Equal(t, ExitInterrupted, code, "%s\n%s", out.buf.String(), errOut.String())
	assert.Contains(t, out.buf.String(), "3 runs did not finish (indices 1-3)")
	assert.Contains(t, errOut.String(), "to resume: agentsim sweep --workload smoke")
	first := filepath.Join(dir, "cells", "0000-none-seed1", "results.json")
	before, err := os.ReadFile(first)
	require.NoError(t, err)

	code, out2, errOut2 := execute(t, smokeSweep(dir, "--parallel", "2")...)
	assert.Equal(t, ExitOK, code, "%s\n%s", out2, errOut2)
	assert.Contains(t, out2, "4 runs (2 cells × 2 seeds) in "+dir+"; 3 to run")
	after, err := os.ReadFile(first)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the finished run is kept")
	assert.NotContains(t, out2, "did not finish")

	// A different plan does not resume it.
	code, _, errOut3 := execute(t, smokeSweep(dir, "--agents", "2")...)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut3, "holds a sweep planned otherwise")
}

// TestSweepInvalidGrid checks that every problem of a grid is reported at once, before
// anything runs.
func TestSweepInvalidGrid(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	code, _, errOut := execute(t, "sweep", "--workload", "smoke", "--out", dir,
		"--grid", "pacer.kind=slots,fifo", // a value the key refuses
		"--grid", "pacer.slotz=1,2", // an unknown key
		"--grid", "agents=", // an empty list
		"--grid", "rounds=1,,2", // an empty value
		"--seeds", "3-1", // a reversed range
		"--sim-fault", "none,wedge", // an unknown fault
		"--expect", "fine") // an unknown verdict
	assert.Equal(t, ExitUsage, code)
	for _, want := range []string{
		`--grid pacer.kind=fifo: pacer.kind: "fifo" is not allowed`,
		`--grid pacer.slotz=1,2: unknown key "pacer.slotz"; did you mean "pacer.slots"?`,
		"--grid agents=: agents: the list of values is empty",
		`--grid rounds=1,,2: rounds: "1,,2" holds an empty value`,
		`--seeds: "3-1" is not allowed: a range goes from low to high`,
		`--sim-fault "wedge": unknown fault`,
		`--expect: "fine" is not allowed`,
	} {
		assert.Contains(t, errOut, want)
	}
	assert.NoDirExists(t, dir, "nothing runs, nothing is created")
}

// TestSweepTooBigNeverBuilt gives a grid of ten million runs, a thousand times the cap: it is
// refused from the lengths of its axes, before its plan or its cells are built (a plan of
// that size took 2.67 GB), and an empty --grid is refused rather than dropped.
func TestSweepTooBigNeverBuilt(t *testing.T) {
	values := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if i > 1 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(i))
		}
		return b.String()
	}
	dir := filepath.Join(t.TempDir(), "s")
	agents, rounds := "agents="+values(100), "rounds="+values(1000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code, _, errOut := execute(t, "sweep", "--workload", "smoke", "--out", dir, "--grid", agents, "--grid", rounds, "--seeds", "1-100")
	runtime.ReadMemStats(&after)
	assert.Equal(t, ExitUsage, code, errOut)
	assert.Contains(t, errOut, "the sweep has 10000000 (100 × 1000 × 1 fault × 100 seeds) runs: want at most 10000")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated to refuse it")
	assert.NoDirExists(t, dir)

	code, _, errOut = execute(t, "sweep", "--workload", "smoke", "--out", dir, "--grid", "")
	assert.Equal(t, ExitUsage, code, errOut)
	assert.Contains(t, errOut, `--grid: "" is not allowed: want grid dimension key=v1,v2,…`)
	assert.NoDirExists(t, dir)
}

// TestSweepCellAndCollect plans a sweep for Kubernetes, runs one index as a pod would (its
// index from JOB_COMPLETION_INDEX), and collects the table.
func TestSweepCellAndCollect(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	code, out, errOut := execute(t, smokeSweep(dir, "--emit", "k8s", "--image", "agentsim:test")...)
	require.Equal(t, ExitOK, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "kubectl apply -f "+filepath.Join(dir, "job.yaml"))
	job, err := os.ReadFile(filepath.Join(dir, sweep.JobFile))
	require.NoError(t, err)
	assert.Contains(t, string(job), "completionMode: Indexed")
	assert.Contains(t, string(job), "completions: 4")
	assert.NoDirExists(t, filepath.Join(dir, "cells", "0001-none-seed2"), "--emit runs nothing")

	t.Setenv("JOB_COMPLETION_INDEX", "1")
	code, out, errOut = execute(t, "sweep", "cell", "--plan", filepath.Join(dir, sweep.PlanFile))
	require.Equal(t, ExitOK, code, "%s\n%s", out, errOut)
	assert.FileExists(t, filepath.Join(dir, "cells", "0001-none-seed2", "results.json"))
	code, out, _ = execute(t, "sweep", "cell", "--plan", dir)
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, out, "already finished")

	code, out, _ = execute(t, "sweep", "collect", dir, "--expect", "healthy")
	assert.Equal(t, ExitOK, code, out)
	assert.Contains(t, out, "1/2 healthy 1/2 not run")
	assert.Contains(t, out, "3 runs did not finish (indices 0,2-3)")

	code, _, errOut = execute(t, "sweep", "cell", "--plan", dir, "--index", "9")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "index 9 is not allowed: the plan has runs 0 to 3")
}
