package harnesstest_test

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/harnesstest"
	"github.com/agentsim/agentsim/pacer"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// TestExamples runs the examples' tests: each asserts the verdict its example describes.
func TestExamples(t *testing.T) {
	skipUnderRace(t)
	t.Run("naive slots deadlock under the wedge", naiveSlotsUnderWedge)
	t.Run("an idle timeout recovers", naiveSlotsWithIdleTimeout)
	t.Run("a leased pacer does not starve agents", leasedUnderWedge)
}

// withoutWall returns the events and samples with their wall-clock fields cleared: the only
// fields that read the real clock.
func withoutWall(r *harnesstest.Result) ([]events.Event, []events.Sample) {
	evs := append([]events.Event(nil), r.Events...)
	for i := range evs {
		evs[i].Wall = ""
	}
	samples := append([]events.Sample(nil), r.Samples...)
	for i := range samples {
		samples[i].Wall = ""
	}
	return evs, samples
}

// The same Config gives the same run: the same events and samples, apart from wall times, and
// the same verdict. Another seed gives another run.
func TestSameSeedSameEvents(t *testing.T) {
	cases := []struct {
		name string
		cfg  harnesstest.Config
	}{
		// The smoke workload behind a custom pacer, on a healthy simulator.
		{"smoke, custom pacer", harnesstest.Config{Workload: "smoke", Seed: 7, Pacer: naiveSlots(2)}},
		// The incident: ocbrowse under the wedge, to its deadlock verdict.
		{"ocbrowse, wedge", harnesstest.Config{Workload: "ocbrowse", Faults: []string{"long-context-wedge"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.cfg.Workload == "ocbrowse" {
				skipUnderRace(t)
			}
			a, b := harnesstest.Run(t, c.cfg), harnesstest.Run(t, c.cfg)
			aEvs, aSamples := withoutWall(a)
			bEvs, bSamples := withoutWall(b)
			require.NotEmpty(t, aEvs)
			assert.Equal(t, aEvs, bEvs, "events of two runs of %+v", c.cfg)
			assert.Equal(t, aSamples, bSamples, "samples of two runs of %+v", c.cfg)
			assert.Equal(t, a.Verdict, b.Verdict)
		})
	}
	t.Run("another seed", func(t *testing.T) {
		a := harnesstest.Run(t, harnesstest.Config{Workload: "smoke", Seed: 7})
		b := harnesstest.Run(t, harnesstest.Config{Workload: "smoke", Seed: 8})
		aEvs, _ := withoutWall(a)
		bEvs, _ := withoutWall(b)
		assert.NotEqual(t, aEvs, bEvs, "events of seeds 7 and 8")
	})
}

// Called inside a bubble of the test's own, Run runs there: the test's goroutines and the
// run share the bubble's virtual time.
func TestRunInsideABubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		res := harnesstest.Run(t, harnesstest.Config{Workload: "smoke"})
		assert.Equal(t, results.Healthy, res.Verdict.Kind, res.Verdict.Summary)
		assert.InDelta(t, res.Results.SimSeconds, time.Since(start).Seconds(), 1,
			"the bubble's clock advanced by the run's simulated seconds")
	})
}

// The result carries the run directory's files, the events as recorded and the pacer the
// test built, named by its String.
func TestResultHoldsTheRun(t *testing.T) {
	var built *pacer.Custom
	res := harnesstest.Run(t, harnesstest.Config{Workload: "smoke", Set: map[string]string{"rounds": "1"},
		Pacer: func(clk *clock.Clock) (pacer.Pacer, error) {
			p, err := pacer.NewCustom(&NaiveSlots{N: 3}, clk)
			built = p
			return p, err
		}})
	for _, f := range []string{"events.jsonl", "samples.jsonl", "results.json", "config.yaml"} {
		_, err := os.Stat(filepath.Join(res.Dir, f))
		assert.NoError(t, err, "%s in the run directory", f)
	}
	require.NotNil(t, built)
	require.NotEmpty(t, res.Events)
	assert.Equal(t, events.RunStart, res.Events[0].Kind)
	assert.Contains(t, res.Events[0].Message, "pacer NaiveSlots{3}")
	assert.Equal(t, events.RunEnd, res.Events[len(res.Events)-1].Kind)
	assert.Equal(t, 4, built.Stats().Acquired, "4 agents × 1 round through the test's pacer")
	assert.Equal(t, res.Results.Verdict, res.Verdict)
	assert.Equal(t, 4, res.Results.Rounds.Completed)
	onFile, err := events.ReadFile[events.Sample](filepath.Join(res.Dir, "samples.jsonl"))
	require.NoError(t, err)
	assert.NotEmpty(t, res.Samples)
	assert.Equal(t, onFile, res.Samples, "Result.Samples are samples.jsonl's records")
}

// A workload built in code runs as given: here smoke cut to 2 agents × 1 round.
func TestSpecWorkload(t *testing.T) {
	w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke"})
	require.NoError(t, err)
	w.Agents, w.Rounds = 2, 1
	res := harnesstest.Run(t, harnesstest.Config{Spec: w})
	assert.Equal(t, 2, res.Results.Rounds.Planned, "rounds %+v", res.Results.Rounds)
	assert.Equal(t, results.Healthy, res.Verdict.Kind, res.Verdict.Summary)
}

// Given a Config.Dir, the run writes there, creating it, and Result.Dir names it.
func TestRunIntoADirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "compare", "agentic")
	res := harnesstest.Run(t, harnesstest.Config{Workload: "smoke", Set: map[string]string{"rounds": "1"}, Dir: dir})
	assert.Equal(t, dir, res.Dir)
	_, err := os.Stat(filepath.Join(dir, "results.json"))
	assert.NoError(t, err, "results.json in Config.Dir")
}
