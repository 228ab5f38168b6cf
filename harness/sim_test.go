package harness

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
	"github.com/agentsim/agentsim/workloads"
)

// simCase is one whole run against the embedded simulator, over an in-memory network so it
// can run inside a synctest bubble.
type simCase struct {
	workload    string
	overrides   map[string]string
	faults      []string
	faultParams []string
	speedup     float64
	// adaptive runs on an Adjustable clock starting at speedup: a --speedup max run, its
	// controller (MaxPace) changing the rate as it goes.
	adaptive bool
	// maxRunning, when > 0, caps the simulator's decode batch (its profile's max_running):
	// a server with that many slots, the rest of the requests queued.
	maxRunning int
	// firstByte, when set, overrides when the simulator sends a stream's head and role chunk.
	firstByte simserver.FirstByte
	// profile, when set, adjusts the simulator's profile (dsv4-pd) before the run.
	profile func(*simserver.Profile)
	// metrics, when set, serves the run's Prometheus metrics.
	metrics *MetricsEndpoint
	// coalesce, when > 0, sets the profile's stream_coalesce_tokens.
	coalesce int
	// readDelay, when > 0, makes the harness read its streams slowly: each read of a
	// response body waits that long (wall time, virtual in a bubble).
	readDelay time.Duration
	// late, when > 0, makes every chat request reach the simulator's handler that long, in
	// simulated time, after the harness sent it (lateTransport).
	late time.Duration
	// simLag, when set, is what the target tells the run of the simulator's lag, given the
	// simulator's own and the run's clock (nil: the target does not carry it); unset, the
	// target carries the simulator's own.
	simLag func(own SimLag, clk *clock.Clock) SimLag
	// reproduce, when set, is the run's reproduction (Options.Reproduce).
	reproduce *results.Reproduction
}

// runSim runs c to its end and returns its results and run directory. Call it inside a bubble.
func runSim(t *testing.T, ctx context.Context, c simCase) (*results.Results, string) {
	t.Helper()
	var over []workloads.Override
	for k, v := range c.overrides {
		over = append(over, workloads.Override{Key: k, Value: v, Source: "--set"})
	}
	w, err := workloads.Load(workloads.LoadOptions{Workload: c.workload, Overrides: over})
	require.NoError(t, err)
	if c.speedup == 0 {
		c.speedup = 1
	}
	newClock := clock.New
	if c.adaptive {
		newClock = clock.Adjustable
	}
	clk, err := newClock(c.speedup)
	require.NoError(t, err)
	faults, err := simserver.ParseFaults(c.faults, c.faultParams, 1)
	require.NoError(t, err)
	prof := simserver.DSV4PD()
	if c.maxRunning > 0 {
		prof.MaxRunning = c.maxRunning
	}
	if c.firstByte != "" {
		prof.FirstByte = c.firstByte
	}
	if c.coalesce > 0 {
		prof.StreamCoalesceTokens = c.coalesce
	}
	if c.profile != nil {
		c.profile(prof)
	}
	// In-process, as commands serve it; a slow reader needs the in-memory network instead,
	// whose connections (net.Pipe) buffer nothing, so that the simulator's writes block at once
	// rather than after the transport's window fills.
	newServer := simtest.NewLocalServer
	if c.readDelay > 0 {
		newServer = simtest.NewServer
	}
	sim := newServer(t, simserver.Options{Clock: clk, Faults: faults, Profile: prof})
	defer sim.Close()
	client := sim.Client()
	if c.readDelay > 0 {
		client = slowReading(client, c.readDelay)
	}
	if c.late > 0 {
		late := *client
		late.Transport = lateTransport{next: client.Transport, clk: clk, delay: c.late}
		client = &late
	}
	target := Target{URL: sim.URL, Kind: results.Embedded, Profile: "dsv4-pd", Faults: faults.Names(), SimLag: sim.Sim.Engine()}
	if c.simLag != nil {
		target.SimLag = c.simLag(sim.Sim.Engine(), clk)
	}
	dir := filepath.Join(t.TempDir(), "run")
	res, err := Run(ctx, Options{Command: "run", Workload: w, Clock: clk, Target: target,
		Dir: dir, HTTPClient: client, Metrics: c.metrics, Reproduce: c.reproduce})
	require.NoError(t, err)
	return res, dir
}
