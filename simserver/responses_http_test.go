package simserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/simserver"
)

// flatTool is a chat tool definition in the Responses API's shape: the function's members
// beside "type".
func flatTool(def string) string {
	var t map[string]json.RawMessage
	if err := json.Unmarshal([]byte(def), &t); err != nil {
		panic(err)
	}
	fn := t["function"]
	if fn == nil {
		return def
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(fn, &members); err != nil {
		panic(err)
	}
	members["type"] = json.RawMessage(`"function"`)
	b, _ := json.Marshal(members)
	return string(b)
}

// respTools is a Responses API tools array of the given chat definitions.
func respTools(defs ...string) string {
	flat := make([]string, len(defs))
	for i, d := range defs {
		flat[i] = flatTool(d)
	}
	return tools(flat...)
}

// respEvent is one server-sent event: its event line and its data.
type respEvent struct {
	name string
	data map[string]json.RawMessage
	raw  string
}

// str is a string member of the event's data ("" when absent).
func (e respEvent) str(key string) string {
	var s string
	_ = json.Unmarshal(e.data[key], &s)
	return s
}

// num is a number member of the event's data (-1 when absent).
func (e respEvent) num(key string) int {
	n := -1
	if v, ok := e.data[key]; ok {
		_ = json.Unmarshal(v, &n)
	}
	return n
}

// readEvents reads a Responses API stream to its end.
func readEvents(t *testing.T, body io.Reader) []respEvent {
	t.Helper()
	var out []respEvent
	br := bufio.NewReader(body)
	name := ""
	for {
		line, err := br.ReadString('\n')
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			e := respEvent{name: name, raw: strings.TrimPrefix(line, "data: ")}
			require.NoError(t, json.Unmarshal([]byte(e.raw), &e.data), "event %s: %s", name, e.raw)
			out = append(out, e)
			name = ""
		}
		if err != nil {
			return out
		}
	}
}

// respBody is a Responses API request of the model with the given members.
func respBody(members string) string {
	return `{"model":"deepseek-v4-flash",` + members + `}`
}

// respInput is a coding agent's first input.
const respInput = `"instructions":"you are a coding agent","input":[{"role":"user","content":[{"type":"input_text","text":"find the bug"}]}]`

// postEvents sends a streaming Responses API body and reads its events.
func (ts *testServer) postEvents(body string) []respEvent {
	ts.t.Helper()
	resp := ts.postTo(context.Background(), "/v1/responses", body)
	defer resp.Body.Close()
	require.Equal(ts.t, http.StatusOK, resp.StatusCode)
	assert.Equal(ts.t, "text/event-stream", resp.Header.Get("Content-Type"))
	return readEvents(ts.t.(*testing.T), resp.Body)
}

// postResponse sends a non-streaming Responses API body and decodes the response object.
func (ts *testServer) postResponse(body string) (int, map[string]json.RawMessage) {
	ts.t.Helper()
	resp := ts.postTo(context.Background(), "/v1/responses", body)
	defer resp.Body.Close()
	var obj map[string]json.RawMessage
	require.NoError(ts.t, json.NewDecoder(resp.Body).Decode(&obj))
	return resp.StatusCode, obj
}

// outputItem is an output item, as the tests read it.
type outputItem struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Status  string `json:"status"`
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Args    string `json:"arguments"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

// responseOf is a response object, as the tests read it.
type responseOf struct {
	ID     string       `json:"id"`
	Status string       `json:"status"`
	Output []outputItem `json:"output"`
	Usage  *struct {
		InputTokens        int `json:"input_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokens        int `json:"output_tokens"`
		OutputTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
		TotalTokens int `json:"total_tokens"`
	} `json:"usage"`
}

func decodeResponse(t *testing.T, raw json.RawMessage) responseOf {
	t.Helper()
	var r responseOf
	require.NoError(t, json.Unmarshal(raw, &r), "response %s", raw)
	return r
}

// checkEventOrder checks what every Responses API stream holds: the type of each event's data
// is its event line, sequence numbers count from 0, response.created then
// response.in_progress open it, every item added is done once, in order, its deltas between,
// and the last event is the response's end (end), whose output is the items done.
func checkEventOrder(t *testing.T, events []respEvent, end string) responseOf {
	t.Helper()
	require.GreaterOrEqual(t, len(events), 3)
	assert.Equal(t, "response.created", events[0].name)
	assert.Equal(t, "response.in_progress", events[1].name)
	assert.Equal(t, end, events[len(events)-1].name)
	open := map[string]int{} // item id → output index, while open
	var done []json.RawMessage
	for i, e := range events {
		assert.Equal(t, e.name, e.str("type"), "event %d's type", i)
		assert.Equal(t, i, e.num("sequence_number"), "event %d's sequence_number", i)
		switch e.name {
		case "response.output_item.added":
			var it outputItem
			require.NoError(t, json.Unmarshal(e.data["item"], &it))
			assert.Empty(t, open, "event %d: an item begins while another is open", i)
			assert.Equal(t, len(done), e.num("output_index"), "event %d: output_index", i)
			open[it.ID] = e.num("output_index")
		case "response.output_item.done":
			var it outputItem
			require.NoError(t, json.Unmarshal(e.data["item"], &it))
			_, ok := open[it.ID]
			assert.True(t, ok, "event %d: done for an item not open: %s", i, e.raw)
			delete(open, it.ID)
			done = append(done, e.data["item"])
		case "response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed", "error":
		default:
			idx, ok := open[e.str("item_id")]
			assert.True(t, ok, "event %d names no open item: %s", i, e.raw)
			assert.Equal(t, idx, e.num("output_index"), "event %d: output_index", i)
		}
	}
	assert.Empty(t, open, "every item added is done")
	last := events[len(events)-1].data["response"]
	var raw struct {
		Output []json.RawMessage `json:"output"`
	}
	require.NoError(t, json.Unmarshal(last, &raw))
	require.Len(t, raw.Output, len(done))
	for i := range done {
		assert.JSONEq(t, string(done[i]), string(raw.Output[i]), "output[%d] is the item done", i)
	}
	return decodeResponse(t, last)
}

// TestResponsesStreamToolCalls reads a stream that calls tools after reasoning with a summary:
// the events in the API's order, the reasoning summary first, then function_call items whose
// call_id, name and JSON arguments (valid against their schemas) the deltas and the done
// events agree on; the web_search and risky tools are never called; the usage counts it all.
func TestResponsesStreamToolCalls(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := admissionProfile()
		p.Agent.CallsPerReply, p.Agent.CallsPerReplyP99 = 3, 12
		ts := startServer(t, simserver.Options{Profile: p})
		events := ts.postEvents(respBody(`"stream":true,` + respInput + `,` + respTools(readTool, grepTool, bashTool, askTool, webTool) +
			`,"tool_choice":"required","reasoning":{"effort":"low","summary":"auto"}`))
		r := checkEventOrder(t, events, "response.completed")
		assert.Equal(t, "completed", r.Status)
		require.GreaterOrEqual(t, len(r.Output), 2)
		assert.Equal(t, "reasoning", r.Output[0].Type)
		require.Len(t, r.Output[0].Summary, 1)
		summary, args := "", map[string]string{}
		for _, e := range events {
			switch e.name {
			case "response.reasoning_summary_text.delta":
				summary += e.str("delta")
			case "response.function_call_arguments.delta":
				args[e.str("item_id")] += e.str("delta")
			}
		}
		assert.Equal(t, r.Output[0].Summary[0].Text, summary, "the summary deltas spell the summary")
		output := 0
		for _, it := range r.Output[1:] {
			require.Equal(t, "function_call", it.Type)
			assert.True(t, strings.HasPrefix(it.CallID, "call_"), "call_id %q", it.CallID)
			assert.Contains(t, []string{"read", "grep"}, it.Name, "only the tools that read are called")
			assert.Equal(t, it.Args, args[it.ID], "the deltas spell the arguments")
			checkArguments(t, it.Name, it.Args)
			output += simserver.CountTokens(it.Name) + simserver.CountTokens(it.Args)
		}
		require.NotNil(t, r.Usage)
		assert.Equal(t, output+r.Usage.OutputTokensDetails.ReasoningTokens, r.Usage.OutputTokens)
		assert.Positive(t, r.Usage.OutputTokensDetails.ReasoningTokens)
		assert.Equal(t, r.Usage.InputTokens+r.Usage.OutputTokens, r.Usage.TotalTokens)
	})
}

// TestResponsesStreamMessage: a reply without tools is a message item whose text deltas
// spell its text; reasoning without a summary asked for streams as reasoning text; the
// response cut by max_output_tokens ends with response.incomplete.
func TestResponsesStreamMessage(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{Profile: admissionProfile()})
		events := ts.postEvents(respBody(`"stream":true,` + respInput + `,"reasoning":{"effort":"low"}`))
		r := checkEventOrder(t, events, "response.completed")
		require.Len(t, r.Output, 2)
		assert.Equal(t, "reasoning", r.Output[0].Type)
		assert.Equal(t, "message", r.Output[1].Type)
		text, reasoning := "", ""
		for _, e := range events {
			switch e.name {
			case "response.output_text.delta":
				text += e.str("delta")
			case "response.reasoning_text.delta":
				reasoning += e.str("delta")
			case "response.reasoning_summary_text.delta":
				t.Errorf("a summary nobody asked for: %s", e.raw)
			}
		}
		assert.NotEmpty(t, reasoning)
		require.Len(t, r.Output[1].Content, 1)
		assert.Equal(t, "output_text", r.Output[1].Content[0].Type)
		assert.Equal(t, r.Output[1].Content[0].Text, text)
		assert.Equal(t, simserver.CountTokens(text)+simserver.CountTokens(reasoning), r.Usage.OutputTokens)

		cut := ts.postEvents(respBody(`"stream":true,` + respInput + `,"max_output_tokens":7`))
		r = checkEventOrder(t, cut, "response.incomplete")
		assert.Equal(t, "incomplete", r.Status)
		assert.Equal(t, 7, r.Usage.OutputTokens)
	})
}

// TestResponsesWhole: without stream the answer is the response object the stream ends with:
// the same items, status and usage for the same request.
func TestResponsesWhole(t *testing.T) {
	bubble(t, func(t *testing.T) {
		body := respInput + `,` + respTools(readTool, webTool) + `,"tool_choice":"required","reasoning":{"effort":"low","summary":"detailed"}`
		streamed := func() responseOf {
			ts := startServer(t, simserver.Options{Profile: admissionProfile()})
			events := ts.postEvents(respBody(`"stream":true,` + body))
			return decodeResponse(t, events[len(events)-1].data["response"])
		}()
		ts := startServer(t, simserver.Options{Profile: admissionProfile()})
		status, obj := ts.postResponse(respBody(body))
		require.Equal(t, http.StatusOK, status)
		assert.JSONEq(t, `"response"`, string(obj["object"]))
		whole := decodeResponse(t, mustMarshal(obj))
		assert.Equal(t, "completed", whole.Status)
		require.Equal(t, len(streamed.Output), len(whole.Output))
		for i := range whole.Output {
			a, b := streamed.Output[i], whole.Output[i]
			a.ID, b.ID = "", ""
			assert.Equal(t, a, b, "output[%d]", i)
		}
		assert.Equal(t, streamed.Usage, whole.Usage)
	})
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestResponsesChain continues a stored response with previous_response_id and the outputs of
// its calls: the prefix cache sees the chain as one growing context, the tool model counts
// the chain's steps, and a response past its time is gone.
func TestResponsesChain(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{Profile: admissionProfile()})
		tl := respTools(readTool)
		status, obj := ts.postResponse(respBody(respInput + `,` + tl + `,"tool_choice":"required"`))
		require.Equal(t, http.StatusOK, status)
		first := decodeResponse(t, mustMarshal(obj))
		var outputs []string
		for _, it := range first.Output {
			require.Equal(t, "function_call", it.Type)
			outputs = append(outputs, `{"type":"function_call_output","call_id":"`+it.CallID+`","output":"the file"}`)
		}
		next := respBody(`"instructions":"you are a coding agent","previous_response_id":"` + first.ID + `","input":[` + strings.Join(outputs, ",") + `],` + tl)
		status, obj = ts.postResponse(next)
		require.Equal(t, http.StatusOK, status, "%s", mustMarshal(obj))
		second := decodeResponse(t, mustMarshal(obj))
		assert.Equal(t, first.Usage.InputTokens-3, second.Usage.InputTokensDetails.CachedTokens,
			"the first request's prompt is cached for the chain")
		assert.Greater(t, second.Usage.InputTokens, first.Usage.InputTokens+first.Usage.OutputTokens)

		// The same conversation sent whole (store: false, as Codex sends it) is the same prompt.
		var items []string
		items = append(items, `{"role":"user","content":"find the bug"}`)
		for _, it := range first.Output {
			items = append(items, `{"type":"function_call","call_id":"`+it.CallID+`","name":"`+it.Name+`","arguments":`+mustJSONString(it.Args)+`}`)
		}
		whole := respBody(`"instructions":"you are a coding agent","store":false,"input":[` + strings.Join(append(items, outputs...), ",") + `],` + tl)
		status, obj = ts.postResponse(whole)
		require.Equal(t, http.StatusOK, status, "%s", mustMarshal(obj))
		third := decodeResponse(t, mustMarshal(obj))
		assert.Equal(t, second.Usage.InputTokens, third.Usage.InputTokens, "the whole input is the chain's prompt")

		ts.wait(time.Hour)
		resp := ts.postTo(context.Background(), "/v1/responses", next)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
		e := decodeResponsesError(t, resp)
		assert.Equal(t, "previous_response_not_found", e.Code)
		assert.Contains(t, e.Message, first.ID)
	})
}

func mustJSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// responsesError is the Responses API's error body.
type responsesError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    any     `json:"code"`
}

// decodeResponsesError checks a response is an error in OpenAI's shape: its code a string or
// null.
func decodeResponsesError(t *testing.T, resp *http.Response) responsesError {
	t.Helper()
	defer resp.Body.Close()
	var e struct {
		Error responsesError `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
	if e.Error.Code != nil {
		_, ok := e.Error.Code.(string)
		assert.True(t, ok, "code %v is a string or null", e.Error.Code)
	}
	assert.NotEmpty(t, e.Error.Message)
	return e.Error
}

// TestResponsesBadInput: each request the API refuses is a 400 in its error shape naming the
// member at fault and what is wrong.
func TestResponsesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, members, param, message string
	}{
		// An item of no kind the API has.
		{"unknown item", `"input":[{"type":"bogus_item"}]`, "input[0].type", `input[0].type "bogus_item" is not an input item type`},
		// An output answering no call.
		{"output for no call", `"input":[{"role":"user","content":"hi"},{"type":"function_call_output","call_id":"call_nope","output":"x"}]`,
			"input[1].call_id", "No tool call found for function_call output with call_id call_nope"},
		// A previous response never stored.
		{"unknown previous", `"previous_response_id":"resp_nope","input":"hi"`, "previous_response_id", "Previous response with id 'resp_nope' not found"},
		// A message role the API does not have.
		{"bad role", `"input":[{"role":"robot","content":"hi"}]`, "input[0].role", `input[0].role must be one of user, assistant, system, developer; got "robot"`},
		// A content part of no kind the API has.
		{"bad part", `"input":[{"role":"user","content":[{"type":"video","text":"x"}]}]`, "input[0].content[0].type", `got "video"`},
		// A call without its id.
		{"call without id", `"input":[{"type":"function_call","name":"read","arguments":"{}"}]`, "input[0].call_id", "call_id is required"},
		// No input at all.
		{"no input", `"instructions":"x"`, "input", "input is required"},
		// Instructions that are not text.
		{"instructions", `"instructions":[1],"input":"hi"`, "instructions", "instructions must be a string"},
		// A summary of no kind.
		{"summary", `"input":"hi","reasoning":{"summary":"long"}`, "reasoning.summary", `got "long"`},
		// A flat function tool without its name.
		{"tool without name", `"input":"hi","tools":[{"type":"function","parameters":{}}]`, "tools[0].name", "tools[0].name is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				ts := startServer(t, simserver.Options{})
				resp := ts.postTo(context.Background(), "/v1/responses", respBody(tc.members))
				require.Equal(t, http.StatusBadRequest, resp.StatusCode)
				e := decodeResponsesError(t, resp)
				assert.Equal(t, "invalid_request_error", e.Type)
				require.NotNil(t, e.Param)
				assert.Equal(t, tc.param, *e.Param)
				assert.Contains(t, e.Message, tc.message)
			})
		})
	}
}

// TestResponsesToolStepsAsChat: the tool model answers a Responses conversation as it answers
// the same conversation over chat completions: as many tool steps before the final answer.
func TestResponsesToolStepsAsChat(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{Profile: admissionProfile()})
		// The first task of these that the model does not answer at once (43 % are).
		task, chatSteps := "", 0
		for _, task = range []string{"find the bug", "fix the test", "read the code", "explain the build"} {
			if chatSteps = chatToolSteps(t, ts, task); chatSteps > 0 {
				break
			}
		}
		respSteps, prev, input := 0, "", `[{"role":"user","content":"`+task+`"}]`
		for ; respSteps < 50; respSteps++ {
			status, obj := ts.postResponse(respBody(`"instructions":"you are a coding agent",` + respTools(readTool) + prev + `,"input":` + input))
			require.Equal(t, http.StatusOK, status, "%s", mustMarshal(obj))
			r := decodeResponse(t, mustMarshal(obj))
			var outputs []string
			for _, it := range r.Output {
				if it.Type == "function_call" {
					outputs = append(outputs, `{"type":"function_call_output","call_id":"`+it.CallID+`","output":"the file"}`)
				}
			}
			if len(outputs) == 0 {
				break
			}
			prev, input = `,"previous_response_id":"`+r.ID+`"`, `[`+strings.Join(outputs, ",")+`]`
		}
		assert.Positive(t, chatSteps)
		assert.Equal(t, chatSteps, respSteps)
	})
}

// chatToolSteps drives a chat-completions conversation of one user task with the read tool
// until the model answers without a tool call, and returns the steps it took.
func chatToolSteps(t *testing.T, ts *testServer, task string) int {
	t.Helper()
	chatSteps := 0
	msgs := []string{`{"role":"system","content":"you are a coding agent"}`, `{"role":"user","content":"` + task + `"}`}
	for ; chatSteps < 50; chatSteps++ {
		calls := readToolStream(t, ts.postFrames(`{"model":"deepseek-v4-flash","stream":true,`+tools(readTool)+`,"messages":[`+strings.Join(msgs, ",")+`]}`)).calls(t)
		if len(calls) == 0 {
			break
		}
		var tc []string
		for _, c := range calls {
			tc = append(tc, `{"id":"`+c.id+`","type":"function","function":{"name":"`+c.name+`","arguments":`+mustJSONString(c.arguments)+`}}`)
		}
		msgs = append(msgs, `{"role":"assistant","content":null,"tool_calls":[`+strings.Join(tc, ",")+`]}`)
		for _, c := range calls {
			msgs = append(msgs, `{"role":"tool","tool_call_id":"`+c.id+`","content":"the file"}`)
		}
	}
	return chatSteps
}
