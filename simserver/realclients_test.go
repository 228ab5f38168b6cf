//go:build realclients

package simserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
)

// realClientsDir holds the Node scripts and their pinned packages (scripts/realclients/run.sh
// installs them).
const realClientsDir = "../scripts/realclients"

// scriptTimeout bounds one script at one speedup: at speedup 1 the slowest, ai-sdk.mjs,
// takes about 40 s.
const scriptTimeout = 2 * time.Minute

// clientSummary is the JSON line each script prints: ok when every one of its checks passed,
// the tool calls of its (streamed) loop, whether the loop ended with a final answer, and what
// failed.
type clientSummary struct {
	OK           bool            `json:"ok"`
	Client       string          `json:"client"`
	ToolCalls    int             `json:"tool_calls"`
	FinalAnswer  bool            `json:"final_answer"`
	ChecksFailed json.RawMessage `json:"checks_failed"`
	Error        string          `json:"error"`
}

// realClients are the scripts: each drives agentsim serve through a real client or harness,
// unmodified, and needs this many tool calls of its loop before a final answer.
var realClients = []struct {
	script       string
	minToolCalls int
}{
	// The OpenAI Node SDK: every delta shape, arguments against their schemas, tool_choice,
	// parallel_tool_calls, streamed and not, and the SDK's runTools loop.
	{"openai-sdk.mjs", 1},
	// The OpenAI Agents SDK for JS in chat-completions mode, with two tools.
	{"agents-sdk.mjs", 2},
	// The Vercel AI SDK through @ai-sdk/openai-compatible, with two tools and stopWhen.
	{"ai-sdk.mjs", 2},
	// The OpenAI Node SDK's Responses API: responses.stream and responses.create with function
	// tools, their outputs fed back, and a web_search tool never called.
	{"openai-responses.mjs", 1},
	// The OpenAI Agents SDK for JS in its default Responses mode, with two tools and web_search.
	{"agents-sdk-responses.mjs", 2},
}

// TestRealClients runs real OpenAI clients and agent harnesses (Node; go test -tags
// realclients, after npm ci in scripts/realclients — scripts/realclients/run.sh does both)
// against the simulator as agentsim serve builds it by default (profile dsv4-pd, seed 1), on a
// loopback socket, at speedup 50 and at wall speed: each runs its tool loop to a final answer
// and every check it makes of the wire passes.
func TestRealClients(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found: the real-client suite needs Node 20 or later and npm")
	}
	dir, err := filepath.Abs(realClientsDir)
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		t.Skipf("%s/node_modules missing: run scripts/realclients/run.sh (npm ci there, then this suite)", realClientsDir)
	}
	for _, speedup := range []float64{50, 1} {
		t.Run(fmt.Sprintf("speedup=%g", speedup), func(t *testing.T) {
			var log requestLog
			url := serveLikeAgentsimServe(t, speedup, nil, &log)
			for _, c := range realClients {
				t.Run(c.script, func(t *testing.T) {
					started, before := time.Now(), log.counts()
					sum, line := runClient(t, node, filepath.Join(dir, c.script), url)
					t.Logf("%s at speedup %g, wall %s, requests %s: %s", c.script, speedup, time.Since(started).Round(time.Millisecond), log.since(before), line)
					assert.True(t, sum.OK, "%s reported a failure: error %q, checks failed %s", c.script, sum.Error, sum.ChecksFailed)
					assert.GreaterOrEqual(t, sum.ToolCalls, c.minToolCalls, "%s: tool calls before the final answer", c.script)
					assert.True(t, sum.FinalAnswer, "%s: a final answer", c.script)
				})
			}
		})
	}
	t.Run("codex", func(t *testing.T) { testCodex(t, dir) })
	t.Run("controls", func(t *testing.T) { testRealClientControls(t, node, dir) })
}

// testRealClientControls shows the suite can fail: against the tool-call variants that break
// client parsers (docs/engine.md §8), the scripts report the failures those clients meet.
func testRealClientControls(t *testing.T, node, dir string) {
	controls := []struct {
		script, style string
		// want is in the script's error or failed checks.
		want string
	}{
		// The Agents SDK concatenates the name repeated in every delta into a tool it lacks.
		{"agents-sdk.mjs", "name-every-chunk", "not found"},
		// The Agents SDK refuses a call without an id.
		{"agents-sdk.mjs", "no-id", "call ID"},
		// The OpenAI SDK script sees later deltas carrying more than index and arguments.
		{"openai-sdk.mjs", "repeat-ids", "later delta"},
		// The Responses script sees function_call items without a call_id.
		{"openai-responses.mjs", "no-id", "call_id"},
	}
	for _, c := range controls {
		t.Run(c.script+"/"+c.style, func(t *testing.T) {
			url := serveLikeAgentsimServe(t, 50, []string{"style=" + c.style}, nil)
			sum, line := runClient(t, node, filepath.Join(dir, c.script), url)
			assert.False(t, sum.OK, "%s against tool_call_style %s reported no failure: %s", c.script, c.style, line)
			assert.Contains(t, sum.Error+string(sum.ChecksFailed), c.want, "%s against tool_call_style %s", c.script, c.style)
		})
	}
}

// serveLikeAgentsimServe serves the simulator on loopback as `agentsim serve --speedup s`
// builds it with its other defaults (profile dsv4-pd, seed 1), for the test's length, and
// returns its base URL. Parameters p, when given, add `--fault tool-call-style --fault-param p`;
// log, when not nil, is its access log.
//
// One default is moved: the model calls per user request, median 4 and mean 4.5 instead of 2
// and 8.8. The scripts check the wire of tool steps: with the default median 43 % of tasks
// are answered at once (docs/engine.md §8), which a script's one fixed task may draw, and its
// long tail passes the Agents SDK's limit of 10 turns.
func serveLikeAgentsimServe(t *testing.T, speedup float64, styleParams []string, log *requestLog) string {
	prof, err := simserver.LoadProfile("dsv4-pd")
	require.NoError(t, err)
	prof.Agent.CallsPerRequest, prof.Agent.CallsPerRequestP50 = 4.5, 4
	return serveProfile(t, prof, speedup, styleParams, log)
}

// serveProfile is serveLikeAgentsimServe with the profile given.
func serveProfile(t *testing.T, prof *simserver.Profile, speedup float64, styleParams []string, log *requestLog) string {
	var names []string
	if styleParams != nil {
		names = []string{"tool-call-style"}
	}
	faults, err := simserver.ParseFaults(names, styleParams, 1)
	require.NoError(t, err)
	clk, err := clock.New(speedup)
	require.NoError(t, err)
	o := simserver.Options{Profile: prof, Faults: faults, Clock: clk}
	if log != nil {
		o.AccessLog = log
	}
	return simtest.NewLoopbackServer(t, o).URL
}

// requestLog is an access log that counts the requests that ended, by path.
type requestLog struct {
	mu     sync.Mutex
	byPath map[string]int
}

// Write counts the end lines of the access log (smg::response, one per request).
func (l *requestLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for line := range strings.Lines(string(p)) {
		if !strings.Contains(line, "smg::response") {
			continue
		}
		for field := range strings.FieldsSeq(line) {
			if uri, ok := strings.CutPrefix(field, "uri="); ok {
				if l.byPath == nil {
					l.byPath = map[string]int{}
				}
				l.byPath[uri]++
			}
		}
	}
	return len(p), nil
}

// counts returns the requests so far, by path.
func (l *requestLog) counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.byPath)
}

// since renders the requests since before, by path.
func (l *requestLog) since(before map[string]int) string {
	var parts []string
	for path, n := range l.counts() {
		if d := n - before[path]; d > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", path, d))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// runClient runs one script against url and decodes the summary it prints, which it also
// returns as printed; the script's stderr is logged when it fails.
func runClient(t *testing.T, node, script, url string) (clientSummary, string) {
	ctx, cancel := context.WithTimeout(t.Context(), scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, url)
	cmd.Dir = filepath.Dir(script)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var sum clientSummary
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &sum); err != nil {
		t.Fatalf("node %s %s: %v (run: %v); stdout %q, stderr %q", filepath.Base(script), url, err, runErr, stdout.String(), stderr.String())
	}
	if runErr != nil {
		t.Logf("node %s %s: %v; stderr %q", filepath.Base(script), url, runErr, stderr.String())
	}
	return sum, string(bytes.TrimSpace(stdout.Bytes()))
}
