package harness

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/fakeserver"
	"github.com/agentsim/agentsim/internal/replay"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// TestToolLoopThroughResponses: with request.api responses, every step goes through POST
// /v1/responses and the tool loop runs as over chat completions: the model's function calls
// run as tools and are answered by function_call_output items quoting their call ids (the
// fake refuses any other with OpenAI's 400), and a reply of text ends the task.
func TestToolLoopThroughResponses(t *testing.T) {
	f := &fakeserver.Server{Tokens: 8, CallTools: 2}
	ts := f.Start(t)
	r := runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", append([]string{"request.api=responses", "tools.set=browse",
		"tools.latency=10ms", "rounds=4", "request.reasoning_effort=none"}, quick[1:]...), nil)
	require.NoError(t, r.err)
	assert.Equal(t, r.res.Requests.Sent, r.res.Requests.OK, "every request served: %+v", r.res.Requests)
	assert.Equal(t, results.Healthy, r.res.Verdict.Kind, "%+v", r.res.Verdict)
	calls, results, ids := 0, 0, map[string]bool{}
	for _, e := range r.evs {
		switch e.Kind {
		case events.ToolCall:
			calls++
			assert.False(t, e.Planned, "the model's own calls")
			ids[e.ToolCallID] = true
		case events.ToolResult:
			results++
		}
	}
	assert.Equal(t, 4*2*2, calls, "4 agents × 2 of 4 rounds calling tools × 2 calls")
	assert.Equal(t, calls, results)
	assert.Equal(t, map[string]bool{"call_fake_0": true, "call_fake_1": true}, ids)
	assert.Equal(t, 4*2*2, r.res.Tools.Calls)
}

// responsesTrace is a recorded Responses session: a reply with one tool call answered 1 s
// later, its answer, then a new task in the same conversation.
const responsesTrace = `{"schema":"agentsim.trace/v1","source":"test","created":"2026-12-01T00:00:00Z"}
{"session":"s","seq":0,"t_s":0,"prompt_tokens":300,"output_tokens":8,"api":"responses","tools_tokens":400,"tool_calls":1,"tool_names":["read"],"tool_s":1,"status":200,"e2e_s":0.5}
{"session":"s","seq":1,"t_s":1.5,"after_s":1,"prompt_tokens":340,"output_tokens":8,"extends":0,"new_tokens":30,"api":"responses","tools_tokens":400,"status":200,"e2e_s":0.5}
{"session":"s","seq":2,"t_s":2.5,"after_s":0.5,"prompt_tokens":400,"output_tokens":8,"extends":1,"new_tokens":50,"api":"responses","tools_tokens":400,"status":200,"e2e_s":0.5}
`

// TestReplayThroughResponses: a recorded Responses session is replayed through the Responses
// API with its structure: tool definitions on every request, the live model's function call
// run for the recorded tool time and answered by a function_call_output with its call_id
// (the fake refuses any other), and every request of the session sent to /v1/responses.
func TestReplayThroughResponses(t *testing.T) {
	f := &fakeserver.Server{Tokens: 8, CallTools: 1}
	var mu sync.Mutex
	paths := map[string]int{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths[r.URL.Path]++
		mu.Unlock()
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	p, err := replay.Load(strings.NewReader(responsesTrace), "trace.jsonl", replay.Options{})
	require.NoError(t, err)
	r := runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", []string{"agents=1", "request.reasoning_effort=none"},
		func(o *Options) { o.Scripts = p.Scripts })
	require.NoError(t, r.err)
	assert.Equal(t, 3, r.res.Requests.OK, "%+v", r.res.Requests)
	assert.Equal(t, 3, paths["/v1/responses"], "%v", paths)
	assert.Zero(t, paths["/v1/chat/completions"])
	var ids []string
	for _, e := range r.evs {
		if e.Kind == events.ToolCall {
			ids = append(ids, e.ToolCallID)
		}
	}
	assert.Equal(t, []string{"call_fake_0"}, ids, "the live model's call")
}

// TestDiagnosisScenariosThroughResponses runs the diagnosis table through the Responses API
// (request.api responses): the simulator answers POST /v1/responses on the same engine and
// faults, and each scenario's verdict is the one it has over chat completions.
func TestDiagnosisScenariosThroughResponses(t *testing.T) {
	race := raceDetector()
	for _, sc := range append(scenarios, honestScenarios...) {
		t.Run(sc.name, func(t *testing.T) {
			if sc.heavy && race {
				t.Skip("an ocbrowse-sized run takes 10–30 s under the race detector; run without -race")
			}
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				c := sc.sim
				c.overrides = maps.Clone(c.overrides)
				if c.overrides == nil {
					c.overrides = map[string]string{}
				}
				c.overrides["request.api"] = workloads.APIResponses
				res, dir := runSim(t, t.Context(), c)
				v := res.Verdict
				require.Equal(t, sc.kind, v.Kind, "verdict %s: %s\n%s", v.Kind, v.Summary, strings.Join(v.Evidence, "\n"))
				// A Responses reply's closing events (text, part and item done, completed)
				// follow its last token, so the run's last byte may be milliseconds ago where
				// a chat run's was seconds ago.
				assert.Regexp(t, strings.ReplaceAll(sc.summary, `\d\.\d s ago`, `\d+\.\d m?s ago`), v.Summary)
				for _, pat := range sc.evidence {
					assert.True(t, anyMatch(pat, v.Evidence), "no evidence line matches %q in\n%s", pat, strings.Join(v.Evidence, "\n"))
				}
				fromFiles, _, err := diagnose.FromDir(dir)
				require.NoError(t, err)
				assert.Equal(t, v, fromFiles, "diagnose.FromDir and the run agree")
				if sc.check != nil {
					evs, err := rundir.ReadEvents(dir)
					require.NoError(t, err)
					sc.check(t, scenarioRun{res: res, evs: evs})
				}
			})
		})
	}
}

// TestCodingAgentThroughResponses: the coding agent over the Responses API against the
// simulator runs the model's own function calls, answered by function_call_output items (the
// simulator refuses an answer to no call), every request ok.
func TestCodingAgentThroughResponses(t *testing.T) {
	over := map[string]string{"agents": "2", "rounds": "6", "request.api": workloads.APIResponses}
	evs := runEvents(t, codingAgent(over))
	calls := 0
	for _, e := range evs {
		switch {
		case e.Kind == events.ToolCall && !e.Planned:
			calls++
			assert.NotEmpty(t, e.ToolCallID, "%+v", e)
		case e.Kind == events.Error, e.Kind == events.Timeout:
			t.Errorf("unexpected failure: %+v", e)
		}
	}
	assert.Positive(t, calls, "the model called tools")
}
