package simserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// The input of a Responses API request, read into the messages a chat template would render:
// a string is one user message; an items array holds messages (a role and content, a string
// or parts), the model's earlier calls (function_call, custom_tool_call) and their outputs
// (function_call_output, custom_tool_call_output), reasoning items (accepted and, as a
// reasoning model's template does, left out of the prompt), and the items of built-in tools
// (web_search_call, local_shell_call, …), whose JSON the prompt holds as it was sent. Calls
// in a row after an assistant message are one assistant turn, as one chat message with
// tool_calls is, so the tool model counts the steps as it does for chat.

// rawInputItem is the wire form of one input item: the members of every kind the simulator
// reads.
type rawInputItem struct {
	Type      *string         `json:"type"`
	Role      *string         `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    *string         `json:"call_id"`
	Name      *string         `json:"name"`
	Arguments *string         `json:"arguments"`
	Input     *string         `json:"input"`
	Output    json.RawMessage `json:"output"`
}

// rawInputPart is one part of a message's content, or of a call output's.
type rawInputPart struct {
	Type    *string `json:"type"`
	Text    *string `json:"text"`
	Refusal *string `json:"refusal"`
}

// Input item kinds beyond messages, calls and their outputs: kept in the prompt as sent.
var (
	// builtinCallItems are the calls of built-in tools, and other items the model wrote.
	builtinCallItems = []string{
		"web_search_call", "file_search_call", "computer_call", "code_interpreter_call", "image_generation_call",
		"local_shell_call", "shell_call", "apply_patch_call", "mcp_call", "mcp_list_tools", "mcp_approval_request",
		"item_reference", "compaction",
	}
	// builtinOutputItems are the outputs a client sends back for them.
	builtinOutputItems = []string{
		"computer_call_output", "local_shell_call_output", "shell_call_output", "apply_patch_call_output", "mcp_approval_response",
	}
)

// inputRoles are the roles of input messages.
var inputRoles = []string{"user", "assistant", "system", "developer"}

// inputPartTypes are the content part types of input messages; those with text give it to
// the prompt.
var inputPartTypes = []string{"input_text", "output_text", "refusal", "summary_text", "reasoning_text", "text", "input_image", "input_file", "input_audio"}

// itemKinds lists every input item type, for errors.
func itemKinds() string {
	kinds := []string{"message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output", "reasoning"}
	return strings.Join(append(append(kinds, builtinCallItems...), builtinOutputItems...), ", ")
}

// parseInput reads input: a string or an array of items. calls are the ids of the calls the
// conversation before it made; every call output must answer one of them or a call earlier
// in the input.
func parseInput(data json.RawMessage, calls []string) ([]chatMessage, *apiError) {
	if isNull(data) {
		return nil, badRequest("input", "input is required: a string, or an array of input items")
	}
	var text string
	if data[0] == '"' {
		if err := json.Unmarshal(data, &text); err != nil {
			return nil, badRequest("input", "input is not a valid JSON string")
		}
		return []chatMessage{textMessage("user", text)}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, badRequest("input", "input must be a string or an array of input items")
	}
	r := &inputReader{calls: calls, turn: -1}
	for i, item := range items {
		if aerr := r.item(i, item); aerr != nil {
			return nil, aerr
		}
	}
	if len(r.msgs) == 0 {
		return nil, badRequest("input", "input must hold at least one message or call output")
	}
	return r.msgs, nil
}

// inputReader builds the messages of an items array.
type inputReader struct {
	msgs  []chatMessage
	calls []string // the ids of the calls so far
	// turn is the index in msgs of the assistant turn later calls join, -1 when none is open.
	turn int
}

// item reads input item i.
func (r *inputReader) item(i int, data json.RawMessage) *apiError {
	param := fmt.Sprintf("input[%d]", i)
	var it rawInputItem
	if !isObject(data) {
		return badRequest(param, param+" must be an input item object")
	}
	if err := json.Unmarshal(data, &it); err != nil {
		return jsonError(param, err)
	}
	kind := "message"
	if it.Type != nil {
		kind = *it.Type
	}
	switch {
	case kind == "message":
		return r.message(param, &it)
	case kind == "function_call" || kind == "custom_tool_call":
		return r.call(param, kind, &it)
	case kind == "function_call_output" || kind == "custom_tool_call_output":
		return r.output(param, kind, &it)
	case kind == "reasoning":
		return nil
	case slices.Contains(builtinCallItems, kind):
		r.join(textMessage("assistant", string(data)))
	case slices.Contains(builtinOutputItems, kind):
		r.add(textMessage("tool", string(data)))
	default:
		return badRequest(param+".type", fmt.Sprintf("%s.type %q is not an input item type: want one of %s", param, kind, itemKinds()))
	}
	return nil
}

// add appends a message that ends any open assistant turn.
func (r *inputReader) add(m chatMessage) {
	r.msgs = append(r.msgs, m)
	r.turn = -1
}

// join adds an assistant message's parts and calls to the open assistant turn, or opens one.
func (r *inputReader) join(m chatMessage) {
	if len(r.msgs) == 0 || r.turn < 0 {
		r.msgs = append(r.msgs, m)
		r.turn = len(r.msgs) - 1
		return
	}
	t := &r.msgs[r.turn]
	t.Text.join(m.Text)
	t.Calls += m.Calls
	t.CallIDs = append(t.CallIDs, m.CallIDs...)
}

// message reads a message item: a role and content, a string or parts.
func (r *inputReader) message(param string, it *rawInputItem) *apiError {
	if it.Role == nil || !slices.Contains(inputRoles, *it.Role) {
		got := "none"
		if it.Role != nil {
			got = fmt.Sprintf("%q", *it.Role)
		}
		return badRequest(param+".role", fmt.Sprintf("%s.role must be one of %s; got %s", param, strings.Join(inputRoles, ", "), got))
	}
	m := chatMessage{Role: *it.Role}
	if aerr := readParts(param+".content", it.Content, &m.Text); aerr != nil {
		return aerr
	}
	if m.Role == "assistant" {
		r.join(m)
		return nil
	}
	r.add(m)
	return nil
}

// readParts digests into text the text of content: a string or an array of parts.
func readParts(param string, data json.RawMessage, text *textDigest) *apiError {
	if isNull(data) {
		return badRequest(param, param+" is required: a string or an array of content parts")
	}
	var s string
	if data[0] == '"' {
		if json.Unmarshal(data, &s) != nil {
			return badRequest(param, param+" is not a valid JSON string")
		}
		text.add(s)
		return nil
	}
	var parts []rawInputPart
	if err := json.Unmarshal(data, &parts); err != nil {
		return badRequest(param, param+" must be a string or an array of content parts")
	}
	var d textDigest
	for j, p := range parts {
		pp := fmt.Sprintf("%s[%d]", param, j)
		if p.Type == nil || !slices.Contains(inputPartTypes, *p.Type) {
			got := "none"
			if p.Type != nil {
				got = fmt.Sprintf("%q", *p.Type)
			}
			return badRequest(pp+".type", fmt.Sprintf("%s.type must be one of %s; got %s", pp, strings.Join(inputPartTypes, ", "), got))
		}
		switch {
		case p.Text != nil:
			d.add(*p.Text)
		case p.Refusal != nil:
			d.add(*p.Refusal)
		}
	}
	*text = d
	return nil
}

// call reads a function_call or custom_tool_call item: the model's earlier call, joining the
// assistant turn.
func (r *inputReader) call(param, kind string, it *rawInputItem) *apiError {
	if it.CallID == nil || *it.CallID == "" {
		return badRequest(param+".call_id", fmt.Sprintf("%s.call_id is required for a %s item: the id the call's output answers", param, kind))
	}
	if it.Name == nil || *it.Name == "" {
		return badRequest(param+".name", fmt.Sprintf("%s.name is required for a %s item: the tool called", param, kind))
	}
	m := chatMessage{Role: "assistant", Calls: 1, CallIDs: []string{*it.CallID}}
	m.Text.add(*it.Name)
	switch {
	case it.Arguments != nil:
		m.Text.add(*it.Arguments)
	case it.Input != nil:
		m.Text.add(*it.Input)
	}
	r.calls = append(r.calls, *it.CallID)
	r.join(m)
	return nil
}

// output reads a call's output: it must answer a call of the conversation.
func (r *inputReader) output(param, kind string, it *rawInputItem) *apiError {
	if it.CallID == nil || *it.CallID == "" {
		return badRequest(param+".call_id", fmt.Sprintf("%s.call_id is required for a %s item: the id of the call it answers", param, kind))
	}
	if !slices.Contains(r.calls, *it.CallID) {
		return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param + ".call_id",
			Message: fmt.Sprintf("No tool call found for %s output with call_id %s: %s.call_id answers no call of the input or of the previous responses; the calls so far: %s",
				strings.TrimSuffix(kind, "_output"), *it.CallID, param, callList(r.calls))}
	}
	m := chatMessage{Role: "tool", CallID: *it.CallID}
	if aerr := readParts(param+".output", it.Output, &m.Text); aerr != nil {
		return aerr
	}
	r.add(m)
	return nil
}
