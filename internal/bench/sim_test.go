package bench

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/memnet"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
)

// simRun runs the benchmark against the embedded simulator (default profile, the given
// faults) over an in-memory network, so it can run inside a synctest bubble. It returns the
// report and everything printed.
func simRun(t *testing.T, speedup float64, faults []string, o Options) (*Report, string) {
	t.Helper()
	clk, err := clock.New(speedup)
	require.NoError(t, err)
	f, err := simserver.ParseFaults(faults, nil, 1)
	require.NoError(t, err)
	srv, err := simserver.New(simserver.Options{Clock: clk, Faults: f})
	require.NoError(t, err)
	ln := memnet.Listen()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(ctx, ln) }()
	client := ln.Client()
	defer func() {
		client.CloseIdleConnections()
		stop()
		<-served
	}()
	var out bytes.Buffer
	o.Server = results.Server{URL: "http://sim", Kind: "embedded", Profile: "dsv4-pd", Fault: f.Names()}
	o.Clock, o.HTTPClient, o.Out, o.Dir = clk, client, &out, t.TempDir()
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
