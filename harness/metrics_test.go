package harness

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/memnet"
)

// TestMetricsAgreeWithResults scrapes /metrics after a smoke run and checks that the live
// counters end where results.json does: requests sent and by outcome, output tokens, every
// agent done, nothing in flight.
func TestMetricsAgreeWithResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := memnet.Listen()
		ep := ServeMetrics(ln)
		defer ep.Close()
		res, _ := runSim(t, t.Context(), simCase{workload: "smoke", speedup: 20, metrics: ep})

		got := scrapeMetrics(t, ln.Client(), "http://"+ep.Addr()+"/metrics")
		assert.Equal(t, float64(res.Requests.Sent), got[`agentsim_requests_sent_total`])
		assert.Equal(t, float64(res.Requests.OK), got[`agentsim_requests_total{outcome="success"}`])
		assert.Equal(t, float64(res.Requests.Errors), got[`agentsim_requests_total{outcome="error"}`])
		assert.Equal(t, float64(res.Tokens.Reasoning), got[`agentsim_output_tokens_total{kind="reasoning"}`])
		assert.Equal(t, float64(res.Tokens.Content), got[`agentsim_output_tokens_total{kind="content"}`])
		assert.Equal(t, float64(res.Agents), got[`agentsim_agents{state="done"}`])
		assert.Equal(t, 0.0, got[`agentsim_requests_in_flight`])
		assert.Equal(t, float64(res.Requests.Sent), got[`agentsim_stream_max_gap_seconds_count`])
		assert.Greater(t, got[`agentsim_sim_seconds`], 0.0)
		for _, name := range []string{"agentsim_pacer_holders", "agentsim_pacer_waiters", "agentsim_streams_silent",
			"agentsim_stream_oldest_silence_seconds", "agentsim_pacer_wait_seconds_count", "agentsim_scheduling_lag_seconds",
			"agentsim_simulator_lag_sample_seconds"} {
			assert.Contains(t, got, name, "every documented metric is exported")
		}
	})
}

// TestMetricsEndpointServesBeforeAndAfterRuns: before any run the endpoint answers with an
// empty page, and Close ends it (twice is safe).
func TestMetricsEndpointServesBeforeAndAfterRuns(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ep := ServeMetrics(ln)
	resp, err := http.Get("http://" + ep.Addr() + "/metrics")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, strings.TrimSpace(string(b)))
	require.NoError(t, ep.Close())
	require.NoError(t, ep.Close())
	_, err = http.Get("http://" + ep.Addr() + "/metrics")
	assert.Error(t, err, "closed endpoint still serves")
}

// scrapeMetrics reads a Prometheus text page into "name{label="value"}" → value.
func scrapeMetrics(t *testing.T, c *http.Client, url string) map[string]float64 {
	t.Helper()
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	var fs []*dto.MetricFamily
	for _, f := range families {
		fs = append(fs, f)
	}
	vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.Now()}, fs...)
	require.NoError(t, err)
	out := map[string]float64{}
	for _, s := range vec {
		name := string(s.Metric[model.MetricNameLabel])
		delete(s.Metric, model.MetricNameLabel)
		if len(s.Metric) > 0 && !strings.HasSuffix(name, "_bucket") {
			name += strings.ReplaceAll(s.Metric.String(), ", ", ",")
		}
		out[name] = float64(s.Value)
	}
	return out
}
