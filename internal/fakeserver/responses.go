package fakeserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// responsesRequest is the part of a Responses API request the fake reads.
type responsesRequest struct {
	Model           string          `json:"model"`
	MaxOutputTokens int             `json:"max_output_tokens"`
	IgnoreEOS       bool            `json:"ignore_eos"`
	Stream          bool            `json:"stream"`
	Instructions    string          `json:"instructions"`
	Input           json.RawMessage `json:"input"`
	Tools           []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
}

// inputItem is an input item, as far as the fake reads it.
type inputItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	CallID  string          `json:"call_id"`
	Output  json.RawMessage `json:"output"`
	Name    string          `json:"name"`
}

// serveResponses answers POST /v1/responses as chat completions are answered — the same
// checks, tokens and failures — in the Responses API's shapes: with CallTools, a request
// offering function tools whose input does not end with tool results is answered with
// CallTools calls of its first function. A function_call_output for no function_call of the
// input is OpenAI's 400.
func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request) {
	var req responsesRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		vllmError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	items, words, err := readInput(req.Input)
	if err != nil {
		vllmError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	if len(s.Models) > 0 && !slices.Contains(s.Models, req.Model) {
		vllmError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", req.Model))
		return
	}
	if s.RequireIgnoreEOS && !req.IgnoreEOS {
		vllmError(w, http.StatusBadRequest, "BadRequestError", "this server serves only requests with ignore_eos")
		return
	}
	prompt := s.PromptTokens
	if prompt == 0 {
		prompt = (words + len(strings.Fields(req.Instructions))) * max(1, s.TokensPerWord)
	}
	if s.failThis() {
		vllmError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "overloaded")
		return
	}
	out := s.Tokens
	if !s.FixedTokens && (req.IgnoreEOS || (req.MaxOutputTokens > 0 && req.MaxOutputTokens < out)) {
		out = req.MaxOutputTokens
	}
	rs := &responseStream{s: s, w: w, r: r, id: s.responseID(), model: req.Model, prompt: prompt, out: out}
	if fn := s.calledFunction(&req, items); fn != "" {
		rs.calls = s.CallTools
		rs.function = fn
	}
	if !req.Stream {
		rs.whole()
		return
	}
	rs.stream()
}

// responseID names the next response.
func (s *Server) responseID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responses++
	return fmt.Sprintf("resp_%d", s.responses)
}

// readInput reads a request's input, a string or items, and counts its words; a
// function_call_output whose call_id no function_call of the input has is an error.
func readInput(raw json.RawMessage) ([]inputItem, int, error) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return nil, len(strings.Fields(text)), nil
	}
	var items []inputItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, 0, fmt.Errorf("input: want a string or an array of items: %v", err)
	}
	words, calls := 0, map[string]bool{}
	for _, it := range items {
		switch it.Type {
		case "function_call":
			calls[it.CallID] = true
		case "function_call_output":
			if !calls[it.CallID] {
				return nil, 0, fmt.Errorf("No tool call found for function call output with call_id %s.", it.CallID)
			}
			words += len(strings.Fields(contentWords(it.Output)))
		case "message", "":
			words += len(strings.Fields(contentWords(it.Content)))
		}
	}
	return items, words, nil
}

// contentWords is a content's text: a string, or the text of its parts.
func contentWords(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
		b.WriteByte(' ')
	}
	return b.String()
}

// calledFunction is the function a reply calls: with CallTools, the first function tool of a
// request whose input does not end with tool results and whose tool_choice is not none.
func (s *Server) calledFunction(req *responsesRequest, items []inputItem) string {
	if s.CallTools == 0 || string(req.ToolChoice) == `"none"` {
		return ""
	}
	if n := len(items); n > 0 && items[n-1].Type == "function_call_output" {
		return ""
	}
	for _, t := range req.Tools {
		if t.Type == "function" {
			return t.Name
		}
	}
	return ""
}

// responseStream is one response the fake writes.
type responseStream struct {
	s           *Server
	w           http.ResponseWriter
	r           *http.Request
	id          string // resp_1, resp_2… in the order the server answered
	model       string
	prompt, out int
	calls       int // function calls of the reply, before its text
	function    string
	seq         int
}

// object is the response object, with its output items and usage when done.
func (rs *responseStream) object(status string, output []any) map[string]any {
	o := map[string]any{"id": rs.id, "object": "response", "created_at": 1700000000, "status": status,
		"model": rs.model, "output": output, "error": nil, "incomplete_details": nil, "usage": nil,
		"parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}, "store": false}
	if status == "completed" {
		o["usage"] = map[string]any{"input_tokens": rs.prompt, "input_tokens_details": map[string]int{"cached_tokens": 0},
			"output_tokens": rs.out, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": rs.prompt + rs.out}
	}
	return o
}

// items are the reply's output items: its function calls, then a message of text.
func (rs *responseStream) items(text string) []any {
	var out []any
	for i := range rs.calls {
		out = append(out, rs.callItem(i, "completed"))
	}
	if rs.calls == 0 {
		out = append(out, map[string]any{"type": "message", "id": "msg_fake", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}})
	}
	return out
}

// callItem is function call i's output item.
func (rs *responseStream) callItem(i int, status string) map[string]any {
	args := ""
	if status == "completed" {
		args = "{}"
	}
	return map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", i), "call_id": fmt.Sprintf("call_fake_%d", i),
		"name": rs.function, "arguments": args, "status": status}
}

// whole answers with the response object.
func (rs *responseStream) whole() {
	rs.w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rs.w).Encode(rs.object("completed", rs.items(strings.Repeat("tok ", rs.out))))
	rs.s.ended(rs.out)
}

// event writes one event, its event: line and its data.
func (rs *responseStream) event(typ string, fields map[string]any) {
	fields["type"], fields["sequence_number"] = typ, rs.seq
	rs.seq++
	b, _ := json.Marshal(fields)
	fmt.Fprintf(rs.w, "event: %s\ndata: %s\n\n", typ, b)
	rs.w.(http.Flusher).Flush()
}

// stream writes the reply's events: created and in_progress, its function calls, or its text
// one token a frame every ITL, then completed; a frozen server sends nothing more until the
// client gives up.
func (rs *responseStream) stream() {
	s := rs.s
	s.mu.Lock()
	s.running++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running--
		s.mu.Unlock()
	}()
	rs.w.Header().Set("Content-Type", "text/event-stream")
	rs.event("response.created", map[string]any{"response": rs.object("in_progress", []any{})})
	rs.event("response.in_progress", map[string]any{"response": rs.object("in_progress", []any{})})
	for i := range rs.calls {
		rs.event("response.output_item.added", map[string]any{"output_index": i, "item": rs.callItem(i, "in_progress")})
		if !rs.tick() {
			return
		}
		rs.event("response.function_call_arguments.delta", map[string]any{"output_index": i, "item_id": fmt.Sprintf("fc_%d", i), "delta": "{}"})
		rs.event("response.function_call_arguments.done", map[string]any{"output_index": i, "item_id": fmt.Sprintf("fc_%d", i), "arguments": "{}"})
		rs.event("response.output_item.done", map[string]any{"output_index": i, "item": rs.callItem(i, "completed")})
	}
	if rs.calls == 0 && !rs.text() {
		return
	}
	rs.event("response.completed", map[string]any{"response": rs.object("completed", rs.items(strings.Repeat("tok ", rs.out)))})
	s.ended(rs.out)
}

// text writes the message item of out tokens; false when the client went away first.
func (rs *responseStream) text() bool {
	item := map[string]any{"type": "message", "id": "msg_fake", "status": "in_progress", "role": "assistant", "content": []any{}}
	rs.event("response.output_item.added", map[string]any{"output_index": 0, "item": item})
	rs.event("response.content_part.added", map[string]any{"output_index": 0, "item_id": "msg_fake", "content_index": 0,
		"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
	for range rs.out {
		if !rs.tick() {
			return false
		}
		rs.event("response.output_text.delta", map[string]any{"output_index": 0, "item_id": "msg_fake", "content_index": 0,
			"delta": "tok ", "logprobs": []any{}})
	}
	text := strings.Repeat("tok ", rs.out)
	rs.event("response.output_text.done", map[string]any{"output_index": 0, "item_id": "msg_fake", "content_index": 0, "text": text, "logprobs": []any{}})
	rs.event("response.content_part.done", map[string]any{"output_index": 0, "item_id": "msg_fake", "content_index": 0,
		"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}})
	rs.event("response.output_item.done", map[string]any{"output_index": 0, "item": rs.items(text)[0]})
	return true
}

// tick waits one ITL before a token; false when the server is frozen, after the client gave
// up.
func (rs *responseStream) tick() bool {
	if rs.s.isFrozen() {
		<-rs.r.Context().Done()
		return false
	}
	if rs.s.ITL > 0 {
		time.Sleep(rs.s.ITL)
	}
	return true
}
