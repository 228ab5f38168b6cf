package scrape

import (
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
	"github.com/agentsim/agentsim/internal/memnet"
)

const sglangText = `# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{engine_type="prefill",model_name="m",tp_rank="0"} 3
sglang:num_running_reqs{engine_type="decode",model_name="m",tp_rank="0"} 16
sglang:num_running_reqs{engine_type="decode",model_name="m",tp_rank="1"} 16
# TYPE sglang:num_prefill_inflight_queue_reqs gauge
sglang:num_prefill_inflight_queue_reqs{engine_type="prefill",model_name="m"} 12
# TYPE sglang:num_prefill_prealloc_queue_reqs gauge
sglang:num_prefill_prealloc_queue_reqs{engine_type="prefill",model_name="m"} 4
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{engine_type="prefill",model_name="m"} 2
sglang:num_queue_reqs{engine_type="decode",model_name="m"} 1
# TYPE sglang:token_usage gauge
sglang:token_usage{engine_type="decode",model_name="m"} 0.25
# TYPE sglang:gen_throughput gauge
sglang:gen_throughput{engine_type="decode",model_name="m"} 431.5
`

const vllmText = `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 30
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 5
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="m"} %d
`

func serve(t *testing.T, body func() (int, string)) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		code, text := body()
		w.WriteHeader(code)
		fmt.Fprint(w, text)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

func TestSGLangNamesMapToCanonical(t *testing.T) {
	url := serve(t, func() (int, string) { return 200, sglangText })
	s := New([]string{url}, nil, clock.Real())
	got := s.Scrape(t.Context())
	assert.Empty(t, got.Errors)
	assert.Equal(t, map[string]float64{
		events.DecodeRunning:   16,   // decode engine only, tp_rank 0 only
		events.PrefillInflight: 16,   // inflight + prealloc
		events.Queued:          3,    // both engines' queues
		events.KVUsage:         0.25, // decode engine
		events.GenTokS:         431.5,
	}, got.Gauges)
	assert.Contains(t, s.Found(), "decode_running ← sglang:num_running_reqs")
}

// serveInMemory serves body on an in-memory listener for a test inside a synctest bubble and
// returns the /metrics URL and a client that reaches it; both stop with the test.
func serveInMemory(t *testing.T, body func() (int, string)) (string, *http.Client) {
	l := memnet.Listen()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		code, text := body()
		w.WriteHeader(code)
		fmt.Fprint(w, text)
	})}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(l) }()
	client := l.Client()
	t.Cleanup(func() {
		client.CloseIdleConnections()
		_ = srv.Close()
		<-served
	})
	return "http://vllm.test/metrics", client
}

// TestVLLMGenerationRateFromCounter: gen_tok_s is the counter's increase over the simulated
// time between two scrapes: 500 tokens in 10 s of virtual time at speedup 1 are 50 tok/s,
// and 500 tokens in 20 simulated seconds (1 s of wall time at speedup 20) are 25 tok/s.
func TestVLLMGenerationRateFromCounter(t *testing.T) {
	for _, tc := range []struct {
		speedup float64
		wall    time.Duration
		want    float64
	}{{1, 10 * time.Second, 50}, {20, time.Second, 25}} {
		synctest.Test(t, func(t *testing.T) {
			var total atomic.Int64
			total.Store(1000)
			url, client := serveInMemory(t, func() (int, string) { return 200, fmt.Sprintf(vllmText, total.Load()) })
			clk, err := clock.New(tc.speedup)
			require.NoError(t, err)
			s := New([]string{url}, client, clk)
			first := s.Scrape(t.Context())
			assert.Equal(t, 30.0, first.Gauges[events.DecodeRunning])
			assert.NotContains(t, first.Gauges, events.GenTokS, "a rate needs two samples")
			assert.Contains(t, s.Found(), "gen_tok_s ← rate(vllm:generation_tokens_total)", "found from its first sight")
			assert.NotContains(t, s.Found(), "gen_tok_s;", "and never called not found")
			time.Sleep(tc.wall)
			total.Add(500)
			second := s.Scrape(t.Context())
			require.Contains(t, second.Gauges, events.GenTokS)
			assert.InDelta(t, tc.want, second.Gauges[events.GenTokS], 1e-9, "gen_tok_s at speedup %v", tc.speedup)
			assert.Equal(t, 5.0, second.Gauges[events.Queued])
			assert.Contains(t, s.Found(), "gen_tok_s ← rate(vllm:generation_tokens_total)")
			assert.Contains(t, s.Found(), "not found: prefill_inflight")
			for _, name := range events.Gauges {
				assert.Equal(t, s.Source(name), SourceIn(s.Found(), name), "SourceIn(Found(), %s)", name)
			}
		})
	}
}

func TestMissingMetricsEndpoint(t *testing.T) {
	url := serve(t, func() (int, string) { return 404, "not found" })
	s := New([]string{url}, nil, clock.Real())
	got := s.Scrape(t.Context())
	assert.Empty(t, got.Gauges)
	require.Len(t, got.Errors, 1)
	assert.Empty(t, s.found, "no canonical gauge read")
	assert.Equal(t, "server metrics: not available (GET "+url+" → 404)", s.Found())
	assert.Empty(t, SourceIn(s.Found(), events.DecodeRunning), "nothing read, nothing found")
}

func TestFirstURLWinsAcrossEngines(t *testing.T) {
	prefill := serve(t, func() (int, string) {
		return 200, "# TYPE sglang:num_prefill_inflight_queue_reqs gauge\nsglang:num_prefill_inflight_queue_reqs 7\n"
	})
	decode := serve(t, func() (int, string) {
		return 200, "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs 9\n"
	})
	s := New([]string{prefill, decode}, nil, clock.Real())
	got := s.Scrape(t.Context())
	assert.Equal(t, 7.0, got.Gauges[events.PrefillInflight])
	assert.Equal(t, 9.0, got.Gauges[events.DecodeRunning], "unlabelled series count for any engine")
}

// simStreamText is the simulator's stream chunk metrics after chunks chunks of which behind
// were written behind the engine.
const simStreamText = `# TYPE agentsim_stream_chunks_total counter
agentsim_stream_chunks_total{model_name="m"} %d
# TYPE agentsim_stream_chunk_tokens_total counter
agentsim_stream_chunk_tokens_total{model_name="m"} %d
# TYPE agentsim_stream_chunks_behind_total counter
agentsim_stream_chunks_behind_total{model_name="m"} %d
# TYPE agentsim_stream_chunks_coalesced_total counter
agentsim_stream_chunks_coalesced_total{model_name="m"} 0
# TYPE agentsim_stream_interval_tokens gauge
agentsim_stream_interval_tokens{model_name="m"} 1
# TYPE agentsim_stream_coalesce_tokens gauge
agentsim_stream_coalesce_tokens{model_name="m"} 1
`

// TestStreamCountsGrowthSinceFirstScrape: the simulator's stream counters are reported as
// their growth since the first scrape (a server that served before the run is not charged
// with that), and a server without them reports none.
func TestStreamCountsGrowthSinceFirstScrape(t *testing.T) {
	var chunks atomic.Int64
	chunks.Store(100)
	url := serve(t, func() (int, string) {
		c := chunks.Load()
		return 200, fmt.Sprintf(simStreamText, c, 2*c, c/10)
	})
	s := New([]string{url}, nil, clock.Real())
	_, ok := s.Stream()
	assert.False(t, ok, "Stream before any scrape")
	s.Scrape(t.Context())
	chunks.Store(350)
	s.Scrape(t.Context())
	got, ok := s.Stream()
	require.True(t, ok)
	assert.Equal(t, map[string]float64{StreamChunks: 250, StreamTokens: 500, StreamBehind: 25, StreamCoalesced: 0}, got.Counters)
	assert.Equal(t, []float64{1, 1}, []float64{got.Interval, got.Coalesce}, "interval, coalesce limit")

	other := New([]string{serve(t, func() (int, string) { return 200, fmt.Sprintf(vllmText, 7) })}, nil, clock.Real())
	other.Scrape(t.Context())
	_, ok = other.Stream()
	assert.False(t, ok, "Stream of a vLLM /metrics")
}
