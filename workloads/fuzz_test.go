package workloads

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzWorkloadFile loads arbitrary bytes as a workload file and as a run's config.yaml. Load
// must not panic; what it accepts must validate and render as YAML that loads back to the same
// workload; what it refuses must be a *ConfigError.
func FuzzWorkloadFile(f *testing.F) {
	for _, name := range Names() {
		data, _ := Builtin(name)
		f.Add(data)
	}
	for _, seed := range []string{
		"", "{}", "agents: 2\n", "agents: [1, 2\n", "- agents: 8\n", "agents: 1\nagents: 2\n",
		"retry: {jitter: .nan}\n", "pacer: {kind: rate, rps: .inf, burst: 1}\n",
		"context:\n  read_tokens: {dist: normal, mean: .nan, stddev: 1}\n",
		"think_time: {dist: exp, mean: .inf}\n", "duration: 1e400s\n", "agents: 1e400\n",
		"context: {system_tokens: 0, initial_tokens: 0, read_tokens: {dist: exp, mean: 50}}\n",
		"request: {output_tokens: {dist: exp, mean: 100}, force_output_length: true}\n",
		"context: {max_context_tokens: 4000, initial_tokens: 3990}\nrequest: {output_tokens: 600}\n",
		"think_time: {dist: mixture, parts: [{weight: 1, dist: const, value: 1s}, {weight: .nan, dist: exp, mean: 1s}]}\n",
		"context: {read_tokens: {dist: mixture, parts: [{weight: 1, dist: mixture, parts: []}]}}\n",
		"tools: {set: coding, choice: read, per_tool: {bash: {latency: 1s}, Read: {result_tokens: 5}}}\n",
		"tools: {set: browse, per_tool: {\"a b\": 1, x: [1], read_page: {latency: {dist: exp}}}}\n",
		"tools: {set: ./nope.json}\ntask: {steps: 0, calls_per_step: {dist: mixture, parts: []}}\n",
		"a: &a [*a, *a]\nb: &b [*a, *a]\n", "server: http://alice:pw@h\napi_key: <redacted>\nreproduce: {seed: 1}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, problems := fileLayer("w.yaml", "", data)
		w, err := stack(problems, true, l)
		check(t, w, err)
		w, err = LoadRecorded(data)
		check(t, w, err)
	})
}

// FuzzOverride sets one key from the command line, as --set key=value does, on a built-in.
func FuzzOverride(f *testing.F) {
	for _, kv := range [][2]string{
		{"agents", "8"}, {"agents", "-3"}, {"agents", "many"}, {"retry.jitter", "NaN"}, {"retry.jitter", "+Inf"},
		{"pacer.rps", "1e308"}, {"duration", "5h"}, {"duration", "9999999999h"}, {"seed", "-9223372036854775808"},
		{"context.read_tokens", "{dist: normal, mean: NaN, stddev: 1}"}, {"context.read_tokens", "{dist: uniform, min: 2, max: 1}"},
		{"think_time", "{dist: exp, mean: 2s}"}, {"think_time", "{dist: exp, mean: Infs}"},
		{"think_time", "{dist: mixture, parts: [{weight: 2, dist: const, value: 1s}, {weight: 1e308, dist: exp, mean: 1s}]}"}, {"request.output_tokens", "0"},
		{"tools.set", "coding"}, {"tools.per_tool.bash.latency", "1s"}, {"tools.per_tool", "{read: {result_tokens: 3}}"},
		{"tools.per_tool.Read.latency", "{dist: exp, mean: 1s}"}, {"task.steps", "0"}, {"tools.choice", "bash"},
		{"pacer.kind", "rate"}, {"pacer", "x"}, {"api_key", "sk-1"}, {"context.initial_tokens", "0"}, {"model", ""},
	} {
		f.Add(kv[0], kv[1])
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		w, err := Load(LoadOptions{Workload: "smoke", Overrides: []Override{{Key: key, Value: value, Source: "--set"}}})
		check(t, w, err)
	})
}

// check asserts Load's contract on one result.
func check(t *testing.T, w *Workload, err error) {
	t.Helper()
	if err != nil {
		var ce *ConfigError
		if !errors.As(err, &ce) || len(ce.Problems) == 0 {
			t.Fatalf("error %v is not a *ConfigError with problems", err)
		}
		return
	}
	if verr := w.Validate(); verr != nil {
		t.Fatalf("accepted workload does not validate: %v", verr)
	}
	b, err := w.YAML()
	if err != nil {
		t.Fatalf("YAML: %v", err)
	}
	l, problems := fileLayer("rt.yaml", "", b)
	back, err := stack(problems, false, l)
	if err != nil {
		t.Fatalf("YAML does not load back: %v\n%s", err, b)
	}
	if !reflect.DeepEqual(back, w) {
		t.Fatalf("YAML loads back as\n%+v\nwant\n%+v", back, w)
	}
}
