package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/internal/sweep"
	"github.com/agentsim/agentsim/workloads"
)

// TestParseGrid checks each malformed --grid argument's message.
func TestParseGrid(t *testing.T) {
	dims, problems := parseGrid([]string{"pacer.kind=slots, aimd", "Agents=2,4"})
	assert.Empty(t, problems)
	assert.Equal(t, []sweep.Dimension{{Key: "pacer.kind", Values: []string{"slots", "aimd"}}, {Key: "agents", Values: []string{"2", "4"}}}, dims)

	for _, tc := range []struct{ arg, want string }{
		{"pacer.kind", `--grid pacer.kind: "pacer.kind" is not allowed: want key=v1,v2,…`},
		{"=1,2", "--grid =1,2: the key is empty"},
		{"agents=", "--grid agents=: agents: the list of values is empty"},
		{"agents=1,,2", `--grid agents=1,,2: agents: "1,,2" holds an empty value`},
		{"agents=1,1", `--grid agents=1,1: agents: "1" is listed twice`},
	} {
		_, problems := parseGrid([]string{tc.arg})
		if assert.Len(t, problems, 1, "parseGrid(%q)", tc.arg) {
			assert.Contains(t, problems[0].String(), tc.want, "parseGrid(%q)", tc.arg)
		}
	}
	_, problems = parseGrid([]string{"agents=1", "agents=2"})
	assert.Contains(t, problems[0].String(), "given twice")
}

// TestParseSeeds checks seeds lists and ranges.
func TestParseSeeds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int64
		err  string
	}{
		{"1-5", []int64{1, 2, 3, 4, 5}, ""},
		{"1,3, 7", []int64{1, 3, 7}, ""},
		{"1-3,10", []int64{1, 2, 3, 10}, ""},
		{"", nil, "the list is empty"},
		{"3-1", nil, "a range goes from low to high, such as 1-3"},
		{"a", nil, `"a" is not allowed`},
		{"-1", nil, `"-1" is not allowed`},
		{"1-3,2", nil, "seed 2 is listed twice"},
		{"1-100000", nil, "want at most 1000 seeds"},
	} {
		got, err := parseSeeds(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "parseSeeds(%q)", tc.in)
			continue
		}
		assert.NoError(t, err, "parseSeeds(%q)", tc.in)
		assert.Equal(t, tc.want, got, "parseSeeds(%q)", tc.in)
	}
}

// TestCheckGrid checks that every bad key and value is reported at once, each naming its
// --grid argument, and that a good grid has no problem.
func TestCheckGrid(t *testing.T) {
	base := workloads.LoadOptions{Workload: "smoke", Overrides: []workloads.Override{{Key: "rounds", Value: "3", Source: "--rounds"}}}
	assert.Empty(t, checkGrid(base, []sweep.Dimension{{Key: "pacer.kind", Values: []string{"slots", "aimd", "gradient"}}, {Key: "request.idle_timeout", Values: []string{"0s", "60s"}}}))

	problems := checkGrid(base, []sweep.Dimension{
		{Key: "pacer.kind", Values: []string{"slots", "fifo"}},
		{Key: "pacer.slotz", Values: []string{"1"}},
		{Key: "agents", Values: []string{"2", "-1"}},
		{Key: "rounds", Values: []string{"1"}},
		{Key: "seed", Values: []string{"1"}},
	})
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	assert.Len(t, got, 5, "%q", got)
	for _, want := range []string{
		`--grid pacer.kind=fifo: pacer.kind: "fifo" is not allowed: want one of`,
		`--grid pacer.slotz=1: unknown key "pacer.slotz"; did you mean "pacer.slots"?`,
		`--grid agents=-1: agents: -1 is not allowed`,
		`--grid rounds=1: rounds: also given with --rounds`,
		`--grid seed=1: seed: give the seeds with --seeds`,
	} {
		assert.Contains(t, problemsText(problems), want)
	}
}

// TestCheckGridCombination checks that values valid alone but not together are reported.
func TestCheckGridCombination(t *testing.T) {
	base := workloads.LoadOptions{Workload: "smoke"}
	problems := checkGrid(base, []sweep.Dimension{{Key: "pacer.kind", Values: []string{"slots", "aimd"}}, {Key: "pacer.slots", Values: []string{"4"}}})
	assert.Contains(t, problemsText(problems), `--grid pacer.kind=aimd pacer.slots=4: pacer.slots: 4 is not allowed: kind "aimd" does not use it`)
}

// TestCheckSweepFaults checks the fault axis and its parameters.
func TestCheckSweepFaults(t *testing.T) {
	assert.Empty(t, checkSweepFaults([]string{"none", "long-context-wedge", "slow-decode+drop"}, []string{"drop.fraction=0.2"}))
	text := problemsText(checkSweepFaults([]string{"none", "wedge"}, []string{"fraction=0.2", "drop.fraction=0.2", "long-context-wedge.x=1"}))
	for _, want := range []string{
		`--sim-fault "wedge": unknown fault`,
		`--sim-fault-param "fraction=0.2": in a sweep, name the fault`,
		`--sim-fault-param "drop.fraction=0.2": fault "drop" is in no cell`,
	} {
		assert.Contains(t, text, want)
	}
}

func problemsText(ps []workloads.Problem) string {
	var s string
	for _, p := range ps {
		s += p.String() + "\n"
	}
	return s
}
