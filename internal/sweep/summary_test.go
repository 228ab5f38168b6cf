package sweep

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/results"
)

func fptr(x float64) *float64 { return &x }

// fig is a finished run's figures with a verdict, rounds over simulated seconds, and
// observations.
func fig(kind results.VerdictKind, rounds int, simS float64, e2e, wait []float64, stall *float64) *Figures {
	return &Figures{Verdict: results.Verdict{Kind: kind}, RoundsCompleted: rounds, SimSeconds: simS, E2E: e2e,
		PacerWait: wait, FirstStallS: stall}
}

// TestAggregate checks how a cell's runs across seeds become one row.
func TestAggregate(t *testing.T) {
	p := NewPlan("", Base{Name: "w"}, []Dimension{{Key: "pacer.kind", Values: []string{"slots", "aimd"}}},
		[]string{"none"}, []int64{1, 2, 3, 4, 5})
	figs := map[int]*Figures{
		// slots: 3 slow, 2 pacer-starvation; requests pooled across runs.
		0: fig(results.Slow, 10, 1800, []float64{1, 2}, []float64{0}, nil),
		1: fig(results.Slow, 10, 1800, []float64{3}, []float64{0}, nil),
		2: fig(results.PacerStarvation, 4, 1800, []float64{4}, []float64{9}, fptr(300)),
		3: fig(results.Slow, 10, 1800, []float64{5}, nil, nil),
		4: fig(results.PacerStarvation, 6, 1800, nil, nil, fptr(500)),
		// aimd: one deadlock, one interrupted (not counted), three never ran.
		5: fig(results.Deadlock, 2, 3600, nil, nil, fptr(100)),
		6: {Interrupted: true, Verdict: results.Verdict{Kind: results.Healthy}},
	}
	s := Aggregate(p, figs)
	require.Len(t, s.Cells, 2)
	slots, aimd := s.Cells[0], s.Cells[1]

	assert.Equal(t, "3/5 slow 2/5 pacer-starvation", slots.VerdictText)
	assert.Equal(t, 5, slots.Finished)
	assert.InDelta(t, 40.0/(5*1800)*3600, slots.GoodputPerHour, 1e-9, "rounds per simulated hour over all runs")
	assert.InDelta(t, 3.0, *slots.E2EP50S, 1e-9, "median of 1,2,3,4,5 pooled")
	assert.InDelta(t, 9.0, *slots.PacerWaitP99S, 1e-9)
	assert.InDelta(t, 300.0, *slots.FirstStallS, 1e-9, "p50 (nearest rank, as results.json) over the runs that stalled")
	assert.Equal(t, 2, slots.Stalled)

	assert.Equal(t, "1/5 deadlock 4/5 not run", aimd.VerdictText)
	assert.Nil(t, aimd.E2EP50S, "no request ended ok")
	assert.InDelta(t, 2.0, aimd.GoodputPerHour, 1e-9)
	assert.Equal(t, []int{6, 7, 8, 9}, s.NotRun)
	assert.Equal(t, []int{6}, s.Interrupted)
	assert.Equal(t, StateInterrupted, aimd.RunList[1].State)

	outside := s.Expect([]results.VerdictKind{results.Healthy, results.Slow})
	assert.Equal(t, []string{
		"pacer.kind=slots fault=none: 3/5 slow 2/5 pacer-starvation (not pacer-starvation)",
		"pacer.kind=aimd fault=none: 1/5 deadlock 4/5 not run (not deadlock)",
	}, outside)
	assert.False(t, *s.Cells[0].Expected)
}

// TestVerdictText checks the order of a cell's verdicts: most frequent first, ties in the
// order of the verdict rules.
func TestVerdictText(t *testing.T) {
	for _, tc := range []struct {
		counts map[results.VerdictKind]int
		runs   int
		notRun int
		want   string
	}{
		{map[results.VerdictKind]int{results.Deadlock: 5}, 5, 0, "5/5 deadlock"},
		{map[results.VerdictKind]int{results.Healthy: 1, results.Deadlock: 1}, 2, 0, "1/2 deadlock 1/2 healthy"},
		{map[results.VerdictKind]int{}, 3, 3, "3/3 not run"},
	} {
		assert.Equal(t, tc.want, verdictText(tc.counts, tc.runs, tc.notRun), "verdictText(%v, %d, %d)", tc.counts, tc.runs, tc.notRun)
	}
}

// TestIndexList checks the rendering of run indices as ranges.
func TestIndexList(t *testing.T) {
	assert.Equal(t, "0-3,7,9-10", indexList([]int{0, 1, 2, 3, 7, 9, 10}))
	assert.Equal(t, "5", indexList([]int{5}))
}

// TestWriteHTML checks that the page holds the heatmap, with a column for each verdict a run
// had, and the table.
func TestWriteHTML(t *testing.T) {
	p := NewPlan("", Base{Name: "w"}, nil, []string{"none", "long-context-wedge"}, []int64{1})
	s := Aggregate(p, map[int]*Figures{0: fig(results.Healthy, 1, 60, nil, nil, nil), 1: fig(results.Deadlock, 0, 60, nil, nil, fptr(5))})
	var b strings.Builder
	require.NoError(t, WriteHTML(&b, s))
	page := b.String()
	assert.Contains(t, page, "<svg")
	assert.Contains(t, page, "deadlock")
	assert.NotContains(t, page, ">pacer-starvation<", "no run had it: no column")
	assert.Contains(t, page, "1/1 deadlock")
}
