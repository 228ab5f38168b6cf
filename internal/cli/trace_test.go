package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mooncakeLines = `{"timestamp": 0, "input_length": 1800, "output_length": 300, "hash_ids": [0, 1, 2, 3]}
{"timestamp": 500, "input_length": 1700, "output_length": 200, "hash_ids": [0, 1, 10, 11]}
{"timestamp": 9000, "input_length": 2600, "output_length": 250, "hash_ids": [0, 1, 2, 4, 5, 6]}
`

const gatewayLines = `2026-11-29 19:44:13  INFO http_request{method=POST uri=/v1/chat/completions request_id="a1"}: smg::request: started processing request
2026-11-29 19:45:16  INFO http_request{method=POST uri=/v1/chat/completions request_id="a1" status_code=200 latency=62690782}: smg::response: finished processing request
`

// traceCLI runs the command line with stdin and returns the exit code, stdout and stderr.
func traceCLI(stdin string, args ...string) (int, string, string) {
	return traceCLIEnv(nil, stdin, args...)
}

// traceCLIEnv is traceCLI with the process environment env.
func traceCLIEnv(env []string, stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	root := newRoot(&out, &errb, env, args)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil && !silent(err) {
		errb.WriteString("agentsim: " + err.Error() + "\n")
	}
	return exitCode(err), out.String(), errb.String()
}

func writeTraceInput(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// TestTraceImportMooncakeThenShow imports to standard output and shows the result from
// standard input, as text and as JSON.
func TestTraceImportMooncakeThenShow(t *testing.T) {
	in := writeTraceInput(t, "conv.jsonl", mooncakeLines)
	code, out, stderr := traceCLI("", "trace", "import", "--from", "mooncake", in)
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, stderr, "sessions: 2 from 3 requests, inferred from shared leading hash_ids")
	assert.True(t, strings.HasPrefix(out, `{"schema":"agentsim.trace/v1","source":"mooncake:`+in+`","created":"`), out)
	assert.Contains(t, out, `{"session":"s1","seq":1,"t_s":9,"after_s":9,"prompt_tokens":2600,"output_tokens":250,"extends":0,"new_tokens":500,"hash_ids":[0,1,2,4,5,6]}`)

	code, text, stderr := traceCLI(out, "trace", "show", "-")
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, text, "requests: 3   sessions: 2   duration: 9.0 s (first send to last send)\n")
	assert.Contains(t, text, "concurrency: unknown: the trace has no outcomes (no e2e_s)")

	code, js, stderr := traceCLI(out, "trace", "show", "--json", "-")
	require.Equal(t, ExitOK, code, stderr)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(js), &m))
	assert.Equal(t, 3.0, m["requests"])
	assert.Equal(t, 2.0, m["sessions"])
	assert.Equal(t, 9.0, m["duration_s"])
	assert.Nil(t, m["concurrency"])
}

// TestTraceImportAccessLog writes to -o and prints the latency unit's evidence on stderr.
func TestTraceImportAccessLog(t *testing.T) {
	in := writeTraceInput(t, "router.log", gatewayLines)
	out := filepath.Join(t.TempDir(), "trace.jsonl")
	code, stdout, stderr := traceCLI("", "trace", "import", "--from", "access-log", in, "-o", out)
	require.Equal(t, ExitOK, code, stderr)
	assert.Empty(t, stdout)
	assert.Equal(t, "latency unit: µs — 62690782 matches the 63 s between start (19:44:13) and finish (19:45:16); as ns it would be 0.06 s\n"+
		"latency unit: 1 of 1 finish lines with a bare latency fit µs (start and finish lines paired by request_id)\n"+
		"wrote 1 request in 1 session to "+out+"\n", stderr)

	code, text, stderr := traceCLI("", "trace", "show", out)
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, text, "concurrency (requests in flight): mean 1.0  max 1\n")
	assert.Contains(t, text, "status: 200 ×1\n")
}

// TestTraceBadInput: bad files and flags exit 2 with a message naming the line or the flag.
func TestTraceBadInput(t *testing.T) {
	badMooncake := writeTraceInput(t, "bad.jsonl", mooncakeLines+`{"timestamp": 9500, "input_length": -1, "output_length": 5}`+"\n")
	badTrace := writeTraceInput(t, "trace.jsonl", `{"schema":"agentsim.trace/v1","source":"x","created":""}`+"\n"+`{"session":"a","seq":1,"t_s":0,"prompt_tokens":1,"output_tokens":1}`+"\n")
	finishOnly := writeTraceInput(t, "finish.log", strings.SplitAfter(gatewayLines, "\n")[1])
	for _, c := range []struct {
		name string
		args []string
		msg  string // in stderr
	}{
		// run directories are not importable yet: the flag lists what is
		{"unknown kind", []string{"trace", "import", "--from", "sharegpt", badTrace}, `--from "sharegpt": must be mooncake or access-log or run`},
		// the line and the field
		{"bad mooncake line", []string{"trace", "import", "--from", "mooncake", badMooncake}, "trace import: " + badMooncake + ":4: input_length = -1: must be between 0 and 10000000 tokens"},
		// a log that cannot show its latency unit
		{"ambiguous unit", []string{"trace", "import", "--from", "access-log", finishOnly}, "pass --latency-unit ns, us, ms or s"},
		{"bad unit", []string{"trace", "import", "--from", "access-log", "--latency-unit", "sec", finishOnly}, `--latency-unit: latency unit "sec": must be ns, us, ms or s`},
		{"unit for mooncake", []string{"trace", "import", "--from", "mooncake", "--latency-unit", "us", badMooncake}, "--latency-unit us: only --from access-log has latencies"},
		{"missing file", []string{"trace", "import", "--from", "mooncake", "nope.jsonl"}, "open nope.jsonl: no such file or directory"},
		{"no file", []string{"trace", "import", "--from", "mooncake"}, "trace import takes one file"},
		{"bad trace", []string{"trace", "show", badTrace}, badTrace + `:2: seq = 1: session "a" has no earlier request, so its first seq must be 0`},
		{"not a trace", []string{"trace", "show", badMooncake}, badMooncake + ":1: no trace header"},
		{"bad flag", []string{"trace", "show", "--jsn", badTrace}, "--jsn"},
		// a command trace does not have
		{"unknown command", []string{"trace", "replay", badTrace}, `unknown trace command "replay": want import, show or fit`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := traceCLI("", c.args...)
			assert.Equal(t, ExitUsage, code, "agentsim %v; stderr: %s", c.args, stderr)
			assert.Empty(t, out)
			assert.Contains(t, stderr, c.msg)
		})
	}
}

// TestTraceImportUnitFromEnvironment: AGENTSIM_LATENCY_UNIT stands for --latency-unit, as
// every setting's variable does.
func TestTraceImportUnitFromEnvironment(t *testing.T) {
	finishOnly := writeTraceInput(t, "finish.log", strings.SplitAfter(gatewayLines, "\n")[1])
	code, out, stderr := traceCLIEnv([]string{"AGENTSIM_LATENCY_UNIT=us"}, "", "trace", "import", "--from", "access-log", finishOnly)
	require.Equal(t, ExitOK, code, stderr)
	assert.Equal(t, "latency unit: µs, as given by --latency-unit\n", stderr)
	assert.Contains(t, out, `"e2e_s":62.690782`)

	code, _, stderr = traceCLIEnv([]string{"AGENTSIM_JSON=maybe"}, "", "trace", "show", "-")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, `json: "maybe" is not allowed: want true or false`)
}
