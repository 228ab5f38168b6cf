package cli

import (
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadInputExits2 checks that every kind of bad input — usage errors, files that are not
// workloads, numbers that are not finite, URLs without a scheme, workloads that cannot send a
// request a server takes — exits 2 at once, before anything starts, with a message naming
// what the user typed and what is allowed.
func TestBadInputExits2(t *testing.T) {
	t.Chdir(t.TempDir()) // a case that ran by mistake leaves no runs/ behind
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, tc := range []struct {
		name   string
		args   []string
		msg    []string
		absent []string
	}{
		// Usage errors that cobra finds.
		{"unknown command", []string{"runn"}, []string{`unknown command "runn"`, "run"}, nil},
		{"run with an argument", []string{"run", "extra-arg"}, []string{`run takes no arguments, got ["extra-arg"]`, "--set key=value"}, nil},
		{"workloads show without a name", []string{"workloads", "show"}, []string{"workloads show takes one workload name or file", "got 0 arguments"}, nil},
		{"workloads show with two names", []string{"workloads", "show", "smoke", "ocbrowse"}, []string{"got 2 arguments"}, nil},
		{"workloads unknown subcommand", []string{"workloads", "list"}, []string{`unknown command "list"`}, nil},
		{"version with an argument", []string{"version", "now"}, []string{`unknown command "now"`}, nil},
		// Workload and config files are read only if regular: a device that never ends, a FIFO
		// no one writes to.
		{"workload /dev/zero", []string{"run", "--workload", "/dev/zero"}, []string{"/dev/zero: not a regular file (it is a character device)"}, nil},
		{"workload fifo", []string{"run", "--workload", fifo}, []string{fifo + ": not a regular file (it is a named pipe)"}, nil},
		{"config fifo", []string{"run", "--workload", "smoke", "--config", fifo}, []string{"--config " + fifo + ": not a regular file"}, nil},
		{"show /dev/zero", []string{"workloads", "show", "/dev/zero"}, []string{"not a regular file"}, nil},
		// A workload that cannot send a request a server takes.
		{"empty workload", []string{"run", "--workload", writeFile(t, "empty.yaml", "")}, []string{"empty.yaml: the file sets no key"}, nil},
		{"zero-token prompt", []string{"run", "--workload", "smoke", "--set", "context.system_tokens=0", "--set", "context.initial_tokens=0",
			"--set", "context.read_tokens=0"}, []string{"context.initial_tokens: 0 is not allowed", "no message"}, nil},
		{"forced output may be 0", []string{"run", "--workload", "smoke", "--set", "request.output_tokens={dist: exp, mean: 50}"},
			[]string{"request.output_tokens: {dist: exp, mean: 50} is not allowed", "max_tokens"}, nil},
		{"first round does not fit", []string{"run", "--workload", "smoke", "--set", "context.max_context_tokens=1050", "--set", "request.max_tokens=100"},
			[]string{"context.max_context_tokens: 1050 is not allowed: want at least the smallest first round", "(1064)"}, nil},
		// Numbers that are not finite, wherever a number is taken.
		{"speedup NaN", []string{"run", "--workload", "smoke", "--speedup", "NaN"}, []string{"--speedup: NaN is not allowed: want a number from 1 to 1000000"}, nil},
		{"speedup Inf", []string{"run", "--workload", "smoke", "--speedup", "Inf"}, []string{"--speedup: +Inf is not allowed"}, nil},
		{"speedup 0", []string{"run", "--workload", "smoke", "--speedup", "0"}, []string{"--speedup: 0 is not allowed"}, nil},
		{"speedup negative", []string{"run", "--workload", "smoke", "--speedup", "-2"}, []string{"--speedup: -2 is not allowed"}, nil},
		{"--set NaN", []string{"run", "--workload", "smoke", "--set", "retry.jitter=NaN"}, []string{`--set retry.jitter=NaN: retry.jitter: "NaN" is not allowed: want a number`}, nil},
		{"--set Inf rate", []string{"run", "--workload", "smoke", "--set", "pacer.kind=rate", "--set", "pacer.rps=+Inf", "--set", "pacer.burst=1"},
			[]string{`--set pacer.rps=+Inf: pacer.rps: "+Inf" is not allowed`}, nil},
		{"--set NaN in a dist", []string{"run", "--workload", "smoke", "--set", "context.read_tokens={dist: normal, mean: NaN, stddev: 1}"},
			[]string{`context.read_tokens.mean: "NaN" is not allowed`}, nil},
		{"YAML .nan", []string{"run", "--workload", writeFile(t, "nan.yaml", "name: n\nretry: {jitter: .nan}\n")}, []string{"retry.jitter: NaN is not allowed"}, nil},
		{"YAML .inf think time", []string{"run", "--workload", writeFile(t, "inf.yaml", "name: n\nthink_time: {dist: exp, mean: .inf}\n")},
			[]string{"think_time.mean: +Inf is not allowed"}, nil},
		{"fault parameter NaN", []string{"run", "--workload", "smoke", "--sim-fault", "drop", "--sim-fault-param", "fraction=NaN"},
			[]string{"fraction: NaN is not allowed"}, nil},
		// Messages name the flags the user typed.
		{"fault parameter without fault", []string{"run", "--workload", "smoke", "--sim-fault-param", "fraction=0.5"},
			[]string{`--sim-fault-param "fraction=0.5"`}, []string{" --fault-param"}},
		{"unknown fault", []string{"run", "--workload", "smoke", "--sim-fault", "dropp"}, []string{`--sim-fault "dropp"`}, []string{" --fault "}},
		{"unknown profile", []string{"run", "--workload", "smoke", "--sim-profile", "bogus"},
			[]string{`--sim-profile: "bogus" is not allowed: want one of dsv4-pd`}, nil},
		{"simulator and workload problems together", []string{"run", "--workload", "smoke", "--sim-fault", "dropp", "--agents", "0"},
			[]string{"2 problems", `--sim-fault "dropp"`, "agents: 0"}, nil},
		// URLs get a hint when their scheme is missing, and never show credentials.
		{"server without scheme", []string{"run", "--workload", "smoke", "--server", "127.0.0.1:31002"},
			[]string{`--server: "127.0.0.1:31002" is not allowed`, "http://127.0.0.1:31002"}, nil},
		{"server with credentials, no scheme", []string{"run", "--workload", "smoke", "--server", "alice:hunter2@gpu:8000"},
			[]string{`--server: "redacted@gpu:8000" is not allowed`}, []string{"hunter2"}},
		{"server other scheme", []string{"run", "--workload", "smoke", "--server", "ftp://alice:hunter2@gpu"},
			[]string{"want the server's base URL with scheme http or https"}, []string{"hunter2"}},
		{"metrics URL not a URL", []string{"run", "--workload", "smoke", "--metrics-url", "notaurl"},
			[]string{`--metrics-url: "notaurl" is not allowed`, "http://notaurl"}, nil},
		// The regression gate: a baseline that holds no run, rules that do not parse, outputs
		// that cannot be written — all before the run starts.
		{"baseline not a run", []string{"run", "--workload", "smoke", "--baseline", "/nonexistent/base"},
			[]string{"--baseline /nonexistent/base: not a run directory"}, nil},
		{"thresholds file bad rule", []string{"run", "--workload", "smoke", "--thresholds", writeFile(t, "th.yaml", "thresholds:\n  e2e.p90: '<= fast'\n")},
			[]string{`th.yaml: thresholds.e2e.p90: "<= fast" is not allowed: want <, <=, > or >=`}, nil},
		{"thresholds file other key", []string{"run", "--workload", "smoke", "--thresholds", writeFile(t, "th2.yaml", "agents: 3\n")},
			[]string{`unknown key "agents": want only thresholds:`}, nil},
		{"workload threshold unknown figure", []string{"run", "--workload", writeFile(t, "g.yaml", "name: g\nthresholds: {e2e.p95: '< 1s'}\n")},
			[]string{`thresholds.e2e.p95: unknown figure "e2e.p95": did you mean "e2e.p90"?`}, nil},
		{"--set a threshold key", []string{"run", "--workload", "smoke", "--set", "thresholds.e2e.p90=< 1s"},
			[]string{`unknown key "thresholds.e2e.p90": set thresholds whole`}, nil},
		{"junit in a missing directory", []string{"run", "--workload", "smoke", "--junit", "/nonexistent/dir/gate.xml"},
			[]string{"--junit /nonexistent/dir/gate.xml: the directory /nonexistent/dir does not exist"}, nil},
		// All problems at once, settings and workload keys alike.
		{"settings and keys together", []string{"run", "--workload", "smoke", "--server", "gpu:8000", "--agents", "0"},
			[]string{"2 problems", "--server:", "agents: 0"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, stdout, stderr := execute(t, tc.args...)
			assert.Equal(t, ExitUsage, code, "agentsim %q: exit code; stderr: %s", tc.args, stderr)
			for _, m := range tc.msg {
				assert.Contains(t, stderr, m, "agentsim %q", tc.args)
			}
			for _, m := range tc.absent {
				assert.NotContains(t, stdout+stderr, m, "agentsim %q", tc.args)
			}
			assert.NoDirExists(t, "runs", "bad input must fail before anything starts: no run directory")
		})
	}
}

// TestSettingsFromEnvironmentNamed checks that a bad setting from the environment is reported
// with the variable and the value the user gave, and judged once.
func TestSettingsFromEnvironmentNamed(t *testing.T) {
	for _, tc := range []struct {
		env, val string
		msg      string
		absent   string
	}{
		// The value is shown, not the zero it left behind.
		{"AGENTSIM_SPEEDUP", "abc", `AGENTSIM_SPEEDUP: "abc" is not allowed: want a number`, "speedup 0"},
		{"AGENTSIM_SPEEDUP", "0", "AGENTSIM_SPEEDUP: 0 is not allowed: want a number from 1 to 1000000", "--speedup"},
		{"AGENTSIM_SPEEDUP", "NaN", "AGENTSIM_SPEEDUP: NaN is not allowed", "--speedup"},
		{"AGENTSIM_SERVER", "localhost:8000", `AGENTSIM_SERVER: "localhost:8000" is not allowed`, "--server"},
	} {
		t.Run(tc.env+"="+tc.val, func(t *testing.T) {
			t.Setenv(tc.env, tc.val)
			code, _, stderr := execute(t, "run", "--workload", "smoke")
			assert.Equal(t, ExitUsage, code, "stderr: %s", stderr)
			assert.Contains(t, stderr, tc.msg)
			assert.NotContains(t, stderr, tc.absent)
		})
	}
}

// TestOutOfRangeFlagsExit2 checks that a flag value no run can take — beyond the bound of
// what it becomes, given twice where each names a directory, an address that can never be
// listened on — exits 2 naming the flag and what is allowed, before anything starts.
func TestOutOfRangeFlagsExit2(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		// Beyond the most agents a workload runs, not a failure of bench's own workload.
		{"concurrency", []string{"bench", "--concurrency", "100000000"}, "--concurrency 100000000 is not allowed: want a whole number from 1 to 10000"},
		// A prompt whose context window no workload takes.
		{"prompt tokens", []string{"bench", "--prompt-tokens", "10000000"}, "--prompt-tokens 10000000 is not allowed: want a whole number from 1 to 4000000"},
		{"sweep point", []string{"bench", "--sweep", "1,20000"}, `--sweep "1,20000": "20000" is not allowed: want comma-separated whole numbers from 1 to 10000`},
		// Two tests of one concurrency would write one directory.
		{"sweep duplicate", []string{"bench", "--sweep", "16,16"}, `--sweep "16,16": 16 is given twice: want each concurrency once`},
		// Addresses no listener can take.
		{"addr port", []string{"serve", "--addr", "127.0.0.1:99999"}, `--addr "127.0.0.1:99999": port "99999" is not allowed: want a port from 0 to 65535`},
		{"addr not local", []string{"serve", "--addr", "192.0.2.1:0"}, `--addr "192.0.2.1:0": 192.0.2.1 is not an address of this machine`},
		{"metrics addr port", []string{"run", "--workload", "smoke", "--metrics-addr", ":99999"}, `--metrics-addr ":99999": port "99999" is not allowed`},
		{"record listen", []string{"record", "--upstream", "http://127.0.0.1:1", "--out", filepath.Join(t.TempDir(), "t.jsonl"), "--listen", "nohost"},
			`--listen "nohost": missing port in address: want host:port`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, _, stderr := execute(t, tc.args...)
			assert.Equal(t, ExitUsage, code, "agentsim %q: exit code; stderr: %s", tc.args, stderr)
			assert.Contains(t, stderr, tc.msg, "agentsim %q", tc.args)
			assert.NoDirExists(t, "runs", "bad input must fail before anything starts: no run directory")
		})
	}
}

// TestNonsenseRefused checks values each accepted alone and meaningless: a rate whose
// interval overflows, a time scale whose times do, a token count past any context window, a
// status that is no HTTP status, a latency unit the log disproves, an empty --grid. Each is
// exit 2, naming what was wrong and what is allowed.
func TestNonsenseRefused(t *testing.T) {
	tr := writeFile(t, "t.jsonl", `{"schema":"agentsim.trace/v1","source":"test","created":"2026-11-30T19:44:13Z"}
{"session":"a","seq":0,"t_s":0,"prompt_tokens":10,"output_tokens":5}
`)
	mooncake := writeFile(t, "m.jsonl", `{"timestamp": 0, "input_length": 99999999999, "output_length": 10, "hash_ids": [1]}`+"\n")
	status := writeFile(t, "s.log", `2026-11-29 19:45:16 INFO smg::response: finished processing request method=POST uri=/v1/chat/completions status=999 latency=62.690782s`+"\n")
	log := writeFile(t, "g.log", `2026-11-29 19:44:13  INFO http_request{method=POST uri=/v1/chat/completions request_id="a1"}: smg::request: started processing request
2026-11-29 19:45:16  INFO http_request{method=POST uri=/v1/chat/completions request_id="a1" status_code=200 latency=62690782}: smg::response: finished processing request
`)
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"rate", []string{"run", "--workload", "smoke", "--set", "pacer.kind=rate", "--set", "pacer.rps=1e-300", "--set", "pacer.burst=1"},
			"pacer.rps: 1e-300 is not allowed: want a number from 0.0001 to 1000000"},
		{"time scale", []string{"replay", tr, "--time-scale", "1e12"}, "--time-scale 1e+12 is not allowed: want a number from 0.001 to 1000"},
		{"tokens", []string{"trace", "import", "--from", "mooncake", mooncake}, "m.jsonl:1: input_length = 99999999999: must be between 0 and 10000000 tokens"},
		{"status", []string{"trace", "import", "--from", "access-log", status}, "s.log:1: status = 999: must be an HTTP status (100…599)"},
		{"latency unit", []string{"trace", "import", "--from", "access-log", "--latency-unit", "ms", log},
			"latency unit disproved: ms was given, but the log's own timestamps show µs"},
		{"empty grid", []string{"sweep", "--workload", "smoke", "--grid", ""}, `--grid: "" is not allowed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, _, stderr := execute(t, tc.args...)
			assert.Equal(t, ExitUsage, code, "agentsim %q: stderr: %s", tc.args, stderr)
			assert.Contains(t, stderr, tc.msg, "agentsim %q", tc.args)
		})
	}
}

// TestMessagesNameNoParser gives flags and keys values their type does not take, or too
// large for it: each message names the flag or key, the value and what is allowed — never a
// Go parser (strconv.ParseUint), a Go type or a decoder's words — and calls a number out of
// range out of range, not malformed.
func TestMessagesNameNoParser(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"bench", "--max-tokens", "1e3"}, `--max-tokens: "1e3" is not allowed: want an integer`},
		{[]string{"run", "--sim-seed", "-1"}, `--sim-seed: "-1" is not allowed: want a whole number ≥ 0`},
		{[]string{"run", "--sim-seed", "99999999999999999999999"}, `--sim-seed: "99999999999999999999999" is not allowed: want a whole number from 0 to 18446744073709551615`},
		{[]string{"run", "--speedup", "fast"}, `--speedup: "fast" is not allowed: want a number`},
		{[]string{"run", "--agents", "99999999999999999999"}, `agents: "99999999999999999999" is not allowed: want an integer from -9223372036854775808 to 9223372036854775807`},
		{[]string{"serve", "--seed", "x"}, `--seed: "x" is not allowed: want a whole number ≥ 0`},
		{[]string{"calibrate", "check", "--server", "http://127.0.0.1:1", "--agents", "1,x"}, `--agents: "1,x" is not allowed: want comma-separated integers`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, _, stderr := execute(t, tc.args...)
			assert.Equal(t, ExitUsage, code, stderr)
			assert.Contains(t, stderr, tc.msg)
			for _, internal := range []string{"strconv.", "Parse", "cannot unmarshal", "invalid syntax", "int64", "uint64", "[]", "Slice"} {
				assert.NotContains(t, stderr, internal)
			}
		})
	}
}

// TestEveryFlagTypeNamedForPeople: what a flag of any type agentsim uses allows is said in
// words, never as its parser's type name ("a intSlice").
func TestEveryFlagTypeNamedForPeople(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if typ := f.Value.Type(); typ != "key=value" {
				assert.NotEqual(t, "a "+typ, typeWant(typ), "%s --%s", c.CommandPath(), f.Name)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRoot(io.Discard, io.Discard, nil, nil))
}
