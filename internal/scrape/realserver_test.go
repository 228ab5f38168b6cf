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
	"github.com/agentsim/agentsim/events"
)

// llamacppText is llama-server's /metrics: predicted_tokens_seconds is the mean rate of one
// request, and tokens_predicted_total grows only when a request ends.
const llamacppText = `# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 16
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 3
# TYPE llamacpp:predicted_tokens_seconds gauge
llamacpp:predicted_tokens_seconds 9.5
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total %d
`

// TestLlamaCppHasNoGenTokS: llama-server's token counter grows only when a request ends, so
// its rate is no server rate: 16 requests streaming for 10 s with none ended would read
// 0 tok/s, the next end a spike. gen_tok_s is not read from it (nor from the per-request
// mean, 9.5); the other gauges are.
func TestLlamaCppHasNoGenTokS(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var total atomic.Int64
		url, client := serveInMemory(t, func() (int, string) { return 200, fmt.Sprintf(llamacppText, total.Load()) })
		clk, err := clock.New(1)
		require.NoError(t, err)
		s := New([]string{url}, client, clk)
		first := s.Scrape(t.Context())
		assert.Equal(t, 16.0, first.Gauges[events.DecodeRunning])
		assert.Equal(t, 3.0, first.Gauges[events.Queued])
		time.Sleep(10 * time.Second)
		total.Add(1600)
		second := s.Scrape(t.Context())
		assert.NotContains(t, second.Gauges, events.GenTokS)
		assert.Empty(t, s.Source(events.GenTokS))
		assert.Equal(t, "server metrics: decode_running ← llamacpp:requests_processing, queued ← llamacpp:requests_deferred; "+
			"not found: prefill_inflight, kv_usage, gen_tok_s", s.Found())
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

// TestKeyGoesToTheServersOwnMetrics: llama-server --api-key answers its /metrics 401 without
// the key. Authorized with the server's URL, the scraper sends the key as a bearer token to
// the server's own /metrics and to no other host.
func TestKeyGoesToTheServersOwnMetrics(t *testing.T) {
	const key = "sekrit"
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}`)
			return
		}
		fmt.Fprintf(w, llamacppText, 0)
	}))
	defer server.Close()
	var otherGot atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherGot.Store(r.Header.Get("Authorization"))
		fmt.Fprint(w, "# TYPE tgi_queue_size gauge\ntgi_queue_size 2\n")
	}))
	defer other.Close()
	urls := []string{server.URL + "/metrics", other.URL + "/metrics"}

	got := New(urls, nil, clock.Real()).Scrape(t.Context())
	assert.Equal(t, []string{"GET " + server.URL + "/metrics → 401"}, got.Errors, "without the key")

	s := New(urls, nil, clock.Real()).Authorize(key, server.URL)
	got = s.Scrape(t.Context())
	assert.Empty(t, got.Errors)
	assert.Equal(t, 16.0, got.Gauges[events.DecodeRunning], "the server's own /metrics, read with the key")
	assert.Equal(t, "", otherGot.Load(), "another host never sees the key")
}

// TestSameOrigin: a key goes only where the scheme, host and port are the server's.
func TestSameOrigin(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"http://127.0.0.1:8090/metrics", "http://127.0.0.1:8090", true},
		{"HTTP://LocalHost/metrics", "http://localhost:80", true},
		{"https://h/metrics", "https://h:443", true},
		{"http://127.0.0.1:8091/metrics", "http://127.0.0.1:8090", false},
		{"https://127.0.0.1:8090/metrics", "http://127.0.0.1:8090", false},
		{"http://exporter:9100/metrics", "http://127.0.0.1:9100", false},
		{"not a url", "http://127.0.0.1:8090", false},
	} {
		assert.Equal(t, c.want, SameOrigin(c.a, c.b), "%s vs %s", c.a, c.b)
	}
}
