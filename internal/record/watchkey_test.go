package record

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/rundir"
)

// TestWatchScrapesWithTheKey: llama-server --api-key answers /metrics 401 without the key;
// --watch sends --api-key with the scrapes of the upstream's own /metrics and reads its gauges.
func TestWatchScrapesWithTheKey(t *testing.T) {
	const key = "sekrit"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}`)
			return
		}
		fmt.Fprint(w, "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 2\n"+
			"# TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred 7\n")
	}))
	defer srv.Close()
	up, err := url.Parse(srv.URL)
	require.NoError(t, err)
	dir := t.TempDir()
	w, err := NewWatcher(WatchOptions{Dir: dir, Upstream: srv.URL, TraceFile: "trace.jsonl",
		MetricsURL: srv.URL + "/metrics", APIKey: key, Clock: clock.Real()})
	require.NoError(t, err)
	p, err := New(Options{Upstream: up, Trace: io.Discard})
	require.NoError(t, err)
	w.sample(t.Context(), p)
	require.NoError(t, p.Close())
	require.NoError(t, w.Close())
	samples, err := events.ReadFile[events.Sample](filepath.Join(dir, rundir.Samples))
	require.NoError(t, err)
	require.Len(t, samples, 1)
	assert.Empty(t, samples[0].ServerErrors)
	assert.Equal(t, map[string]float64{events.DecodeRunning: 2, events.Queued: 7}, samples[0].Server)
}
