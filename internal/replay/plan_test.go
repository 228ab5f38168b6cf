package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/workloads"
)

// planTrace has two sessions; b's second request extends its first, after 2 s of think time
// counted from the first's end.
const planTrace = `{"schema":"agentsim.trace/v1","source":"test","created":"2026-11-30T00:00:00Z","requests":4,"sessions":2}
{"session":"a","seq":0,"t_s":1,"prompt_tokens":100,"output_tokens":10,"status":200,"e2e_s":1}
{"session":"b","seq":0,"t_s":2,"prompt_tokens":200,"output_tokens":20,"reasoning_tokens":5,"status":200,"e2e_s":1}
{"session":"b","seq":1,"t_s":5,"after_s":2,"prompt_tokens":300,"output_tokens":30,"extends":0,"new_tokens":85,"status":200,"e2e_s":1}
{"session":"a","seq":1,"t_s":10,"after_s":8,"prompt_tokens":150,"output_tokens":15,"status":200,"e2e_s":1}
`

// TestLoad checks the turns a plan makes of a trace, and the window, --sessions and
// --time-scale.
func TestLoad(t *testing.T) {
	p, err := Load(strings.NewReader(planTrace), "t.jsonl", Options{TimeScale: 0.5})
	require.NoError(t, err)
	assert.Equal(t, Sessions, p.Mode, "a session with several requests")
	assert.Equal(t, []string{"a", "b"}, p.Sessions)
	assert.Equal(t, 4, p.Requests)
	assert.True(t, p.Outcomes)
	b := p.Scripts[1].Turns
	assert.Equal(t, 1*time.Second, b[0].At)
	assert.Equal(t, -1, b[0].Extends)
	assert.Equal(t, 15, b[0].ReplyTokens, "output without reasoning stays in the conversation")
	assert.Equal(t, 0, b[1].Extends)
	assert.Equal(t, time.Second, b[1].Wait, "after_s × time scale")
	assert.Equal(t, 30, b[1].OutputTokens)

	p, err = Load(strings.NewReader(planTrace), "t.jsonl", Options{FromS: 4, Sessions: 1})
	require.NoError(t, err)
	assert.Equal(t, []string{"b"}, p.Sessions, "the first session to start in the window")
	assert.Equal(t, Timestamps, p.Mode, "one request per session")
	assert.Equal(t, -1, p.Scripts[0].Turns[0].Extends, "the request extended is outside the window")
	assert.Equal(t, time.Second, p.Scripts[0].Turns[0].At, "time 0 is --from-s")
	assert.Equal(t, 3, p.Skipped)
}

// TestLoadAPI: a request is replayed through the API it was recorded from — the Responses
// API, or chat completions for chat and legacy completions — and through the workload's
// request.api when the trace does not say.
func TestLoadAPI(t *testing.T) {
	const tr = `{"schema":"agentsim.trace/v1","source":"test","created":"2026-11-30T00:00:00Z"}
{"session":"a","seq":0,"t_s":0,"prompt_tokens":100,"output_tokens":10,"api":"responses"}
{"session":"a","seq":1,"t_s":2,"prompt_tokens":100,"output_tokens":10,"api":"chat"}
{"session":"a","seq":2,"t_s":4,"prompt_tokens":100,"output_tokens":10,"api":"completions"}
{"session":"a","seq":3,"t_s":6,"prompt_tokens":100,"output_tokens":10}
`
	p, err := Load(strings.NewReader(tr), "t.jsonl", Options{})
	require.NoError(t, err)
	var apis []string
	for _, turn := range p.Scripts[0].Turns {
		apis = append(apis, turn.API)
	}
	assert.Equal(t, []string{workloads.APIResponses, workloads.APIChat, workloads.APIChat, ""}, apis)
}

// TestLoadRefuses names what is wrong.
func TestLoadRefuses(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Mode: "random"}, `mode "random": must be sessions or timestamps`},
		{Options{TimeScale: -1}, "time-scale = -1"},
		{Options{FromS: 5, ToS: 2}, "to-s = 2: must be after from-s (5 s)"},
		{Options{FromS: 100}, "no request to replay"},
	} {
		_, err := Load(strings.NewReader(planTrace), "t.jsonl", c.o)
		require.Error(t, err, "%+v", c.o)
		assert.Contains(t, err.Error(), c.want, "%+v", c.o)
	}
	_, err := Load(strings.NewReader(`{"schema":"agentsim.trace/v2"}`), "t.jsonl", Options{})
	assert.ErrorContains(t, err, "t.jsonl:1:")
	_, err = Load(strings.NewReader(planTrace), "t.jsonl", Options{FromS: 100})
	var se *SelectionError
	assert.ErrorAs(t, err, &se, "nothing selected: the options that select are for the caller to name")
}

// mixedTrace names two models and two efforts; its first request's output is unknown (an
// estimate of a failed request), so it is not forced.
const mixedTrace = `{"schema":"agentsim.trace/v1","source":"test","created":"2026-11-30T00:00:00Z"}
{"session":"a","seq":0,"t_s":0,"prompt_tokens":100,"output_tokens":9,"tokens_estimated":true,"status":500,"model":"big","reasoning_effort":"low"}
{"session":"a","seq":1,"t_s":1,"after_s":1,"prompt_tokens":100,"output_tokens":40,"model":"small","reasoning_effort":"low"}
{"session":"b","seq":0,"t_s":0,"prompt_tokens":100,"output_tokens":70,"model":"small","reasoning_effort":"turbo"}
{"session":"b","seq":1,"t_s":2,"after_s":1,"prompt_tokens":100,"output_tokens":55}
`

// TestLoadCommonModel: the plan names the model and effort most requests named, for the
// replay's workload; a turn keeps its own only when it differs; the forced output lengths are
// bounded.
func TestLoadCommonModel(t *testing.T) {
	p, err := Load(strings.NewReader(mixedTrace), "t.jsonl", Options{})
	require.NoError(t, err)
	assert.Equal(t, "small", p.Model)
	assert.Equal(t, 2, p.ModelRequests)
	assert.Equal(t, "low", p.ReasoningEffort)
	assert.Equal(t, 2, p.EffortRequests)
	a, b := p.Scripts[0].Turns, p.Scripts[1].Turns
	assert.Equal(t, "big", a[0].Model, "another model is sent as recorded")
	assert.Equal(t, "", a[1].Model, "the common model is the workload's")
	assert.Equal(t, "", a[1].ReasoningEffort)
	assert.Equal(t, "turbo", b[0].ReasoningEffort)
	assert.Equal(t, []int{3, 40, 70}, []int{p.Forced, p.OutputMin, p.OutputMax}, "the failed request's output is not forced")

	p, err = Load(strings.NewReader(planTrace), "t.jsonl", Options{})
	require.NoError(t, err)
	assert.Equal(t, "", p.Model, "a trace that names no model")
	assert.Equal(t, 0, p.ModelRequests)
}

// toolTrace is one session of three requests with tool fields: the first reply called two
// tools for 1.5 s, the second one for 0 s, the third none; the definitions are 5300 tokens,
// within 10 % of the coding set's.
const toolTrace = `{"schema":"agentsim.trace/v1","source":"test","created":"2026-11-30T00:00:00Z"}
{"session":"s","seq":0,"t_s":0,"prompt_tokens":6000,"output_tokens":40,"status":200,"e2e_s":1,"tools_tokens":5300,"tool_calls":2,"tool_names":["read","grep"],"tool_s":1.5}
{"session":"s","seq":1,"t_s":3,"after_s":2,"prompt_tokens":6400,"output_tokens":20,"extends":0,"new_tokens":360,"status":200,"e2e_s":1,"tools_tokens":5300,"tool_calls":1,"tool_s":0}
{"session":"s","seq":2,"t_s":4,"after_s":0,"prompt_tokens":6800,"output_tokens":90,"extends":1,"new_tokens":380,"status":200,"e2e_s":1,"tools_tokens":5300}
`

// TestLoadTools: the turns carry the definitions (one set for the session), the recorded
// calls and their tool time scaled, and a reply of tool calls is not forced to its length.
func TestLoadTools(t *testing.T) {
	p, err := Load(strings.NewReader(toolTrace), "t.jsonl", Options{TimeScale: 2})
	require.NoError(t, err)
	turns := p.Scripts[0].Turns
	require.Len(t, turns, 3)
	require.NotNil(t, turns[0].Tools)
	assert.Equal(t, "coding", turns[0].Tools.Source(), "5300 tokens is within 10 % of the coding set")
	assert.Same(t, turns[0].Tools, turns[2].Tools, "one set for every request of the session")
	assert.Equal(t, []int{2, 1, 0}, []int{turns[0].ToolCalls, turns[1].ToolCalls, turns[2].ToolCalls})
	assert.Equal(t, []string{"read", "grep"}, turns[0].ToolNames)
	assert.Equal(t, []time.Duration{3 * time.Second, 0, 0}, []time.Duration{turns[0].ToolTime, turns[1].ToolTime, turns[2].ToolTime})
	assert.Equal(t, []int{0, 0, 90}, []int{turns[0].OutputTokens, turns[1].OutputTokens, turns[2].OutputTokens},
		"replies of tool calls are as long as the live model writes them")
	assert.Equal(t, 40, turns[0].ReplyTokens, "the stand-in of an open loop keeps the recorded length")
}
