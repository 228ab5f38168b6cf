// Package scrape reads an inference server's Prometheus /metrics and maps SGLang, vLLM,
// llama.cpp and TGI metric names onto agentsim's canonical gauges. Server gauges are evidence,
// not truth: SGLang refreshes its scheduler gauges only every few dozen decode steps, so the
// harness's own view of requests in flight stays primary.
package scrape

import (
	dto "github.com/prometheus/client_model/go"

	"github.com/agentsim/agentsim/events"
)

// source is one way to read a canonical gauge: the sum of one or more metric families, or
// the per-second rate of a counter. engine filters by the engine_type label when present.
type source struct {
	names  []string
	engine string
	rate   bool
}

// sources lists, per canonical gauge (named in events, as the keys of samples.jsonl's server
// gauges), where to look, first match wins.
var sources = map[string][]source{
	events.DecodeRunning: {
		{names: []string{"decode_running"}}, // the simulator's live metric (simserver/metrics_stats.go)
		{names: []string{"sglang:num_running_reqs"}, engine: "decode"},
		{names: []string{"vllm:num_requests_running"}},
		{names: []string{"llamacpp:requests_processing"}},
		{names: []string{"tgi_batch_current_size"}},
	},
	events.PrefillInflight: {
		{names: []string{"prefill_inflight"}}, // the simulator's live metric
		{names: []string{"sglang:num_prefill_inflight_queue_reqs", "sglang:num_prefill_prealloc_queue_reqs"}, engine: "prefill"},
	},
	events.Queued: {
		{names: []string{"sglang:num_queue_reqs"}},
		{names: []string{"vllm:num_requests_waiting"}},
		{names: []string{"llamacpp:requests_deferred"}},
		{names: []string{"tgi_queue_size"}},
	},
	events.KVUsage: {
		{names: []string{"sglang:token_usage"}, engine: "decode"},
		{names: []string{"vllm:kv_cache_usage_perc"}},
		{names: []string{"vllm:gpu_cache_usage_perc"}},
		// Older llama-server builds; recent ones list no KV-cache gauge (docs/files.md §2).
		{names: []string{"llamacpp:kv_cache_usage_ratio"}},
	},
	events.GenTokS: {
		{names: []string{"sglang:gen_throughput"}, engine: "decode"},
		{names: []string{"vllm:generation_tokens_total"}, rate: true},
		// None from llama-server: llamacpp:predicted_tokens_seconds is the mean rate of one
		// request, no aggregate, and llamacpp:tokens_predicted_total grows only when a request
		// ends, so its rate reads 0 while long requests stream and spikes when they end — a
		// gauge that would contradict the harness on every long run (docs/files.md §2).
	},
}

// familyValue sums a family's series, keeping only engine_type=engine when the family carries
// that label, and only tp_rank 0 when it carries tp_rank (other ranks repeat the same value).
func familyValue(mf *dto.MetricFamily, engine string) (float64, bool) {
	var sum float64
	found := false
	for _, m := range mf.GetMetric() {
		if !keep(m, engine) {
			continue
		}
		v, ok := value(m)
		if !ok {
			continue
		}
		sum += v
		found = true
	}
	return sum, found
}

func keep(m *dto.Metric, engine string) bool {
	for _, l := range m.GetLabel() {
		switch l.GetName() {
		case "engine_type":
			if engine != "" && l.GetValue() != engine {
				return false
			}
		case "tp_rank":
			if l.GetValue() != "0" {
				return false
			}
		}
	}
	return true
}

func value(m *dto.Metric) (float64, bool) {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}
