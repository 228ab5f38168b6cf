package scrape

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

// A Go exporter (promhttp, as agentsim's simulator uses) answers the scraper in the delimited
// protobuf exposition, and the gauges read from it are those read from the same metrics as
// text.
func TestProtobufExpositionReadsAsText(t *testing.T) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(sglangText))
	require.NoError(t, err)
	gather := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		var out []*dto.MetricFamily
		for _, mf := range families {
			out = append(out, mf)
		}
		return out, nil
	})
	var answered atomic.Value
	h := promhttp.HandlerFor(gather, promhttp.HandlerOpts{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		answered.Store(w.Header().Get("Content-Type"))
	}))
	t.Cleanup(srv.Close)

	got := New([]string{srv.URL + "/metrics"}, nil, clock.Real()).Scrape(t.Context())
	assert.Empty(t, got.Errors)
	assert.Contains(t, answered.Load(), "application/vnd.google.protobuf", "the exporter's answer")
	assert.Equal(t, map[string]float64{events.DecodeRunning: 16, events.PrefillInflight: 16, events.Queued: 3, events.KVUsage: 0.25, events.GenTokS: 431.5}, got.Gauges)
}
