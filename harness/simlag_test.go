package harness

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
	"github.com/agentsim/agentsim/workloads"
)

// lateTransport holds every chat request for delay of simulated time before the simulator's
// handler sees it: what a simulator that cannot keep up with the speedup does to requests,
// which wait that long for it to read them. In a synctest bubble the simulator's own work costs
// no time, so this is how a test makes it late.
type lateTransport struct {
	next  http.RoundTripper
	clk   *clock.Clock
	delay time.Duration
}

func (t lateTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/chat/completions") {
		if err := t.clk.Sleep(req.Context(), t.delay); err != nil {
			return nil, err
		}
	}
	return t.next.RoundTrip(req)
}

// TestSimulatorLagIsNotTheServer: smoke against the embedded simulator, every request reaching
// it 40 s after the harness sent it — twice smoke's stall_after of 20 s. The streams are
// silent that long before their first byte, but the simulator, not the server it models, made
// them so: it measures each delivery 40 s late, the run records that beside the harness's lag
// and warns, and the verdict blames no server. Without the simulator's lag (its target not
// carrying it) the same run is stalled-streams.
func TestSimulatorLagIsNotTheServer(t *testing.T) {
	const delay = 40 * time.Second
	run := func(t *testing.T, measured bool) (*results.Results, string) {
		w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke"})
		require.NoError(t, err)
		clk, err := clock.New(20)
		require.NoError(t, err)
		sim := simtest.NewServer(t, simserver.Options{Clock: clk, Profile: simserver.DSV4PD()})
		defer sim.Close()
		client := *sim.Client()
		client.Transport = lateTransport{next: client.Transport, clk: clk, delay: delay}
		target := Target{URL: sim.URL, Kind: results.Embedded, Profile: "dsv4-pd"}
		if measured {
			target.SimLag = sim.Sim.Engine()
		}
		dir := filepath.Join(t.TempDir(), "run")
		res, err := Run(t.Context(), Options{Command: "run", Workload: w, Clock: clk, Target: target,
			Dir: dir, HTTPClient: &client})
		require.NoError(t, err)
		return res, dir
	}
	synctest.Test(t, func(t *testing.T) {
		res, dir := run(t, true)
		v := res.Verdict
		assert.Equal(t, results.Healthy, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
		assert.Zero(t, res.Requests.Stalled)
		assert.GreaterOrEqual(t, res.Latency.TTFT.P50, delay.Seconds(), "the streams were that silent")

		h := res.Harness
		require.NotNil(t, h.SimulatorLag)
		assert.Equal(t, delay.Seconds(), h.SimulatorLag.Max, "every delivery %s late", delay)
		assert.Equal(t, delay.Seconds(), h.SimulatorLag.P50)
		assert.Positive(t, h.SimulatorLag.N)
		assert.Zero(t, h.Lag.Max, "the harness kept up")
		assert.Empty(t, h.Warning)
		assert.Equal(t, "simulator lag p99 40 s (simulated) exceeds 1.0 s (5 % of stall_after 20s): the simulator, not the server being modelled, "+
			"is setting the pace, so latencies and stall times are inflated; use --speedup 1 or lower", h.SimulatorWarning)

		evs, err := events.ReadFile[events.Event](filepath.Join(dir, "events.jsonl"))
		require.NoError(t, err)
		var warned []string
		for _, e := range evs {
			if e.Kind == events.Warning && strings.Contains(e.Message, "simulator lag") {
				warned = append(warned, e.Message)
			}
		}
		assert.Len(t, warned, 1, "the live warning, once")
		samples, err := events.ReadFile[events.Sample](filepath.Join(dir, "samples.jsonl"))
		require.NoError(t, err)
		var most float64
		for _, s := range samples {
			most = max(most, s.SimLagS)
		}
		assert.Equal(t, delay.Seconds(), most, "samples carry the simulator's lag")
	})
	synctest.Test(t, func(t *testing.T) {
		res, _ := run(t, false)
		assert.Equal(t, results.StalledStreams, res.Verdict.Kind, "unmeasured, the simulator's lag reads as the server's stall")
		assert.Nil(t, res.Harness.SimulatorLag)
	})
}

// The header the harness stamps its requests with is the one the simulator reads.
func TestSentAtHeaderIsTheSimulators(t *testing.T) {
	assert.Equal(t, simserver.SentAtHeader, sentAtHeader)
}
