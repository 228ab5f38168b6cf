package sweep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeCell stands in for `agentsim sweep cell`: it writes the run's results.json, with a
// harness lag warning unless it runs the index again (--again).
const fakeCell = `plan=$4; idx=$6; again=$7
dir=$(dirname "$plan")/cells/$(printf %04d "$idx")-none-seed$((idx+1))
mkdir -p "$dir"
w="harness lag p99 9 s (simulated) exceeds 6.0 s"
if [ "$again" = "--again" ]; then w=""; fi
printf '{"schema":"agentsim.results/v1","verdict":{"kind":"healthy"},"wall_seconds":0.1,"harness":{"lag_seconds":{"p50":0,"p99":9,"max":9,"n":10},"warning":"%s"}}' "$w" > "$dir/results.json"
`

func fakeLocal(t *testing.T, parallel int, auto bool) (*Local, *strings.Builder) {
	t.Helper()
	dir := t.TempDir()
	p := NewPlan("", Base{Workload: "smoke", Name: "smoke"}, nil, []string{NoFault}, []int64{1, 2, 3, 4})
	require.NoError(t, p.Write(dir))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, LogsDir), 0o755))
	var out strings.Builder
	return &Local{Plan: p, Dir: dir, Exe: "/bin/sh", Args: []string{"-c", fakeCell, "sh"}, Parallel: parallel, Auto: auto, Out: &out}, &out
}

// TestLocalLowersParallelOnLag checks that, choosing the number at once itself, a local sweep
// halves it when a run's harness lag distorted its figures, and makes that run again.
func TestLocalLowersParallelOnLag(t *testing.T) {
	l, out := fakeLocal(t, 2, true)
	o := l.Run(context.Background(), []int{0, 1, 2, 3})
	assert.True(t, o.Lowered)
	assert.Equal(t, 1, o.Parallel)
	assert.ElementsMatch(t, []int{0, 1, 2, 3}, o.Finished)
	assert.Contains(t, out.String(), "the harness lag distorted it at 2 runs at once; running it again, and the rest, 1 at once")
	assert.Empty(t, o.NotRun)
}

// TestLocalKeepsGivenParallel checks that a number at once given by the user is kept: the runs
// are only marked (by their results.json, for the table).
func TestLocalKeepsGivenParallel(t *testing.T) {
	l, out := fakeLocal(t, 2, false)
	o := l.Run(context.Background(), []int{0, 1, 2, 3})
	assert.False(t, o.Lowered)
	assert.Equal(t, 2, o.Parallel)
	assert.Len(t, o.Finished, 4)
	assert.NotContains(t, out.String(), "running it again")
}

// TestLocalInterruptedBeforeStart checks that nothing starts once the sweep is interrupted.
func TestLocalInterruptedBeforeStart(t *testing.T) {
	l, _ := fakeLocal(t, 2, true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := l.Run(ctx, []int{0, 1, 2, 3})
	assert.Equal(t, []int{0, 1, 2, 3}, o.NotRun)
	assert.Empty(t, o.Finished)
}

// TestLocalTimeLeft checks the estimate of the wall time left: the mean wall time of the runs
// that ended with results, times the waves of Parallel runs not ended yet.
func TestLocalTimeLeft(t *testing.T) {
	for _, tc := range []struct {
		o    Outcome
		want string // "" means no estimate
	}{
		// No run has a wall time yet: no estimate.
		{Outcome{Parallel: 2, total: 4, ended: 1}, ""},
		// 8 runs left 4 at once, 10 s each: two waves.
		{Outcome{Parallel: 4, total: 10, ended: 2, timed: 2, wallS: 20}, ", ~20 s wall left"},
		// Fewer left than at once: one wave, the mean.
		{Outcome{Parallel: 4, total: 10, ended: 9, timed: 9, wallS: 90}, ", ~10 s wall left"},
		// One at a time: each run left its mean; minutes read as minutes.
		{Outcome{Parallel: 1, total: 23, ended: 3, timed: 3, wallS: 90}, ", ~10 min wall left"},
		// A failed run without a wall time counts as ended, not in the mean.
		{Outcome{Parallel: 1, total: 4, ended: 2, timed: 1, wallS: 5}, ", ~10 s wall left"},
		// None left.
		{Outcome{Parallel: 2, total: 4, ended: 4, timed: 4, wallS: 40}, ""},
	} {
		assert.Equal(t, tc.want, tc.o.left(), "%+v.left()", tc.o)
	}
	l, out := fakeLocal(t, 1, false)
	l.Run(context.Background(), []int{0, 1, 2})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3, out.String())
	assert.Contains(t, lines[0], "(0.1 s wall), ~1 s wall left", "two runs of 0.1 s left: about a second, not 0 s")
	assert.NotContains(t, lines[2], "left", "the last run: nothing left")
}
