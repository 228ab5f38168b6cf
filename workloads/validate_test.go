package workloads

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInvalidFiles maps each testdata/invalid-*.yaml, one per rule, to the exact error Load
// gives for it. Problems found while reading a file carry its path; problems of the resolved
// configuration do not (any layer may have set the value).
func TestInvalidFiles(t *testing.T) {
	const want1to10000 = "want an integer from 1 to 10000"
	tests := []struct {
		file string
		want string
		// prefix marks messages owned by package pacer: only key and value are pinned here.
		prefix bool
	}{
		// Counts: zero, negative, not an integer, null.
		{"agents-zero", "agents: 0 is not allowed: " + want1to10000, false},
		{"agents-negative", "agents: -3 is not allowed: " + want1to10000, false},
		{"agents-type", `@: agents: "many" is not allowed: want an integer`, false},
		{"agents-fraction", `@: agents: 2.5 is not allowed: want an integer`, false},
		{"agents-null", `@: agents: null is not allowed: want an integer`, false},
		{"rounds-zero", "rounds: 0 is not allowed: want an integer from 1 to 100000", false},
		// Durations: negative, unparsable, a bare number that would mean nanoseconds.
		{"duration-negative", "duration: -5m is not allowed: want a duration of at least 0s", false},
		{"duration-syntax", `@: duration: "5 minutes" is not allowed: want a duration such as 200ms, 90s or 5m`, false},
		{"duration-bare-number", `@: request.timeout: 30 is not allowed: want a duration such as 200ms, 90s or 5m`, false},
		{"start-jitter-negative", "start_jitter: -1s is not allowed: want a duration of at least 0s", false},
		// Names.
		{"name", `name: "my workload" is not allowed: want letters, digits, '.', '_' or '-'`, false},
		{"model-empty", `model: "" is not allowed: want a model name`, false},
		// Context and request sizes.
		{"system-tokens-negative", "context.system_tokens: -1 is not allowed: want an integer from 0 to 10000000", false},
		{"max-context-too-small", "context.max_context_tokens: 4096 is not allowed: want more than context.system_tokens + context.initial_tokens (10000)", false},
		{"max-tokens-zero", "request.max_tokens: 0 is not allowed: want an integer from 1 to 10000000", false},
		{"max-tokens-over-context", "request.max_tokens: 200000 is not allowed: want at most context.max_context_tokens (131072)", false},
		// The agents speak chat completions or the Responses API, nothing else.
		{"request-api", `request.api: "completions" is not allowed: want one of chat, responses`, false},
		{"reasoning-effort", `request.reasoning_effort: "extreme" is not allowed: want one of none, minimal, low, medium, high, max`, false},
		{"stream-not-bool", `@: request.stream: "yes please" is not allowed: want true or false`, false},
		// Agents only stream.
		{"stream-false", "request.stream: false is not allowed: want true (agents always stream their requests)", false},
		// Distributions: shape errors are found while reading, range errors after resolving.
		{"dist-kind", `@: context.read_tokens.dist: "gaussian" is not allowed: want one of const, uniform, normal, exp, lognormal, mixture`, false},
		{"dist-kind-missing", `@: context.read_tokens.dist: missing: want one of const, uniform, normal, exp, lognormal, mixture`, false},
		{"dist-min-over-max", "context.read_tokens: {dist: uniform, min: 12000, max: 2000} is not allowed: want 0 ≤ min ≤ max", false},
		{"dist-field-missing", `@: request.output_tokens.stddev: missing: a normal dist takes mean and stddev`, false},
		{"dist-field-unknown", `@: unknown key "request.output_tokens.mean": a uniform dist takes min and max`, false},
		{"dist-negative-const", "context.read_tokens: -5 is not allowed: want a value of at least 0", false},
		{"dist-exp-mean-zero", "think_time: {dist: exp, mean: 0s} is not allowed: want mean > 0", false},
		{"dist-normal-negative-stddev", "tool_time: {dist: normal, mean: 1s, stddev: -1s} is not allowed: want mean ≥ 0 and stddev ≥ 0", false},
		{"dist-lognormal-mean-zero", "context.read_tokens: {dist: lognormal, mean: 0, stddev: 100} is not allowed: want mean > 0 and stddev ≥ 0", false},
		{"dist-duration-without-unit", `@: tool_time.min: 200 is not allowed: want a duration such as 200ms, 90s or 5m`, false},
		// A mixture's parts: shape errors name the part's key, range errors the part.
		{"dist-mixture-part", `@: context.read_tokens.parts[0].max: missing: a uniform dist takes min and max`, false},
		{"dist-mixture-weight", "think_time.parts[1]: {weight: 0, dist: exp, mean: 1m} is not allowed: want a weight > 0", false},
		{"dist-tokens-not-integer", `@: context.read_tokens.min: "2k" is not allowed: want an integer`, false},
		// Strictness: unknown keys, with a suggestion when one is near.
		{"unknown-key", `@: unknown key "agentz"; did you mean "agents"?`, false},
		{"unknown-nested-key", `@: unknown key "pacer.slotz"; did you mean "pacer.slots"?`, false},
		{"unknown-key-no-suggestion", `@: unknown key "colour"`, false},
		{"section-not-mapping", `@: context: 5 is not allowed: want a mapping of context.* keys`, false},
		// Files that are not workloads.
		{"not-yaml", `@: not YAML: line 1: did not find expected ',' or ']'`, false},
		{"top-level-list", `@: [{agents: 8}] is not allowed: want a mapping of keys at the top level, such as agents: 8`, false},
		{"duplicate-key", `@: not YAML: line 2: mapping key "agents" already defined at line 1`, false},
		// Watchdog, sampling, grace.
		{"watchdog-hang-before-stall", "watchdog.hang_after: 1m is not allowed: want a duration longer than watchdog.stall_after (5m)", false},
		{"watchdog-stall-zero", "watchdog.stall_after: 0s is not allowed: want a duration longer than 0s", false},
		// A run cannot be judged slow from zero latency on.
		{"watchdog-slow-zero", "watchdog.slow_after: 0s is not allowed: want a duration longer than 0s", false},
		{"sample-interval-zero", "sample_interval: 0s is not allowed: want a duration longer than 0s", false},
		{"grace-negative", "grace: -1s is not allowed: want a duration of at least 0s", false},
		// Sections validated by package pacer.
		{"timeout-negative", "request.idle_timeout: -1s is not allowed: ", true},
		{"retry-max-negative", "retry.max: -1 is not allowed: ", true},
		{"pacer-kind", `pacer.kind: "fifo" is not allowed: `, true},
		{"pacer-slots-zero", "pacer.slots: 0 is not allowed: ", true},
		// Not-a-number and infinities, wherever a number is taken.
		{"float-nan", `@: retry.jitter: NaN is not allowed: want a number`, false},
		{"float-inf", `@: pacer.rps: +Inf is not allowed: want a number`, true},
		{"dist-nan", `@: context.read_tokens.mean: NaN is not allowed: want an integer`, false},
		// Keys allowed one by one that together cannot send a request a server takes.
		{"empty-prompt", "context.initial_tokens: 0 is not allowed: want at least 1 when context.system_tokens is 0 and " +
			"context.read_tokens may be 0: the first request would have no message, which servers refuse", false},
		{"force-output-may-be-zero", "request.output_tokens: {dist: exp, mean: 100} is not allowed: want a length that is never 0 " +
			"with request.force_output_length (a const or a uniform with min ≥ 1): it is sent as max_tokens, which servers refuse below 1", false},
		{"first-round-too-big", "context.max_context_tokens: 4000 is not allowed: want at least the smallest first round: " +
			"context.system_tokens + context.initial_tokens + the least context.read_tokens and request.output_tokens (4100)", false},
		// Thresholds: a rule that does not parse, an unknown figure, not a mapping (gate owns
		// the messages: key and value pinned here).
		{"thresholds-rule", `@: thresholds.e2e.p90: "<= 1.1 * baseln" is not allowed: want <, <=, > or >= followed by a duration with its unit`, true},
		{"thresholds-figure", `@: thresholds.e2e.p95: unknown figure "e2e.p95": did you mean "e2e.p90"?`, true},
		{"thresholds-type", `@: thresholds: [e2e.p90] is not allowed: want a mapping of figures to rules`, true},
		// Tools: the set, the choice against the set, the latency and result sizes, per tool.
		{"tools-set-empty", `tools.set: "" is not allowed: want one of none, coding, browse, or the path of a JSON file holding an OpenAI tools array`, false},
		{"tools-choice", `tools.choice: "any tool" is not allowed: want one of auto, none, required, or the name of a function tool of tools.set`, false},
		{"tools-choice-unknown", `tools.choice: "open_page" is not allowed: want one of auto, none, required, or the name of a function tool of tools.set ` +
			`(bash, edit, webfetch, glob, grep, list, read, write, todowrite, todoread)`, false},
		// A choice other than auto or none needs a tool to call.
		{"tools-choice-no-tools", `tools.choice: "required" is not allowed: want auto or none with tools.set none (no tool is offered)`, false},
		{"tools-latency", "tools.latency: {dist: exp, mean: 0s} is not allowed: want mean > 0", false},
		{"tools-per-tool-name", `tools.per_tool.bash: "bash" is not allowed: want the name of a function tool of tools.set ` +
			`(search, open_page, read_page, scroll, find_in_page)`, false},
		{"tools-per-tool-bad-name", `@: unknown key "tools.per_tool.read page": "read page" is not allowed as a name in tools.per_tool: ` +
			`want letters, digits, '_' or '-', at most 64`, false},
		{"tools-per-tool-key", `@: unknown key "tools.per_tool.read_page.latncy"; did you mean "tools.per_tool.read_page.latency"?`, false},
		{"tools-per-tool-entry", `@: tools.per_tool.read_page: 5 is not allowed: want a mapping of its keys (latency and result_tokens)`, false},
		{"tools-per-tool-not-mapping", `@: tools.per_tool: [bash] is not allowed: want a mapping of names, each to its keys ` +
			`(latency and result_tokens), such as {bash: {latency: …}}`, false},
		{"tools-per-tool-dist", "tools.per_tool.read_page.result_tokens: -5 is not allowed: want a value of at least 0", false},
		{"hold-across-tools", `@: pacer.hold_across_tools: "maybe" is not allowed: want true or false`, false},
		// Task: counts whose mean is at least 1, sizes of at least 0.
		{"task-steps", "task.steps: 0 is not allowed: want a distribution whose mean is at least 1 (it is 0; samples below 1 count as 1)", false},
		{"task-calls", "task.calls_per_step: {dist: uniform, min: 3, max: 1} is not allowed: want 0 ≤ min ≤ max", false},
		{"task-message-tokens", "task.message_tokens: -1 is not allowed: want a value of at least 0", false},
		// Every problem at once, reading problems first.
		{"many", strings.Join([]string{
			`@: unknown key "pacer.slotz"; did you mean "pacer.slots"?`,
			`@: request.timeout: "soon" is not allowed: want a duration such as 200ms, 90s or 5m`,
			"agents: 0 is not allowed: " + want1to10000,
			"rounds: -1 is not allowed: want an integer from 1 to 100000",
			`request.reasoning_effort: "extreme" is not allowed: want one of none, minimal, low, medium, high, max`,
		}, "\n"), false},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		path := filepath.Join("testdata", "invalid-"+tt.file+".yaml")
		seen[path] = true
		want := strings.ReplaceAll(tt.want, "@", path)
		_, err := Load(LoadOptions{Workload: path})
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("Load(%s) = %v; want a *ConfigError", path, err)
			continue
		}
		got := err.Error()
		if tt.prefix && !strings.HasPrefix(got, want) || !tt.prefix && got != want {
			t.Errorf("Load(%s) error =\n%s\nwant\n%s", path, got, want)
		}
	}
	// Every rule file is in the table, so none is silently untested.
	files, _ := filepath.Glob(filepath.Join("testdata", "invalid-*.yaml"))
	for _, f := range files {
		if !seen[f] {
			t.Errorf("%s has no expected message in TestInvalidFiles", f)
		}
	}
}

// TestValidateBuiltins checks that every built-in and the defaults validate.
func TestValidateBuiltins(t *testing.T) {
	d := Defaults()
	if err := d.Validate(); err != nil {
		t.Errorf("Defaults().Validate() = %v; want nil", err)
	}
	for _, name := range Names() {
		if _, err := Load(LoadOptions{Workload: name}); err != nil {
			t.Errorf("Load(%q) = %v; want nil", name, err)
		}
	}
}

// TestMissingWorkload covers a name that is neither a built-in nor a file, and a path that
// does not exist.
func TestMissingWorkload(t *testing.T) {
	tests := []struct{ workload, want string }{
		// A bare word is taken for a built-in name first.
		{"ocbrose", "workload ocbrose: no built-in workload has that name (want one of coding-agent, ocbrowse, smoke, synthetic) and no such file exists"},
		// A path is a file.
		{"testdata/nope.yaml", "testdata/nope.yaml: cannot read the file: no such file or directory"},
		// A directory is not a file.
		{"testdata", "testdata: not a regular file (it is a directory): want a YAML file"},
	}
	for _, tt := range tests {
		_, err := Load(LoadOptions{Workload: tt.workload})
		if err == nil || err.Error() != tt.want {
			t.Errorf("Load(%q) error = %v; want %q", tt.workload, err, tt.want)
		}
	}
	if _, err := os.Stat("testdata/nope.yaml"); err == nil {
		t.Fatal("testdata/nope.yaml exists; the test needs it not to")
	}
}

// TestFirstRoundReservesWhatMaxTokensBounds: the first round must fit max_context_tokens with
// the output it reserves, which request.max_tokens bounds unless the length is forced: as the
// agents' context check reckons it.
func TestFirstRoundReservesWhatMaxTokensBounds(t *testing.T) {
	load := func(force string) error {
		var over []Override
		for _, kv := range [][2]string{{"request.force_output_length", force}, {"request.max_tokens", "50"},
			{"context.read_tokens", "600"}, {"context.max_context_tokens", "1460"}} {
			over = append(over, Override{Key: kv[0], Value: kv[1], Source: "--set"})
		}
		_, err := Load(LoadOptions{Workload: "smoke", Overrides: over})
		return err
	}
	// 200 + 600 + 600 + min(64, 50) = 1450 fits 1460.
	if err := load("false"); err != nil {
		t.Errorf("an output bounded by max_tokens 50: %v", err)
	}
	// Forced, the sampled 64 is sent: 1464 does not.
	if err := load("true"); err == nil || !strings.Contains(err.Error(), "(1464)") {
		t.Errorf("a forced output of at least 64: %v; want the smallest first round, 1464", err)
	}
}
