package simserver

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentsim/agentsim/internal/engine"
)

// statsCollector mirrors the engine's Stats as Prometheus gauges and counters, reading one
// snapshot per scrape so that the values of a scrape are consistent with each other.
//
// Three naming families expose the same engine:
//   - SGLang names, labelled engine_type="prefill" or "decode" (each metric on the side of a
//     prefill/decode pair that reports it): the scheduler gauges come from Stats.Logged and so
//     are as stale as SGLang's (refreshed on each prefill batch and every DecodeLogInterval
//     decode steps — frozen when the scheduler stops); the tokenizer counters are live.
//   - vLLM names, labelled engine="0", all live.
//   - decode_running and prefill_inflight, unlabelled and live: the two gauges the incident
//     was watched with.
//
// The prealloc queue (disaggregated requests waiting for the decode engine to reserve their
// KV, before prefill) shows as both SGLang's num_prefill_prealloc_queue_reqs (its bootstrap
// queue, logged with the prefill gauges) and num_decode_prealloc_queue_reqs (logged with the
// decode gauges).
type statsCollector struct {
	engine  *engine.Engine
	mirrors []mirror
	descs   []*prometheus.Desc
}

// mirror is one exported series: its family, its engine_type (SGLang only) and its value.
type mirror struct {
	desc       *prometheus.Desc
	typ        prometheus.ValueType
	engineType string
	value      func(*engine.Stats) float64
}

var _ prometheus.Collector = (*statsCollector)(nil)

func newStatsCollector(e *engine.Engine, model string) *statsCollector {
	c := &statsCollector{engine: e}
	byName := map[string]*prometheus.Desc{}
	add := func(name, help string, typ prometheus.ValueType, variable []string, constant prometheus.Labels,
		engineType string, value func(*engine.Stats) float64) {
		d, ok := byName[name]
		if !ok {
			d = prometheus.NewDesc(name, help, variable, constant)
			byName[name] = d
			c.descs = append(c.descs, d)
		}
		c.mirrors = append(c.mirrors, mirror{desc: d, typ: typ, engineType: engineType, value: value})
	}
	sglangLabels := prometheus.Labels{"model_name": model}
	engineType := []string{"engine_type"}
	for _, s := range sglangSeries {
		add(s.name, s.help, s.typ, engineType, sglangLabels, s.engineType, s.value)
	}
	vllmLabels := prometheus.Labels{"model_name": model, "engine": "0"}
	for _, s := range vllmSeries {
		add(s.name, s.help, s.typ, nil, vllmLabels, "", s.value)
	}
	for _, s := range plainSeries {
		add(s.name, s.help, s.typ, nil, nil, "", s.value)
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.engine.Stats()
	for _, m := range c.mirrors {
		if m.engineType != "" {
			ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.value(&s), m.engineType)
		} else {
			ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.value(&s))
		}
	}
}

// series describes one exported value.
type series struct {
	name, help string
	typ        prometheus.ValueType
	engineType string
	value      func(*engine.Stats) float64
}

const (
	gauge   = prometheus.GaugeValue
	counter = prometheus.CounterValue
)

func f[T int | int64 | float64](v T) float64 { return float64(v) }

var sglangSeries = []series{
	// Scheduler gauges, as last logged.
	{"sglang:num_running_reqs", "The number of running requests.", gauge, "prefill", func(s *engine.Stats) float64 { return f(s.Logged.PrefillRunning) }},
	{"sglang:num_running_reqs", "The number of running requests.", gauge, "decode", func(s *engine.Stats) float64 { return f(s.Logged.DecodeRunning) }},
	{"sglang:num_queue_reqs", "The number of requests in the waiting queue.", gauge, "prefill", func(s *engine.Stats) float64 { return f(s.Logged.PrefillQueue) }},
	{"sglang:num_queue_reqs", "The number of requests in the waiting queue.", gauge, "decode", func(s *engine.Stats) float64 { return f(s.Logged.DecodeQueue) }},
	{"sglang:token_usage", "The token usage.", gauge, "decode", func(s *engine.Stats) float64 { return s.Logged.TokenUsage }},
	{"sglang:gen_throughput", "The generation throughput (token/s).", gauge, "decode", func(s *engine.Stats) float64 { return s.Logged.GenThroughput }},
	{"sglang:cache_hit_rate", "The prefix cache hit rate.", gauge, "prefill", func(s *engine.Stats) float64 { return s.Logged.CacheHitRate }},
	{"sglang:num_prefill_prealloc_queue_reqs", "The number of requests in the prefill prealloc queue.", gauge, "prefill", func(s *engine.Stats) float64 { return f(s.Logged.PrefillPrealloc) }},
	{"sglang:num_prefill_inflight_queue_reqs", "The number of requests in the prefill inflight queue.", gauge, "prefill", func(s *engine.Stats) float64 { return f(s.Logged.PrefillInflight) }},
	{"sglang:num_decode_prealloc_queue_reqs", "The number of requests in the decode prealloc queue.", gauge, "decode", func(s *engine.Stats) float64 { return f(s.Logged.DecodePrealloc) }},
	{"sglang:num_decode_transfer_queue_reqs", "The number of requests in the decode transfer queue.", gauge, "decode", func(s *engine.Stats) float64 { return f(s.Logged.DecodeTransfer) }},
	{"sglang:num_used_tokens", "The number of used tokens.", gauge, "decode", func(s *engine.Stats) float64 { return f(s.Logged.DecodeSumSeqLens) }},
	{"sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", gauge, "decode", func(s *engine.Stats) float64 { return f(s.KVCapacityTokens) }},
	{"sglang:decode_sum_seq_lens", "The sum of all sequence lengths in decode.", gauge, "decode", func(s *engine.Stats) float64 { return f(s.Logged.DecodeSumSeqLens) }},
	{"sglang:num_retracted_reqs", "The number of retracted requests.", gauge, "decode", func(s *engine.Stats) float64 { return f(s.Logged.DecodeRetracted) }},
	// Tokenizer counters, live.
	{"sglang:prompt_tokens_total", "Number of prefill tokens processed.", counter, "prefill", func(s *engine.Stats) float64 { return f(s.PromptTokens) }},
	{"sglang:cached_tokens_total", "Number of cached prompt tokens.", counter, "prefill", func(s *engine.Stats) float64 { return f(s.CachedTokens) }},
	{"sglang:generation_tokens_total", "Number of generation tokens processed.", counter, "decode", func(s *engine.Stats) float64 { return f(s.GeneratedTokens) }},
	{"sglang:num_requests_total", "Number of requests processed.", counter, "decode", func(s *engine.Stats) float64 { return f(s.Finished + s.Aborted) }},
	{"sglang:num_aborted_requests_total", "Number of requests aborted.", counter, "decode", func(s *engine.Stats) float64 { return f(s.Aborted) }},
	{"sglang:num_retracted_requests_total", "Total number of retracted requests due to kvcache full.", counter, "decode", func(s *engine.Stats) float64 { return f(s.Retracted) }},
	{"sglang:num_bootstrap_failed_reqs_total", "Number of requests whose bootstrap (KV reservation) timed out or failed.", counter, "prefill", func(s *engine.Stats) float64 { return f(s.TimedOutBootstrap) }},
	{"sglang:num_transfer_failed_reqs_total", "Number of requests whose KV transfer timed out or failed.", counter, "decode", func(s *engine.Stats) float64 { return f(s.TimedOut - s.TimedOutBootstrap) }},
}

var vllmSeries = []series{
	{"vllm:num_requests_running", "Number of requests in model execution batches.", gauge, "", func(s *engine.Stats) float64 { return f(s.DecodeRunning) }},
	{"vllm:num_requests_waiting", "Number of requests waiting to be processed.", gauge, "", func(s *engine.Stats) float64 { return f(s.PrefillQueued + s.DecodeWaiting) }},
	{"vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", gauge, "", kvUsage},
	{"vllm:prompt_tokens_total", "Number of prefill tokens processed.", counter, "", func(s *engine.Stats) float64 { return f(s.PromptTokens) }},
	{"vllm:generation_tokens_total", "Number of generation tokens processed.", counter, "", func(s *engine.Stats) float64 { return f(s.GeneratedTokens) }},
	{"vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", counter, "", func(s *engine.Stats) float64 { return f(s.Retracted) }},
	{"vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", counter, "", func(s *engine.Stats) float64 { return f(s.PromptTokens) }},
	{"vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", counter, "", func(s *engine.Stats) float64 { return f(s.CachedTokens) }},
}

var plainSeries = []series{
	{"decode_running", "Requests in the decode engine's running batch, live.", gauge, "", func(s *engine.Stats) float64 { return f(s.DecodeRunning) }},
	{"prefill_inflight", "Prefilled requests whose KV transfer to decode has not completed (pinned ones included), live.", gauge, "", func(s *engine.Stats) float64 { return f(s.PrefillInflight) }},
}

func kvUsage(s *engine.Stats) float64 {
	if s.KVCapacityTokens == 0 {
		return 0
	}
	return float64(s.KVUsedTokens) / float64(s.KVCapacityTokens)
}
