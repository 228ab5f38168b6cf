package simserver

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agentsim/agentsim/internal/engine"
)

// Histogram bounds, in seconds, as the real servers define them (SGLang
// metrics/collector.py TokenizerMetricsCollector; vLLM v1/metrics/loggers.py).
var (
	sglangTTFTBuckets = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400}
	sglangITLBuckets  = []float64{0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035,
		0.040, 0.060, 0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000}
	sglangE2EBuckets = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200,
		400, 600, 1200, 1800, 2400}
	vllmTTFTBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
		2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	vllmITLBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5,
		5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	vllmE2EBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0,
		50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
)

// vLLM finish reasons, the values of vllm:request_success_total{finished_reason}.
const (
	finishStop   = "stop"
	finishLength = "length"
	finishAbort  = "abort" // client gone, stream cut, server stopping
	finishError  = "error" // error frame inside the stream
)

// metrics is the server's private Prometheus registry: the engine's gauges and counters,
// mirrored by a statsCollector from one Stats snapshot per scrape, and the latency histograms
// and finish counts, observed by the chat handler in simulated seconds.
type metrics struct {
	registry *prometheus.Registry
	// The same observations go to the SGLang and the vLLM families ([0] and [1]), which
	// differ only in their names, labels and bucket bounds.
	ttft, itl, e2e [2]prometheus.Histogram
	success        map[string]prometheus.Counter // by finish reason
	// chunks counts stream chunks: all of them, their tokens, those written behind the engine
	// and those coalesced (see chunk).
	chunks, chunkTokens, chunksBehind, chunksCoalesced prometheus.Counter
}

// newMetrics registers every metric of the engine's server for model.
func newMetrics(e *engine.Engine, model string) *metrics {
	m := &metrics{registry: prometheus.NewRegistry(), success: map[string]prometheus.Counter{}}
	sglang := prometheus.Labels{"model_name": model, "engine_type": "decode"}
	vllm := prometheus.Labels{"model_name": model, "engine": "0"}
	hist := func(name, help string, labels prometheus.Labels, buckets []float64) prometheus.Histogram {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, ConstLabels: labels, Buckets: buckets})
		m.registry.MustRegister(h)
		return h
	}
	m.ttft[0] = hist("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", sglang, sglangTTFTBuckets)
	m.itl[0] = hist("sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", sglang, sglangITLBuckets)
	m.e2e[0] = hist("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", sglang, sglangE2EBuckets)
	m.ttft[1] = hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", vllm, vllmTTFTBuckets)
	m.itl[1] = hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", vllm, vllmITLBuckets)
	m.e2e[1] = hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", vllm, vllmE2EBuckets)
	success := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vllm:request_success_total", Help: "Count of successfully processed requests.", ConstLabels: vllm,
	}, []string{"finished_reason"})
	for _, r := range []string{finishStop, finishLength, finishAbort, finishError} {
		m.success[r] = success.WithLabelValues(r)
	}
	m.registry.MustRegister(success, newStatsCollector(e, model), newLagCollector(e, model))
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: prometheus.Labels{"model_name": model}})
		m.registry.MustRegister(c)
		return c
	}
	m.chunks = counter("agentsim_stream_chunks_total", "Stream chunks carrying tokens.")
	m.chunkTokens = counter("agentsim_stream_chunk_tokens_total", "Tokens carried by stream chunks; divided by agentsim_stream_chunks_total, the mean tokens per chunk.")
	m.chunksBehind = counter("agentsim_stream_chunks_behind_total",
		"Stream chunks written while more tokens were already waiting: the writer had fallen behind the engine, so the client got them late.")
	m.chunksCoalesced = counter("agentsim_stream_chunks_coalesced_total",
		"Stream chunks carrying more tokens than the profile's stream_interval, because the writer had fallen behind and the profile allows coalescing.")
	// The settings the chunk counters are judged against, so a client reading /metrics alone
	// (the harness, over any transport) knows whether coalescing was asked for.
	prof := e.Profile()
	setting := func(name, help string, v int) {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: prometheus.Labels{"model_name": model}})
		g.Set(float64(v))
		m.registry.MustRegister(g)
	}
	setting("agentsim_stream_interval_tokens", "Tokens one stream chunk carries: the profile's stream_interval (at least 1).", prof.ChunkTokens())
	setting("agentsim_stream_coalesce_tokens",
		"Most tokens one stream chunk carries when the writer has fallen behind: the profile's stream_coalesce_tokens, at least agentsim_stream_interval_tokens; above it, the profile asks for coalescing.",
		prof.CoalesceTokens())
	return m
}

// chunk counts a stream chunk of n tokens for a stream interval of interval tokens, written
// with pending more tokens already waiting.
func (m *metrics) chunk(n, interval, pending int) {
	m.chunks.Inc()
	m.chunkTokens.Add(float64(n))
	if pending > 0 {
		m.chunksBehind.Inc()
	}
	if n > interval {
		m.chunksCoalesced.Inc()
	}
}

// handler serves the registry in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// firstToken observes the time from request arrival to the first generated token.
func (m *metrics) firstToken(d time.Duration) {
	s := d.Seconds()
	m.ttft[0].Observe(s)
	m.ttft[1].Observe(s)
}

// interToken observes a chunk of n tokens that arrived gap after the previous chunk, as SGLang
// does: n observations of gap/n, whose sum is gap.
func (m *metrics) interToken(gap time.Duration, n int) {
	s := gap.Seconds() / float64(n)
	for range n {
		m.itl[0].Observe(s)
		m.itl[1].Observe(s)
	}
}

// endToEnd observes the time from request arrival to the end of its response.
func (m *metrics) endToEnd(d time.Duration) {
	s := d.Seconds()
	m.e2e[0].Observe(s)
	m.e2e[1].Observe(s)
}

// finished counts a request that ended for reason (one of the finish* constants).
func (m *metrics) finished(reason string) {
	if c, ok := m.success[reason]; ok {
		c.Inc()
	}
}
