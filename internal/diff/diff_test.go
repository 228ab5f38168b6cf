package diff

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/gate"
	"github.com/agentsim/agentsim/workloads"
)

func load(t *testing.T, over ...workloads.Override) *workloads.Workload {
	t.Helper()
	w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke", Overrides: over})
	require.NoError(t, err)
	return w
}

func set(key, value string) workloads.Override {
	return workloads.Override{Key: key, Value: value, Source: "--set"}
}

// TestComparable checks which differences make two runs incomparable: agents, rounds, model;
// and that others (seed, pacer) do not.
func TestComparable(t *testing.T) {
	base := load(t)
	for _, tc := range []struct {
		name string
		over []workloads.Override
		want string // "" comparable
	}{
		{"same", nil, ""},
		{"another seed and pacer", []workloads.Override{set("seed", "7"), set("pacer.kind", "slots"), set("pacer.slots", "2")}, ""},
		{"agents", []workloads.Override{set("agents", "8")}, "agents 4 → 8"},
		{"rounds and model", []workloads.Override{set("rounds", "3"), set("model", "other")}, "rounds 2 → 3, model deepseek-v4-flash → other"},
	} {
		err := Comparable(base, load(t, tc.over...))
		if tc.want == "" {
			assert.NoError(t, err, tc.name)
			continue
		}
		assert.True(t, errors.Is(err, ErrIncomparable), "%s: %v", tc.name, err)
		assert.ErrorContains(t, err, "their workloads differ in "+tc.want, tc.name)
	}
}

// TestDifferences checks the list of differing keys diff prints above its table.
func TestDifferences(t *testing.T) {
	base := load(t)
	new := load(t, set("seed", "7"), set("think_time", "{dist: exp, mean: 2s}"), set(gate.Key, `{e2e.p90: "< 1s"}`))
	assert.Equal(t, []string{"seed 1 → 7", "think_time {dist: exp, mean: 100ms} → {dist: exp, mean: 2s}"}, Differences(base, new))
	assert.Empty(t, Differences(base, load(t)))
}
