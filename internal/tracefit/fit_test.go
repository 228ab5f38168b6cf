package tracefit

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/trace"
	"github.com/agentsim/agentsim/workloads"
)

// synthetic writes a trace of 40 sessions × 8 requests: uniform output tokens 100–300,
// uniform new tokens 200–600, exponential think time of mean 4 s.
func synthetic(t *testing.T) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var buf bytes.Buffer
	tw, err := trace.NewWriter(&buf, trace.Header{Source: "test", Created: "2026-11-30T00:00:00Z", Requests: 320, Sessions: 40})
	require.NoError(t, err)
	for s := range 40 {
		ts, prompt := float64(s), 2000
		for k := range 8 {
			r := trace.Request{Session: fmt.Sprintf("s%d", s), Seq: k, TS: ts, PromptTokens: prompt,
				OutputTokens: 100 + rng.IntN(201), Status: 200, E2ES: 1}
			if k > 0 {
				e := k - 1
				r.Extends, r.NewTokens = &e, 200+rng.IntN(401)
				r.AfterS = 4 * rng.ExpFloat64()
				r.TS = ts + 1 + r.AfterS
				r.PromptTokens = prompt + r.NewTokens
			}
			require.NoError(t, tw.Write(r))
			ts, prompt = r.TS, r.PromptTokens+r.OutputTokens
		}
	}
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

// TestFitRecoversDistributions fits the synthetic trace: each quantity's kind and parameters
// are those it was drawn from, and the workload loads with workloads.Load.
func TestFitRecoversDistributions(t *testing.T) {
	res, err := FromTrace(bytes.NewReader(synthetic(t)), "syn.jsonl", Options{Name: "fit-syn"})
	require.NoError(t, err)
	w := res.Workload
	assert.Equal(t, 40, w.Agents)
	assert.Equal(t, 8, w.Rounds)
	assert.Equal(t, workloads.DistUniform, w.Request.OutputTokens.Kind, "%v", w.Request.OutputTokens)
	assert.InDelta(t, 100, w.Request.OutputTokens.Min, 5)
	assert.InDelta(t, 300, w.Request.OutputTokens.Max, 5)
	assert.True(t, w.Request.ForceOutputLength)
	assert.Equal(t, workloads.DistUniform, w.Context.ReadTokens.Kind, "%v", w.Context.ReadTokens)
	assert.Equal(t, workloads.DistExp, w.ThinkTime.Kind, "%v", w.ThinkTime)
	assert.InDelta(t, 4, w.ThinkTime.Avg.Seconds(), 0.6)

	b, err := w.YAML()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "fit.yaml")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	loaded, err := workloads.Load(workloads.LoadOptions{Workload: path})
	require.NoError(t, err, "the fitted workload runs with agentsim run --workload")
	assert.Equal(t, w, loaded)

	var table strings.Builder
	require.NoError(t, Render(&table, res))
	assert.Contains(t, table.String(), "request.output_tokens (tokens, n=320): uniform")
	assert.Contains(t, table.String(), "*uniform")
}

// TestKS checks the distance on known cases.
func TestKS(t *testing.T) {
	xs := []float64{1, 2, 3, 4}
	for _, c := range []struct {
		f    Fit
		want float64
	}{
		{Fit{Kind: workloads.DistConst, Value: 2}, 0.5},          // half the data below, half above
		{Fit{Kind: workloads.DistUniform, Min: 1, Max: 4}, 0.25}, // steps of 1/4 against a line
		{Fit{Kind: workloads.DistConst, Value: 100}, 1},          // no data at or above
	} {
		assert.InDelta(t, c.want, ks(xs, c.f), 1e-9, "ks(%v, %+v)", xs, c.f)
	}
}
