package simserver_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
)

// scrape fetches /metrics and parses it as the harness does, with expfmt.
func (ts *testServer) scrape() map[string]*dto.MetricFamily {
	ts.t.Helper()
	code, body := ts.get("/metrics")
	require.Equal(ts.t, http.StatusOK, code)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(ts.t, err, "parse /metrics:\n%s", body)
	return fams
}

// metricValue returns the value of the series of name whose labels include the given
// name/value pairs, and whether there is one.
func metricValue(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	fam, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range fam.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// gaugeValue is metricValue for a series that must exist.
func (ts *testServer) gaugeValue(name string, labels ...string) float64 {
	ts.t.Helper()
	v, ok := metricValue(ts.scrape(), name, labels...)
	require.True(ts.t, ok, "no series %s%v", name, labels)
	return v
}

// TestMetricsNames checks that /metrics parses and carries the SGLang names (with their
// engine_type labels), the vLLM names and the plain gauges, with values that follow a request.
func TestMetricsNames(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{})
		resp := ts.post(context.Background(), streamBody(`,"max_tokens":100,"ignore_eos":true`))
		_, err := readFrames(ts.clk, resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		fams := ts.scrape()

		sglang := map[string][]string{
			"sglang:num_running_reqs":                {"prefill", "decode"},
			"sglang:num_queue_reqs":                  {"prefill", "decode"},
			"sglang:token_usage":                     {"decode"},
			"sglang:gen_throughput":                  {"decode"},
			"sglang:cache_hit_rate":                  {"prefill"},
			"sglang:num_prefill_inflight_queue_reqs": {"prefill"},
			"sglang:num_prefill_prealloc_queue_reqs": {"prefill"},
			"sglang:num_decode_transfer_queue_reqs":  {"decode"},
			"sglang:num_decode_prealloc_queue_reqs":  {"decode"},
			"sglang:num_used_tokens":                 {"decode"},
			"sglang:max_total_num_tokens":            {"decode"},
			"sglang:decode_sum_seq_lens":             {"decode"},
			"sglang:num_retracted_reqs":              {"decode"},
			"sglang:prompt_tokens_total":             {"prefill"},
			"sglang:cached_tokens_total":             {"prefill"},
			"sglang:generation_tokens_total":         {"decode"},
			"sglang:num_requests_total":              {"decode"},
			"sglang:num_aborted_requests_total":      {"decode"},
			"sglang:num_retracted_requests_total":    {"decode"},
			"sglang:time_to_first_token_seconds":     {"decode"},
			"sglang:inter_token_latency_seconds":     {"decode"},
			"sglang:e2e_request_latency_seconds":     {"decode"},
		}
		for name, types := range sglang {
			fam, ok := fams[name]
			if !assert.True(t, ok, "missing %s", name) {
				continue
			}
			var got []string
			for _, m := range fam.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "engine_type" {
						got = append(got, l.GetValue())
					}
				}
			}
			sort.Strings(got)
			want := append([]string(nil), types...)
			sort.Strings(want)
			assert.Equal(t, want, got, "%s engine_type labels", name)
			_, ok = metricValue(fams, name, "model_name", "deepseek-v4-flash")
			assert.True(t, ok, "%s has model_name", name)
		}
		for _, name := range []string{
			"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
			"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:num_preemptions_total",
			"vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total", "vllm:request_success_total",
			"vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds", "vllm:e2e_request_latency_seconds",
			"decode_running", "prefill_inflight",
		} {
			assert.Contains(t, fams, name)
		}

		value := func(name string, labels ...string) float64 {
			v, ok := metricValue(fams, name, labels...)
			require.True(t, ok, "%s%v", name, labels)
			return v
		}
		assert.Equal(t, 100.0, value("sglang:generation_tokens_total"))
		assert.Equal(t, 100.0, value("vllm:generation_tokens_total"))
		assert.Equal(t, 1.0, value("sglang:num_requests_total"))
		assert.Equal(t, 1.0, value("vllm:request_success_total", "finished_reason", "length"))
		assert.Equal(t, 0.0, value("vllm:request_success_total", "finished_reason", "stop"))
		assert.Equal(t, 1.0, value("sglang:time_to_first_token_seconds"), "one TTFT observation")
		assert.Equal(t, 99.0, value("sglang:inter_token_latency_seconds"), "one ITL observation per token after the first")
		assert.Equal(t, 1.0, value("vllm:e2e_request_latency_seconds"))
		assert.Equal(t, 0.0, value("decode_running"))
		prompt := value("vllm:prompt_tokens_total")
		assert.Equal(t, prompt, value("sglang:prompt_tokens_total"))
		assert.Positive(t, prompt)

		// Bucket bounds are the servers' own (the parser adds +Inf).
		h := fams["sglang:time_to_first_token_seconds"].GetMetric()[0].GetHistogram()
		assert.Len(t, h.GetBucket(), len(simserver.SGLangTTFTBuckets)+1)
		assert.Equal(t, 400.0, h.GetBucket()[len(h.GetBucket())-2].GetUpperBound())
		h = fams["vllm:time_to_first_token_seconds"].GetMetric()[0].GetHistogram()
		assert.Equal(t, 2560.0, h.GetBucket()[len(h.GetBucket())-2].GetUpperBound())
	})
}

// TestMetricsInterTokenLatency checks that ITL is observed per token in simulated seconds: a
// healthy single stream steps every ≈10.3 ms, so the mean ITL is about that.
func TestMetricsInterTokenLatency(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{})
		resp := ts.post(context.Background(), streamBody(`,"max_tokens":200,"ignore_eos":true`))
		_, err := readFrames(ts.clk, resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		h := ts.scrape()["sglang:inter_token_latency_seconds"].GetMetric()[0].GetHistogram()
		require.Equal(t, uint64(199), h.GetSampleCount())
		step := engine.DSV4PD().DecodeStep(1, 200).Seconds()
		assert.InEpsilon(t, step, h.GetSampleSum()/float64(h.GetSampleCount()), 0.05)
	})
}
