package record

import (
	"crypto/sha256"
	"encoding"
	"encoding/json"
	"strings"
	"sync"

	"github.com/agentsim/agentsim/trace"
)

// The Responses API (POST …/responses), as the proxy reads it. A request's instructions and
// input items become the messages the chat path hashes — the instructions a system message,
// message items their role and text, an assistant's message item and the function_call items
// after it one assistant message with its calls (as the reply is hashed), function_call_output
// items tool messages quoting their call_id; reasoning items are left out, as a chat reply's
// reasoning is — so sessions are inferred from the conversation the same way. A request with
// previous_response_id continues the conversation of that response (chains).

// responsesFields are the fields of a Responses request the proxy reads beside chatRequest's.
type responsesFields struct {
	Input              json.RawMessage `json:"input"`
	Instructions       json.RawMessage `json:"instructions"`
	MaxOutputTokens    int             `json:"max_output_tokens"`
	PreviousResponseID string          `json:"previous_response_id"`
	PromptCacheKey     string          `json:"prompt_cache_key"`
	Reasoning          *struct {
		Effort string `json:"effort"`
	} `json:"reasoning"`
}

// responseItem is an input or output item, as far as the proxy reads it.
type responseItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// apiOf names the API of a recorded request's path.
func apiOf(path string) string {
	switch {
	case strings.HasSuffix(path, "/responses"):
		return trace.APIResponses
	case strings.HasSuffix(path, "/chat/completions"):
		return trace.APIChat
	}
	return trace.APICompletions
}

// readResponses reads a Responses request body's fields into b.req: its messages, output cap
// and reasoning effort as a chat request has them.
func (b *parsedBody) readResponses() {
	var f responsesFields
	if json.Unmarshal(b.raw, &f) != nil {
		b.whole = false
		return
	}
	b.resp = f
	b.req.MaxTokens = max(b.req.MaxTokens, f.MaxOutputTokens)
	if f.Reasoning != nil && b.req.ReasoningEffort == "" {
		b.req.ReasoningEffort = f.Reasoning.Effort
	}
	b.req.Messages = responsesMessages(f.Instructions, f.Input)
}

// responsesMessages is a Responses request's conversation as chat messages (see above).
func responsesMessages(instructions, input json.RawMessage) []message {
	var msgs []message
	if text := contentText(instructions); text != "" {
		msgs = append(msgs, message{Role: "system", Content: quoted(text)})
	}
	var s string
	if json.Unmarshal(input, &s) == nil {
		return append(msgs, message{Role: "user", Content: quoted(s)})
	}
	var items []responseItem
	_ = json.Unmarshal(input, &items) // not items: the conversation is the instructions alone
	for _, it := range items {
		switch it.Type {
		case "function_call":
			n := len(msgs)
			if n == 0 || msgs[n-1].Role != "assistant" || msgs[n-1].ToolCallID != "" {
				msgs = append(msgs, message{Role: "assistant", Content: quoted("")})
				n++
			}
			tc := toolCall{Index: len(msgs[n-1].ToolCalls), ID: it.CallID}
			tc.Function.Name, tc.Function.Arguments = it.Name, it.Arguments
			msgs[n-1].ToolCalls = append(msgs[n-1].ToolCalls, tc)
		case "function_call_output":
			msgs = append(msgs, message{Role: "tool", Content: it.Output, ToolCallID: it.CallID})
		case "message", "":
			msgs = append(msgs, message{Role: it.Role, Content: it.Content})
		}
	}
	return msgs
}

// quoted is s as a JSON string.
func quoted(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// responseEvent is what the proxy reads of one Responses stream event.
type responseEvent struct {
	Type        string          `json:"type"`
	Delta       string          `json:"delta"`
	OutputIndex int             `json:"output_index"`
	Item        *responseItem   `json:"item"`
	Response    *responseObject `json:"response"`
	Message     string          `json:"message"` // the error event's
}

// responseObject is what the proxy reads of a response object.
type responseObject struct {
	ID                string          `json:"id"`
	Output            []responseItem  `json:"output"`
	Usage             *responseUsage  `json:"usage"`
	Error             json.RawMessage `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

// responseUsage is a Responses usage object.
type responseUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	InputTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// chat is u as a chat usage object.
func (u *responseUsage) chat() *usage {
	c := &usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens}
	if d := u.InputTokensDetails; d != nil {
		c.PromptTokensDetails = &struct {
			CachedTokens int `json:"cached_tokens"`
		}{d.CachedTokens}
	}
	if d := u.OutputTokensDetails; d != nil {
		c.CompletionTokensDetails = &struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		}{d.ReasoningTokens}
	}
	return c
}

// responsesData reads one data line of a Responses stream, whose bytes arrived at t.
func (x *exchange) responsesData(data []byte, t float64) {
	if typ, delta, index, ok := scanEvent(data); ok && x.responsesDelta(typ, delta, index, t) {
		return // a delta event, read by a scan (chunk.go)
	}
	var e responseEvent
	if json.Unmarshal(data, &e) != nil {
		return
	}
	if r := e.Response; r != nil {
		if r.ID != "" {
			x.respID = r.ID
		}
		if r.Usage != nil {
			x.usage = r.Usage.chat()
		}
	}
	if x.responsesDelta([]byte(e.Type), []byte(e.Delta), e.OutputIndex, t) {
		return
	}
	switch e.Type {
	case "response.output_item.added":
		if e.Item != nil && e.Item.Type == "function_call" {
			x.output(t, false, true)
			x.openCall(e.OutputIndex, e.Item)
		}
	case "response.output_item.done":
		if i, ok := x.callAt[e.OutputIndex]; ok && e.Item != nil && x.args[i].Len() == 0 {
			x.args[i].WriteString(e.Item.Arguments)
		}
	case "response.completed", "response.incomplete":
		x.done, x.ended = true, true
		x.finish = responsesFinish(e.Response, len(x.calls))
	case "response.failed":
		x.ended = true
		if x.failure == "" {
			x.failure = "response.failed: " + errorMessage(e.Response.errorField())
		}
	case "error":
		if x.failure == "" {
			x.failure = "error event: " + e.Message
		}
	}
}

// responsesDelta reads a Responses delta event of type typ that arrived at t — reply text,
// reasoning, or a call's arguments at output index index — and reports whether it was one.
func (x *exchange) responsesDelta(typ, delta []byte, index int, t float64) bool {
	switch string(typ) {
	case "response.output_text.delta", "response.refusal.delta":
		x.output(t, false, len(delta) > 0)
		x.reply.Write(delta)
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		x.output(t, true, len(delta) > 0)
		x.reasonB += len(delta)
	case "response.function_call_arguments.delta":
		if i, ok := x.callAt[index]; ok {
			x.output(t, false, len(delta) > 0)
			x.args[i].Write(delta)
		}
	default:
		return false
	}
	return true
}

// errorField is a response object's error, or nothing.
func (r *responseObject) errorField() json.RawMessage {
	if r == nil {
		return nil
	}
	return r.Error
}

// output notes a frame that carried output at t (when it did): the first is the first token.
func (x *exchange) output(t float64, reasoning, carried bool) {
	if !carried {
		return
	}
	x.outChunks++
	if !x.first {
		x.first, x.firstS = true, t
		x.p.observe(func(o Observer) { o.FirstToken(x.seen(), t, reasoning) })
	}
}

// openCall adds the function call an output item opens at output index i.
func (x *exchange) openCall(i int, it *responseItem) {
	if _, ok := x.callAt[i]; ok || len(x.calls) >= maxToolCalls {
		return
	}
	if x.callAt == nil {
		x.callAt = map[int]int{}
	}
	x.callAt[i] = len(x.calls)
	tc := toolCall{Index: len(x.calls), ID: it.CallID}
	tc.Function.Name = it.Name
	x.calls = append(x.calls, tc)
	x.args = append(x.args, strings.Builder{})
	x.args[len(x.args)-1].WriteString(it.Arguments)
}

// responsesFinish is the finish reason of a response that ended: length when it stopped at
// max_output_tokens, another incomplete reason as given, else tool_calls after calls or stop.
func responsesFinish(r *responseObject, calls int) string {
	switch {
	case r != nil && r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "max_output_tokens":
		return "length"
	case r != nil && r.IncompleteDetails != nil && r.IncompleteDetails.Reason != "":
		return r.IncompleteDetails.Reason
	case calls > 0:
		return "tool_calls"
	}
	return "stop"
}

// parseResponseJSON reads a whole Responses JSON body: a response object, or an error.
func (x *exchange) parseResponseJSON(b []byte) {
	var r responseObject
	if json.Unmarshal(b, &r) != nil {
		return
	}
	x.done = x.status < 300
	if msg := errorMessage(r.Error); msg != "" {
		x.failure = msg
	}
	x.respID = r.ID
	if r.Usage != nil {
		x.usage = r.Usage.chat()
	}
	for _, it := range r.Output {
		switch it.Type {
		case "message":
			x.reply.WriteString(contentText(it.Content))
		case "function_call":
			tc := toolCall{Index: len(x.calls), ID: it.CallID}
			tc.Function.Name, tc.Function.Arguments = it.Name, it.Arguments
			x.calls = append(x.calls, tc)
		}
	}
	x.finish = responsesFinish(&r, len(x.calls))
}

// chains keeps, for each lane's latest response with an id, what a request naming it as
// previous_response_id continues: the lane's group and its conversation's hash, prompt and
// reply. A lane keeps one: a chain continues a lane's latest response.
type chains struct {
	mu     sync.Mutex
	byID   map[string]chainEnd
	latest map[*lane]string
}

// chainEnd is the conversation a response ended.
type chainEnd struct {
	group string
	state []byte // the conversation hash's state
	bytes int    // its text bytes
}

func newChains() *chains {
	return &chains{byID: map[string]chainEnd{}, latest: map[*lane]string{}}
}

// put records that response id of lane l ended the conversation h.
func (c *chains) put(id string, l *lane, h *convHash) {
	m, ok := h.h.(encoding.BinaryMarshaler)
	if !ok || id == "" {
		return
	}
	state, err := m.MarshalBinary()
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byID, c.latest[l])
	c.byID[id], c.latest[l] = chainEnd{group: l.group, state: state, bytes: h.bytes}, id
}

// get returns the conversation response id ended, and the hash of it to continue.
func (c *chains) get(id string) (string, *convHash, bool) {
	c.mu.Lock()
	end, ok := c.byID[id]
	c.mu.Unlock()
	if !ok {
		return "", nil, false
	}
	h := sha256.New()
	if h.(encoding.BinaryUnmarshaler).UnmarshalBinary(end.state) != nil {
		return "", nil, false
	}
	return end.group, &convHash{h: h, bytes: end.bytes}, true
}
