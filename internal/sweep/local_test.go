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
