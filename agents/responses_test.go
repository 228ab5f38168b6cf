package agents

import (
	"encoding/json"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/workloads"
)

// Events as the OpenAI Responses API writes them (the shapes of the OpenAI Node SDK's
// ResponseStreamEvent types): an event: line, then the data line.

func rEvent(typ, fields string) string {
	return fmt.Sprintf("event: %s\ndata: {\"type\":%q,\"sequence_number\":0%s}\n\n", typ, typ, fields)
}

const respHead = `"id":"resp_1","object":"response","created_at":1700000000,"model":"m","output":[],"error":null,"incomplete_details":null`

func rCreated() string {
	return rEvent("response.created", `,"response":{`+respHead+`,"status":"in_progress","usage":null}`) +
		rEvent("response.in_progress", `,"response":{`+respHead+`,"status":"in_progress","usage":null}`)
}

func rReasoningDelta(text string) string {
	return rEvent("response.reasoning_summary_text.delta", `,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":`+quote(text))
}

func rTextDelta(text string) string {
	return rEvent("response.output_text.delta", `,"item_id":"msg_1","output_index":1,"content_index":0,"delta":`+quote(text)+`,"logprobs":[]`)
}

func rMessageAdded() string {
	return rEvent("response.output_item.added", `,"output_index":1,"item":{"type":"message","id":"msg_1","status":"in_progress","role":"assistant","content":[]}`) +
		rEvent("response.content_part.added", `,"item_id":"msg_1","output_index":1,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`)
}

func rMessageDone(text string) string {
	return rEvent("response.output_text.done", `,"item_id":"msg_1","output_index":1,"content_index":0,"text":`+quote(text)+`,"logprobs":[]`) +
		rEvent("response.output_item.done", `,"output_index":1,"item":{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":`+quote(text)+`,"annotations":[]}]}`)
}

func rCompleted(prompt, output, reasoning, cached int) string {
	return rEvent("response.completed", fmt.Sprintf(`,"response":{`+respHead+`,"status":"completed","usage":{"input_tokens":%d,`+
		`"input_tokens_details":{"cached_tokens":%d},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":%d},"total_tokens":%d}}`,
		prompt, cached, output, reasoning, prompt+output))
}

func rCallAdded(index int, callID, name string) string {
	return rEvent("response.output_item.added", fmt.Sprintf(`,"output_index":%d,"item":{"type":"function_call","id":"fc_%d","call_id":%q,"name":%q,"arguments":"","status":"in_progress"}`,
		index, index, callID, name))
}

func rArgsDelta(index int, piece string) string {
	return rEvent("response.function_call_arguments.delta", fmt.Sprintf(`,"item_id":"fc_%d","output_index":%d,"delta":%s`, index, index, quote(piece)))
}

// responsesRequest is testRequest through the Responses API.
func responsesRequest() Request {
	r := testRequest()
	r.API = workloads.APIResponses
	return r
}

// TestResponsesReasoningAwareTimings: the Responses stream of reasoningScript's answer gives
// the same timings, texts and usage as the chat stream — reasoning summary deltas are
// reasoning, output_text deltas content, usage from response.completed — with a frame per
// event.
func TestResponsesReasoningAwareTimings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		clk := clock.Real()
		s := &script{clk: clk, headerDelay: 500 * ms, steps: []step{
			{after: 500 * ms, raw: rCreated()},
			{after: time.Second, raw: rReasoningDelta("Let me")},
			{after: 100 * ms, raw: rReasoningDelta(" think…")},
			{after: 2900 * ms, raw: rMessageAdded() + rTextDelta("Hello")},
			{after: 100 * ms, raw: rTextDelta(" \"world\"\n")},
			{after: 100 * ms, raw: rMessageDone("Hello \"world\"\n") + rCompleted(1200, 42, 30, 1024)},
		}}
		env := newTestEnv(t, clk, s)
		defer env.close()
		obs := &recorder{start: clk.Now()}
		res := env.client.Call(t.Context(), responsesRequest(), obs)
		assertReasoningAnswer(t, res, obs.start, 1)
		assert.Equal(t, 11, res.Chunks, "every event is a frame: created, in_progress, 2 reasoning, "+
			"item and part added, 2 content, text and item done, completed")
		assert.Equal(t, 3, res.FirstTokenChunk, "created, in_progress, then the first reasoning delta")
		assert.Equal(t, 3200*time.Millisecond/8, res.ITL(), "first token at 2 s to completed at 5.2 s, over the 8 gaps between frames 3 and 11")
		assert.Equal(t, "/v1/responses", s.path())
	})
}

// TestResponsesRequestBody: a conversation goes as Codex sends it — the system message as
// instructions, the whole history as input items (function_call items and
// function_call_output items quoting their call ids, a reply of reasoning alone an empty
// message), store false — with the tools in the
// Responses API's flat form, a named tool_choice as {type, name}, the reasoning effort with
// a summary asked for, and max_output_tokens.
func TestResponsesRequestBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		s := &script{clk: clk, steps: []step{{raw: rCreated() + rCompleted(1, 1, 0, 0)}}}
		env := newTestEnv(t, clk, s)
		defer env.close()
		req := responsesRequest()
		req.ReasoningEffort = "low"
		req.Messages = []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: "be brief"},
			{Role: openai.ChatMessageRoleUser, Content: "read it"},
			{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{ID: "call_7", Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: "read", Arguments: `{"path":"a"}`}}}},
			{Role: openai.ChatMessageRoleTool, ToolCallID: "call_7", Content: "text of a"},
			{Role: openai.ChatMessageRoleAssistant, Content: "done"},
			{Role: openai.ChatMessageRoleUser, Content: "next"},
			{Role: openai.ChatMessageRoleAssistant},
		}
		req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "read",
			Description: "reads", Parameters: json.RawMessage(`{"type":"object"}`)}}, {Type: "web_search"}}
		req.ToolChoice = openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "read"}}
		req.ParallelToolCalls = true
		res := env.client.Call(t.Context(), req, nil)
		require.NoError(t, res.Err)
		body, _ := json.Marshal(s.sentBody())
		assert.JSONEq(t, `{"model":"m","stream":true,"store":false,"max_output_tokens":100,"instructions":"be brief",
			"input":[
				{"type":"message","role":"user","content":[{"type":"input_text","text":"read it"}]},
				{"type":"function_call","call_id":"call_7","name":"read","arguments":"{\"path\":\"a\"}"},
				{"type":"function_call_output","call_id":"call_7","output":"text of a"},
				{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]},
				{"type":"message","role":"user","content":[{"type":"input_text","text":"next"}]},
				{"type":"message","role":"assistant","content":[{"type":"output_text","text":""}]}],
			"reasoning":{"effort":"low","summary":"auto"},
			"tools":[{"type":"function","name":"read","description":"reads","parameters":{"type":"object"}},{"type":"web_search"}],
			"tool_choice":{"type":"function","name":"read"},"parallel_tool_calls":true}`, string(body))
	})
}

// TestResponsesToolCalls: function_call items are assembled from their output_item.added
// (call_id, name) and argument deltas, in output order; the first is the reply's first token;
// the reply's finish reason is tool_calls.
func TestResponsesToolCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		s := &script{clk: clk, steps: []step{
			{raw: rCreated()},
			{after: time.Second, raw: rCallAdded(0, "call_a", "read")},
			{after: 100 * time.Millisecond, raw: rArgsDelta(0, `{"path":`) + rArgsDelta(0, `"x"}`)},
			{raw: rCallAdded(1, "call_b", "grep") + rArgsDelta(1, `{}`)},
			{raw: rCompleted(10, 5, 0, 0)},
		}}
		env := newTestEnv(t, clk, s)
		defer env.close()
		obs := &recorder{start: clk.Now()}
		res := env.client.Call(t.Context(), responsesRequest(), obs)
		require.NoError(t, res.Err)
		assert.Equal(t, []ToolCall{{ID: "call_a", Name: "read", Arguments: `{"path":"x"}`}, {ID: "call_b", Name: "grep", Arguments: `{}`}}, res.ToolCalls)
		assert.Equal(t, events.FinishReason("tool_calls"), res.FinishReason)
		assert.Equal(t, time.Second, res.TTFT)
		assert.Equal(t, time.Second, res.FirstToolCall.Sub(obs.start))
		assert.Equal(t, Usage{Prompt: 10, Completion: 5}, res.Usage)
	})
}

// TestResponsesFailures: how a Responses call fails, in the chat call's classes.
func TestResponsesFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		s     *script
		class events.Class
		msg   string // in Err
		retry bool
	}{
		// response.failed carries the server's error: an error frame, retryable before a token.
		{name: "response.failed", s: &script{steps: []step{{raw: rCreated() + rEvent("response.failed",
			`,"response":{`+respHead+`,"status":"failed","usage":null,"error":{"code":"server_error","message":"engine died"}}`)}}},
			class: events.ClassErrorFrame, msg: "response.failed: engine died", retry: true},
		// A prompt the server refused: sending it again would not help.
		{name: "response.failed, invalid_prompt", s: &script{steps: []step{{raw: rCreated() + rEvent("response.failed",
			`,"response":{`+respHead+`,"status":"failed","usage":null,"error":{"code":"invalid_prompt","message":"bad prompt"}}`)}}},
			class: events.ClassErrorFrame, msg: "bad prompt"},
		// The error event, as the API sends it on a failed stream.
		{name: "error event", s: &script{steps: []step{{raw: rCreated() + rTextDelta("Hi") +
			rEvent("error", `,"code":"rate_limit_exceeded","message":"slow down","param":null`)}}},
			class: events.ClassErrorFrame, msg: "slow down"},
		// An HTTP error before the stream, with the OpenAI error body.
		{name: "HTTP 400", s: &script{status: 400, contentType: "application/json",
			body: `{"error":{"message":"No tool call found for function call output with call_id call_1.","type":"invalid_request_error","param":"input","code":null}}`},
			class: events.ClassHTTPStatus, msg: "No tool call found"},
		// The body ends before response.completed: truncated.
		{name: "no response.completed", s: &script{steps: []step{{raw: rCreated() + rTextDelta("Hi")}}},
			class: events.ClassTruncated, msg: "stream ended before response.completed"},
		// An argument delta for an output index no function_call opened.
		{name: "arguments for no call", s: &script{steps: []step{{raw: rCreated() + rArgsDelta(3, "{}") + rCompleted(1, 1, 0, 0)}}},
			class: events.ClassMalformedToolCall, msg: "output_index 3, which no function_call item opened"},
		// A function_call without a call_id cannot be answered.
		{name: "call without call_id", s: &script{steps: []step{{raw: rCreated() + rCallAdded(0, "", "read") + rCompleted(1, 1, 0, 0)}}},
			class: events.ClassMalformedToolCall, msg: "it has no id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clk := clock.Real()
				tc.s.clk = clk
				env := newTestEnv(t, clk, tc.s)
				defer env.close()
				res := env.client.Call(t.Context(), responsesRequest(), nil)
				require.Error(t, res.Err)
				assert.Equal(t, tc.class, res.Class, "%v", res.Err)
				assert.Contains(t, res.Err.Error(), tc.msg)
				assert.Equal(t, tc.retry, res.Retryable())
			})
		})
	}
}

// TestScanEventAgreesWithDecode: the fast reading of every event shape agrees with the
// reference one.
func TestScanEventAgreesWithDecode(t *testing.T) {
	lines := []string{
		rReasoningDelta("a\\b \"q\" é"), rTextDelta("Hello"), rCallAdded(2, "call_x", "read"), rArgsDelta(2, `{"a":1}`),
		rCompleted(100, 20, 5, 64), rMessageDone("x"),
		rEvent("error", `,"code":429,"message":"slow","param":null`),
		rEvent("response.incomplete", `,"response":{`+respHead+`,"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":null}`),
	}
	for _, l := range lines {
		for _, data := range dataLines(l) {
			var fast rframe
			require.True(t, scanEvent([]byte(data), &fast), "scanEvent declined %s", data)
			ref, err := decodeEvent([]byte(data))
			require.NoError(t, err)
			assert.Equal(t, decoded(ref), decoded(fast), "%s", data)
		}
	}
}

// FuzzScanEvent: on any line scanEvent accepts, it reads what decodeEvent reads.
func FuzzScanEvent(f *testing.F) {
	for _, l := range []string{rTextDelta("x"), rCallAdded(0, "c", "n"), rCompleted(1, 2, 3, 0), rEvent("error", `,"code":null,"message":"m"`)} {
		for _, d := range dataLines(l) {
			f.Add(d)
		}
	}
	f.Fuzz(func(t *testing.T, line string) {
		var fast rframe
		if !scanEvent([]byte(line), &fast) {
			return
		}
		ref, err := decodeEvent([]byte(line))
		if err != nil {
			t.Fatalf("scanEvent accepted %q, decodeEvent: %v", line, err)
		}
		if a, b := decoded(ref), decoded(fast); a != b {
			t.Fatalf("%q: scanEvent %+v, decodeEvent %+v", line, b, a)
		}
	})
}

// eventView is an rframe with its strings decoded, for comparison.
type eventView struct {
	Type, Delta, Arguments, Code, Message, Incomplete string
	ItemType, CallID, Name, ItemArguments, Role       string
	OutputIndex                                       int
	HasOutputIndex, HasItem, HasUsage                 bool
	Usage                                             Usage
}

func decoded(f rframe) eventView {
	d := func(s jstr) string { return string(s.appendTo(nil)) }
	return eventView{Type: d(f.typ), Delta: d(f.delta), Arguments: d(f.arguments), Code: d(f.code), Message: d(f.message),
		Incomplete: d(f.incomplete), ItemType: d(f.item.typ), CallID: d(f.item.callID), Name: d(f.item.name),
		ItemArguments: d(f.item.arguments), Role: d(f.item.role), OutputIndex: f.outputIndex,
		HasOutputIndex: f.hasOutputIndex, HasItem: f.hasItem, HasUsage: f.hasUsage, Usage: f.usage}
}

// dataLines returns the payloads of the data lines of SSE text.
func dataLines(sse string) []string {
	var out []string
	for _, l := range splitLines(sse) {
		if len(l) > 6 && l[:6] == "data: " {
			out = append(out, l[6:])
		}
	}
	return out
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := range len(s) {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
