package bench

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
)

// simRun runs the benchmark against the embedded simulator (default profile, the given
// faults) over an in-memory network, so it can run inside a synctest bubble. It returns the
// report and everything printed.
func simRun(t *testing.T, speedup float64, faults []string, o Options) (*Report, string) {
	t.Helper()
	return simRunProfile(t, speedup, nil, faults, o)
}

// simRunProfile is simRun against the simulator with profile p (nil: the default).
func simRunProfile(t *testing.T, speedup float64, p *simserver.Profile, faults []string, o Options) (*Report, string) {
	t.Helper()
	clk, err := clock.New(speedup)
	require.NoError(t, err)
	f, err := simserver.ParseFaults(faults, nil, 1)
	require.NoError(t, err)
	sim := simtest.NewServer(t, simserver.Options{Clock: clk, Faults: f, Profile: p})
	defer sim.Close()
	var out bytes.Buffer
	o.Target = harness.Target{URL: "http://sim", Kind: results.Embedded, Profile: "dsv4-pd", Faults: f.Names()}
	o.Clock, o.HTTPClient, o.Out = clk, sim.Client(), &out
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	if o.MaxTokens == 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	if o.PromptTokens == 0 {
		o.PromptTokens = DefaultPromptTokens
	}
	if o.SampleInterval == 0 {
		o.SampleInterval = DefaultSampleInterval
	}
	if len(o.Concurrency) == 0 {
		o.Concurrency = []int{DefaultConcurrency}
	}
	o.Seed = 1
	o.Timeout = time.Minute
	rep, err := Run(t.Context(), o)
	require.NoError(t, err)
	return rep, out.String()
}
