//go:build realclients

package simserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
)

// codexTimeout bounds one codex exec session: at speedup 1 each request's reply takes
// seconds of wall time, and a session makes a handful.
const codexTimeout = 5 * time.Minute

// codexSessions is how many codex exec sessions the test runs at most until one has made
// codexMinRequests requests. Each session sends a new prompt_cache_key, from which (with the
// conversation's opening) the simulated model draws the session's tool steps (docs/engine.md
// §8); a geometric draw of mean codexCallsPerRequest − 1 is 0 (an answer at once) one time
// in codexCallsPerRequest, so one session alone would not always take several steps.
const (
	codexSessions        = 6
	codexMinRequests     = 3
	codexCallsPerRequest = 4
)

// codexTask is the task given to codex exec: one a read-only agent can do.
const codexTask = "List the files in this directory and say what README.md holds."

// codexConfig is the CODEX_HOME config.toml: a model provider whose wire_api is responses and
// whose base_url is the simulator, a read-only sandbox (so commands the simulated model asks
// for cannot write; the sandbox has no network), no approvals, no update check.
const codexConfig = `model = %q
model_provider = "agentsim"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[model_providers.agentsim]
name = "agentsim"
base_url = %q
wire_api = "responses"
`

// codexTraffic counts what Codex sends the simulator: its /v1/responses requests, the tool
// outputs the last one carries (Codex sends the whole conversation each time, store: false:
// every call it ran), and the request members it sends.
type codexTraffic struct {
	mu       sync.Mutex
	requests int
	outputs  int
	called   map[string]int // the calls of the request with the most outputs, by tool
	members  map[string]bool
}

// handler wraps the simulator's handler to count the Responses requests through it.
func (c *codexTraffic) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/responses" {
			body, err := io.ReadAll(r.Body)
			if err == nil {
				c.count(body)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

func (c *codexTraffic) count(body []byte) {
	var req map[string]json.RawMessage
	var input []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	_ = json.Unmarshal(body, &req)
	_ = json.Unmarshal(req["input"], &input)
	outputs, called := 0, map[string]int{}
	for _, it := range input {
		switch {
		case strings.HasSuffix(it.Type, "_call_output"):
			outputs++
		case strings.HasSuffix(it.Type, "_call"):
			called[it.Name]++
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if outputs >= c.outputs {
		c.called = called
	}
	c.requests++
	c.outputs = max(c.outputs, outputs)
	if c.members == nil {
		c.members = map[string]bool{}
	}
	for k := range req {
		c.members[k] = true
	}
}

// testCodex runs Codex CLI (@openai/codex, its binary unmodified) with codex exec against the
// simulator at speedup 50 and 1, as a model provider speaking the Responses API. The profile is
// dsv4-pd with agent.allow naming exec_command, so the simulated model asks Codex to run
// commands (their text from the simulator's vocabulary, which the read-only sandbox runs in an
// empty directory or refuses), and calls_per_request codexCallsPerRequest. Codex must complete
// the task after several requests: every request accepted, the tool calls run and their
// outputs sent back, a final message.
func testCodex(t *testing.T, dir string) {
	codex := filepath.Join(dir, "node_modules", ".bin", "codex")
	if _, err := os.Stat(codex); err != nil {
		t.Skipf("%s missing: run scripts/realclients/run.sh", codex)
	}
	for _, speedup := range []float64{50, 1} {
		t.Run(fmt.Sprintf("speedup=%g", speedup), func(t *testing.T) {
			prof, err := simserver.LoadProfile("dsv4-pd")
			require.NoError(t, err)
			prof.Agent.Allow = []string{"exec_command"}
			prof.Agent.CallsPerRequest = codexCallsPerRequest
			clk, err := clock.New(speedup)
			require.NoError(t, err)
			var log requestLog
			sim, err := simserver.New(simserver.Options{Profile: prof, Clock: clk, AccessLog: &log})
			require.NoError(t, err)
			sim.Engine().Start()
			defer sim.Engine().Stop()
			var traffic codexTraffic
			srv := httptest.NewServer(traffic.handler(sim.Handler()))
			defer srv.Close()

			for session := 1; session <= codexSessions; session++ {
				traffic.mu.Lock()
				before := traffic.requests
				traffic.outputs, traffic.called = 0, nil
				traffic.mu.Unlock()
				started := time.Now()
				out := runCodex(t, codex, srv.URL+"/v1", prof.Model)
				traffic.mu.Lock()
				requests, outputs, members, called := traffic.requests-before, traffic.outputs, keys(traffic.members), traffic.called
				traffic.mu.Unlock()
				t.Logf("codex exec session %d at speedup %g: wall %s, /v1/responses requests %d, tool calls run %d %v, final message %d bytes",
					session, speedup, time.Since(started).Round(time.Millisecond), requests, outputs, called, len(out.final))
				require.True(t, out.ok, "codex exec failed: %s", out.detail)
				require.NotEmpty(t, out.final, "a final message")
				if requests >= codexMinRequests {
					assert.GreaterOrEqual(t, outputs, requests-1, "every request but the first carries the outputs of calls Codex ran")
					slices.Sort(members)
					t.Logf("request members Codex sent: %s; access log: %s", strings.Join(members, ", "), log.since(nil))
					return
				}
			}
			t.Fatalf("no codex exec session of %d made %d requests or more", codexSessions, codexMinRequests)
		})
	}
}

// codexRun is what one codex exec session printed: whether it completed, what went wrong if
// not, and its final message.
type codexRun struct {
	ok     bool
	detail string
	final  string
}

// runCodex runs one codex exec session in an empty directory with its own CODEX_HOME.
func runCodex(t *testing.T, codex, baseURL, model string) codexRun {
	home, work := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"), fmt.Appendf(nil, codexConfig, model, baseURL), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(work, "README.md"), []byte("A directory for a read-only task.\n"), 0o600))
	ctx, cancel := context.WithTimeout(t.Context(), codexTimeout)
	defer cancel()
	last := filepath.Join(home, "last-message.txt")
	cmd := exec.CommandContext(ctx, codex, "exec", "--json", "--skip-git-repo-check", "--output-last-message", last, codexTask)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return codexRun{detail: fmt.Sprintf("%v; stderr %q", err, tail(stderr.String(), 2000))}
	}
	final, _ := os.ReadFile(last)
	run := codexRun{ok: true, final: strings.TrimSpace(string(final))}
	// The JSON events say when the turn failed.
	for line := range strings.Lines(stdout.String()) {
		var ev struct {
			Type string `json:"type"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "turn.failed" {
			run.ok, run.detail = false, line
		}
	}
	return run
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }
