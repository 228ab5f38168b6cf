package sweep

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNewPlan checks the run order (first dimension slowest, seed fastest), the run
// directories and the run command lines.
func TestNewPlan(t *testing.T) {
	p := NewPlan("agentsim sweep", Base{Workload: "smoke", Name: "smoke", SimProfile: "dsv4-pd", Speedup: 50,
		Set: []Set{{"rounds", "3"}}, FaultParams: []string{"long-context-wedge.threshold_tokens=1000", "drop.fraction=0.5"}},
		[]Dimension{{"pacer.kind", []string{"slots", "aimd"}}}, []string{"none", "long-context-wedge"}, []int64{1, 2})
	require.Len(t, p.Runs, 8)
	assert.Equal(t, Run{Index: 3, Values: []string{"slots"}, Fault: "long-context-wedge", Seed: 2,
		Dir: "cells/0003-slots-long-context-wedge-seed2"}, p.Runs[3])
	assert.Equal(t, "aimd", p.Runs[4].Values[0])
	assert.Equal(t, "pacer.kind=slots fault=long-context-wedge", p.Cell(p.Runs[3]))
	assert.Equal(t, []string{"run", "--workload", "smoke", "--set", "rounds=3", "--set", "pacer.kind=slots", "--set", "seed=2",
		"--sim-profile", "dsv4-pd", "--speedup", "50", "--sim-seed", "2", "--sim-fault", "long-context-wedge",
		"--sim-fault-param", "long-context-wedge.threshold_tokens=1000",
		"--out", filepath.Join("/s", "cells", "0003-slots-long-context-wedge-seed2"), "--force"}, p.RunArgs(p.Runs[3], "/s"))

	// At --speedup max every run goes at max, starting where the plan's clock does.
	m := NewPlan("", Base{Workload: "smoke", Name: "smoke", SimProfile: "ideal", Speedup: 20, SpeedupMax: true}, nil, []string{"none"}, []int64{1})
	assert.Equal(t, []string{"run", "--workload", "smoke", "--set", "seed=1", "--sim-profile", "ideal", "--speedup", "max", "--sim-seed", "1",
		"--out", filepath.Join("/s", "cells", "0000-none-seed1"), "--force"}, m.RunArgs(m.Runs[0], "/s"))

	// A fixed simulator seed, an external server and copied inputs.
	seed := uint64(7)
	q := NewPlan("", Base{Workload: "inputs/workload.yaml", Name: "w", Config: "inputs/config.yaml", SimSeed: &seed,
		Server: "http://h:8000"}, nil, []string{"none"}, []int64{1})
	assert.Equal(t, []string{"run", "--workload", filepath.Join("/s", "inputs", "workload.yaml"), "--config", filepath.Join("/s", "inputs", "config.yaml"),
		"--set", "seed=1", "--server", "http://h:8000", "--out", filepath.Join("/s", "cells", "0000-none-seed1"), "--force"}, q.RunArgs(q.Runs[0], "/s"))
}

// TestExecRunArgs checks that the runs of exec cells are `agentsim exec` command lines with
// run's settings, no --workload, and the harness command after --.
func TestExecRunArgs(t *testing.T) {
	p := NewPlan("agentsim sweep -- ./h -x", Base{Exec: []string{"./h", "-x", "{base_url}"}, Name: "exec", Config: "inputs/config.yaml",
		SimProfile: "dsv4-pd", Speedup: 20, Set: []Set{{"agents", "2"}}, FaultParams: []string{"long-context-wedge.threshold_tokens=250"}},
		[]Dimension{{"watchdog.hang_after", []string{"60s"}}}, []string{"none", "long-context-wedge"}, []int64{3})
	require.Len(t, p.Runs, 2)
	assert.Equal(t, []string{"exec", "--config", filepath.Join("/s", "inputs", "config.yaml"), "--set", "agents=2",
		"--set", "watchdog.hang_after=60s", "--set", "seed=3",
		"--sim-profile", "dsv4-pd", "--speedup", "20", "--sim-seed", "3", "--sim-fault", "long-context-wedge",
		"--sim-fault-param", "long-context-wedge.threshold_tokens=250",
		"--out", filepath.Join("/s", "cells", "0001-60s-long-context-wedge-seed3"), "--force", "--", "./h", "-x", "{base_url}"},
		p.RunArgs(p.Runs[1], "/s"))

	q := NewPlan("", Base{Exec: []string{"h"}, Name: "exec", Server: "http://h:8000", MetricsURLs: []string{"http://h:9000/metrics"}},
		nil, []string{"none"}, []int64{1})
	assert.Equal(t, []string{"exec", "--set", "seed=1", "--server", "http://h:8000", "--metrics-url", "http://h:9000/metrics",
		"--out", filepath.Join("/s", "cells", "0000-none-seed1"), "--force", "--", "h"}, q.RunArgs(q.Runs[0], "/s"))
	assert.False(t, q.Same(NewPlan("", Base{Exec: []string{"h", "-v"}, Name: "exec", Server: "http://h:8000",
		MetricsURLs: []string{"http://h:9000/metrics"}}, nil, []string{"none"}, []int64{1})), "another harness command is another plan")
}

// TestPlanRoundTrip checks that a written plan reads back the same, and that another grid is
// not the same plan.
func TestPlanRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := NewPlan("agentsim sweep --seeds 1-2", Base{Workload: "smoke", Name: "smoke"}, nil, []string{"none"}, []int64{1, 2})
	require.NoError(t, p.Write(dir))
	back, planDir, err := ReadPlan(dir)
	require.NoError(t, err)
	assert.Equal(t, dir, planDir)
	assert.True(t, p.Same(back))
	other := NewPlan("agentsim sweep --seeds 1-3", Base{Workload: "smoke", Name: "smoke"}, nil, []string{"none"}, []int64{1, 2, 3})
	assert.False(t, p.Same(other))

	_, _, err = ReadPlan(t.TempDir())
	assert.ErrorContains(t, err, "no sweep plan there")
}
