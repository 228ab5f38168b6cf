package simserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// toolChoice is a request's tool_choice.
type toolChoice struct {
	// mode is "auto" (the default), "none", "required" or "named".
	mode string
	// name is the function a named choice calls.
	name string
}

// rawToolChoice is the object form of tool_choice: OpenAI's {"type":"function","function":
// {"name":…}}, or the flat {"type":"function","name":…} of the Responses API.
type rawToolChoice struct {
	Type     *string `json:"type"`
	Name     *string `json:"name"`
	Function *struct {
		Name *string `json:"name"`
	} `json:"function"`
}

// parseToolChoice reads tool_choice: "none", "auto", "required", or an object naming a
// function. Objects of other types (allowed_tools, custom) are accepted and read as auto.
func parseToolChoice(data json.RawMessage) (toolChoice, *apiError) {
	if isNull(data) {
		return toolChoice{mode: "auto"}, nil
	}
	var mode string
	if err := json.Unmarshal(data, &mode); err == nil {
		if mode != "none" && mode != "auto" && mode != "required" {
			return toolChoice{}, badRequest("tool_choice", fmt.Sprintf(`tool_choice must be "none", "auto", "required" or a named function object; got %q`, mode))
		}
		return toolChoice{mode: mode}, nil
	}
	var obj rawToolChoice
	if !isObject(data) || json.Unmarshal(data, &obj) != nil {
		return toolChoice{}, badRequest("tool_choice", `tool_choice must be "none", "auto", "required" or a named function object`)
	}
	name := obj.Name
	if obj.Function != nil {
		name = obj.Function.Name
	}
	if obj.Type != nil && *obj.Type != "function" || obj.Type == nil && name == nil {
		return toolChoice{mode: "auto"}, nil
	}
	if name == nil || *name == "" {
		return toolChoice{}, badRequest("tool_choice.function.name", "tool_choice.function.name is required: the function to call")
	}
	return toolChoice{mode: "named", name: *name}, nil
}

// rawToolCall is one entry of an assistant message's tool_calls. Every member may be left
// out: a client sending back what it was sent is not held to more.
type rawToolCall struct {
	ID       *string `json:"id"`
	Type     *string `json:"type"`
	Function *struct {
		Name      *string `json:"name"`
		Arguments *string `json:"arguments"`
	} `json:"function"`
}

// readToolCalls reads message i's tool_calls: their ids, and their names and arguments as
// parts of the message, which the prompt holds as a chat template renders them.
func (m *chatMessage) readToolCalls(i int, data json.RawMessage) *apiError {
	if isNull(data) {
		return nil
	}
	param := fmt.Sprintf("messages[%d].tool_calls", i)
	var calls []rawToolCall
	if err := json.Unmarshal(data, &calls); err != nil {
		if strings.HasPrefix(strings.TrimSpace(string(data)), "[") {
			return jsonError(param, err)
		}
		return badRequest(param, param+" must be an array of tool calls")
	}
	m.Calls = len(calls)
	for _, c := range calls {
		if c.ID != nil {
			m.CallIDs = append(m.CallIDs, *c.ID)
		}
		if f := c.Function; f != nil {
			if f.Name != nil {
				m.Text.add(*f.Name)
			}
			if f.Arguments != nil {
				m.Text.add(*f.Arguments)
			}
		}
	}
	return nil
}

// checkToolHistory refuses a tool message whose tool_call_id is missing or names no call of
// an earlier assistant message.
func checkToolHistory(msgs []chatMessage) *apiError {
	var ids []string
	for i, m := range msgs {
		ids = append(ids, m.CallIDs...)
		if m.Role != "tool" {
			continue
		}
		param := fmt.Sprintf("messages[%d].tool_call_id", i)
		switch {
		case m.CallID == "":
			return badRequest(param, param+" is required for tool messages: the id of the tool call the message answers")
		case !slices.Contains(ids, m.CallID):
			return badRequest(param, fmt.Sprintf("%s %q answers no earlier tool call; the calls so far: %s", param, m.CallID, callList(ids)))
		}
	}
	return nil
}

// callList renders the ids of the calls so far for a message: the last five, or none.
func callList(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	if len(ids) > 5 {
		return "…, " + quoteAll(ids[len(ids)-5:])
	}
	return quoteAll(ids)
}
