package workloads

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// sampleCounts draws n samples of a count with draw and returns them sorted, and their mean.
func sampleCounts(n int, draw func(*rand.Rand) int) ([]float64, float64) {
	r := rand.New(rand.NewPCG(88, 12))
	xs := make([]float64, n)
	sum := 0.0
	for i := range xs {
		xs[i] = float64(draw(r))
		sum += xs[i]
	}
	slices.Sort(xs)
	return xs, sum / float64(n)
}

// TestDefaultTaskSteps checks that the default steps per task land on TraceLab's model calls
// per user request: a mean of 8.8 (within 0.3), a median of 2, p90 21 and p99 87 (within 10 %),
// and never fewer than one.
func TestDefaultTaskSteps(t *testing.T) {
	task := Defaults().Task
	xs, mean := sampleCounts(200_000, task.SampleSteps)
	assert.InDelta(t, 8.8, mean, 0.3, "mean steps per task")
	assert.Equal(t, 1.0, xs[0], "least")
	assert.Equal(t, 1.0, quantile(xs, 0.25), "p25")
	assert.Equal(t, 2.0, quantile(xs, 0.5), "p50")
	assert.InEpsilon(t, 21, quantile(xs, 0.9), 0.1, "p90")
	assert.InEpsilon(t, 87, quantile(xs, 0.99), 0.1, "p99")
	assert.InDelta(t, task.Steps.Mean(), mean, 0.3, "Steps.Mean()")
}

// TestDefaultCallsPerStep checks that the default tool calls per step land on TraceLab's: a
// mean of 1.2 (within 0.02), a median of 1, p90 2 and p99 4.
func TestDefaultCallsPerStep(t *testing.T) {
	task := Defaults().Task
	xs, mean := sampleCounts(200_000, task.SampleCalls)
	assert.InDelta(t, 1.2, mean, 0.02, "mean calls per step")
	assert.Equal(t, []float64{1, 1, 2, 4}, []float64{xs[0], quantile(xs, 0.5), quantile(xs, 0.9), quantile(xs, 0.99)},
		"least, p50, p90, p99")
}

// TestSampleAtLeastOne checks that a count distribution whose samples may be 0 still gives a
// task one model call and a step one tool call.
func TestSampleAtLeastOne(t *testing.T) {
	task := Task{Steps: Dist{Kind: DistExp, Avg: 1}, CallsPerStep: Dist{Kind: DistUniform, Min: 0, Max: 2}}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		if s, c := task.SampleSteps(r), task.SampleCalls(r); s < 1 || c < 1 {
			t.Fatalf("SampleSteps, SampleCalls = %d, %d; want both ≥ 1", s, c)
		}
	}
}
