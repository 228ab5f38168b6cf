package agents

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

// toolStream is a reply of the given tool-call deltas (each a tool_calls element), then
// finish_reason tool_calls, usage and [DONE].
func toolStream(deltas ...string) []step {
	steps := []step{{after: 100 * time.Millisecond, data: roleFrame()}}
	for _, d := range deltas {
		steps = append(steps, step{after: 10 * time.Millisecond, data: deltaFrame(`{"tool_calls":[` + d + `]}`)})
	}
	return append(steps, step{data: finishFrame("tool_calls")}, step{data: usageFrame(100, 20, 0, 0)}, step{raw: doneRaw})
}

// TestCallAssemblesToolCalls: the deltas of each shape servers send assemble into the same
// calls; those that cannot be answered are classified malformed_tool_call.
func TestCallAssemblesToolCalls(t *testing.T) {
	two := []ToolCall{{ID: "call_a", Name: "read", Arguments: `{"filePath":"a.go"}`}, {ID: "call_b", Name: "grep", Arguments: `{}`}}
	for _, c := range []struct {
		name    string
		deltas  []string
		want    []ToolCall
		problem string // in the error of a malformed reply
	}{{
		// OpenAI's shape: index, id, type and name first, then argument pieces.
		name: "openai",
		deltas: []string{`{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":""}}`,
			`{"index":0,"function":{"arguments":"{\"filePath\":"}}`, `{"index":0,"function":{"arguments":"\"a.go\"}"}}`,
			`{"index":1,"id":"call_b","type":"function","function":{"name":"grep","arguments":"{}"}}`},
		want: two,
	}, {
		// repeat-ids: the id and type in every delta of a call.
		name: "repeat-ids",
		deltas: []string{`{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":""}}`,
			`{"index":0,"id":"call_a","type":"function","function":{"arguments":"{\"filePath\":\"a.go\"}"}}`,
			`{"index":1,"id":"call_b","type":"function","function":{"name":"grep","arguments":"{}"}}`},
		want: two,
	}, {
		// name-every-chunk: the name in every delta, not a piece to append.
		name: "name-every-chunk",
		deltas: []string{`{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":""}}`,
			`{"index":0,"function":{"name":"read","arguments":"{\"filePath\":\"a.go\"}"}}`,
			`{"index":1,"id":"call_b","type":"function","function":{"name":"grep","arguments":"{}"}}`},
		want: two,
	}, {
		// No index (as some servers send): pieces go to the latest call, a new id starts one.
		name: "no index",
		deltas: []string{`{"id":"call_a","type":"function","function":{"name":"read","arguments":"{\"filePath\":"}}`,
			`{"function":{"arguments":"\"a.go\"}"}}`, `{"id":"call_b","function":{"name":"grep","arguments":"{}"}}`},
		want: two,
	}, {
		name:    "no-id",
		deltas:  []string{`{"index":0,"type":"function","function":{"name":"read","arguments":"{}"}}`},
		problem: `tool call 0 ("read"): it has no id, so no tool message can answer it`,
	}, {
		name:    "id changes",
		deltas:  []string{`{"index":0,"id":"a","function":{"name":"read","arguments":"{}"}}`, `{"index":0,"id":"b"}`},
		problem: `its id changes from "a" to "b"`,
	}, {
		name: "duplicate ids",
		deltas: []string{`{"index":0,"id":"a","function":{"name":"read","arguments":"{}"}}`,
			`{"index":1,"id":"a","function":{"name":"grep","arguments":"{}"}}`},
		problem: `its id "a" is call 0's too`,
	}, {
		name:    "arguments cut short",
		deltas:  []string{`{"index":0,"id":"a","function":{"name":"read","arguments":"{\"filePath\":"}}`},
		problem: `its arguments are not JSON`,
	}, {
		name:    "no name",
		deltas:  []string{`{"index":0,"id":"a","function":{"arguments":"{}"}}`},
		problem: `it names no function`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clk := clock.Real()
				env := newTestEnv(t, clk, &script{clk: clk, steps: toolStream(c.deltas...)})
				defer env.close()
				res := env.client.Call(t.Context(), testRequest(), nil)
				if c.problem == "" {
					require.NoError(t, res.Err)
					assert.Equal(t, c.want, res.ToolCalls)
					assert.Equal(t, events.FinishReason("tool_calls"), res.FinishReason)
					return
				}
				require.Error(t, res.Err)
				assert.True(t, errors.Is(res.Err, ErrMalformedToolCall), "%v", res.Err)
				assert.Equal(t, events.ClassMalformedToolCall, res.Class)
				assert.Contains(t, res.Err.Error(), c.problem)
				assert.Nil(t, res.ToolCalls)
				assert.False(t, res.Retryable())
			})
		})
	}
}

// TestToolCallIsFirstToken: a reply that calls tools without any content has its first token
// in its first tool-call delta: TTFT counts to it, and a TTFT timeout shorter than the
// reply does not fire.
func TestToolCallIsFirstToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		steps := toolStream(`{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":""}}`,
			`{"index":0,"function":{"arguments":"{}"}}`)
		steps[len(steps)-3].after = 3 * time.Second // the finish comes 3 s later
		env := newTestEnv(t, clk, &script{clk: clk, steps: steps})
		defer env.close()
		req := testRequest()
		req.Timeouts.TTFT = time.Second
		obs := &recorder{start: clk.Now()}
		res := env.client.Call(t.Context(), req, obs)
		require.NoError(t, res.Err)
		assert.Equal(t, 110*time.Millisecond, res.TTFT)
		assert.Equal(t, res.Sent.Add(res.TTFT), res.FirstToolCall)
		assert.Equal(t, res.FirstToolCall, res.FirstToken())
		assert.True(t, res.GotToken())
		assert.Zero(t, res.TTFTContent)
		assert.Contains(t, obs.events, event{"first_tool_call", 110 * time.Millisecond})
	})
}
