package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/fakeserver"
	"github.com/agentsim/agentsim/results"
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
