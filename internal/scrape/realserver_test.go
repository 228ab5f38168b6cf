package scrape

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
)

// llamacppText is llama-server's /metrics: predicted_tokens_seconds is the mean rate of one
// request; the aggregate is the rate of the tokens_predicted_total counter.
const llamacppText = `# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 16
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 3
# TYPE llamacpp:predicted_tokens_seconds gauge
llamacpp:predicted_tokens_seconds 9.5
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total %d
`

// TestLlamaCppRateIsTheCounters: gen_tok_s on llama-server is the aggregate rate of its
// token counter, 160 tok/s for 16 streams at 10 tok/s each, never its per-request mean (9.5).
func TestLlamaCppRateIsTheCounters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var total atomic.Int64
		url, client := serveInMemory(t, func() (int, string) { return 200, fmt.Sprintf(llamacppText, total.Load()) })
		clk, err := clock.New(1)
		require.NoError(t, err)
		s := New([]string{url}, client, clk)
		first := s.Scrape(t.Context())
		assert.Equal(t, 16.0, first.Gauges[DecodeRunning])
		assert.Equal(t, 3.0, first.Gauges[Queued])
		assert.NotContains(t, first.Gauges, GenTokS)
		time.Sleep(10 * time.Second)
		total.Add(1600)
		second := s.Scrape(t.Context())
		assert.InDelta(t, 160.0, second.Gauges[GenTokS], 1e-9, "aggregate rate, not the per-request 9.5")
		assert.Contains(t, s.Found(), "gen_tok_s ← rate(llamacpp:tokens_predicted_total)")
	})
}

// TestFrozenMetricsTimeOut: a /metrics that stops answering is reported as timed out, a mark
// TimedOut recognises, and no gauge is read from it.
func TestFrozenMetricsTimeOut(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	s := New([]string{srv.URL + "/metrics"}, nil, clock.Real())
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	got := s.Scrape(ctx)
	assert.Empty(t, got.Gauges)
	require.Len(t, got.Errors, 1)
	assert.Equal(t, "GET "+srv.URL+"/metrics: timed out", got.Errors[0])
	assert.True(t, TimedOut(got.Errors[0]))
	assert.False(t, TimedOut("GET "+srv.URL+"/metrics → 404"))
}
