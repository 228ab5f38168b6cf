package agents

import (
	"github.com/sashabaranov/go-openai"
)

// A request sent through the Responses API (Request.API workloads.APIResponses) carries the
// whole conversation as input items every time, with store false, as Codex CLI sends it: the
// first system message becomes instructions, other messages message items, an assistant's
// tool calls function_call items and each tool message a function_call_output item quoting
// its call_id. Nothing is left on the server between requests (no previous_response_id), so a
// server's prefix cache sees what it sees of chat completions (docs/agentic.md).

// inputMessage is a message input item; its content is one text part.
type inputMessage struct {
	Type    string      `json:"type"`
	Role    string      `json:"role"`
	Content []inputText `json:"content"`
}

// inputText is a text part: input_text, or output_text in an assistant's message.
type inputText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// functionCallItem is a function_call input item: a tool call of an earlier reply.
type functionCallItem struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// storeNothing is the store field of every Responses request: false, shared.
var storeNothing = new(bool)

// responseRequest is the go-openai form of r for the Responses API. wired leaves the
// instructions, the input and the tools out, for the transport to write (wirePlan).
func (r *Request) responseRequest(wired bool) openai.CreateResponseRequest {
	rr := openai.CreateResponseRequest{Model: r.Model, MaxOutputTokens: r.MaxTokens, Store: storeNothing, Stream: true}
	if !wired {
		msgs := r.Messages
		if r.Conversation != nil {
			msgs = r.Conversation.Messages()
		}
		if len(msgs) > 0 && msgs[0].Role == openai.ChatMessageRoleSystem {
			rr.Instructions, msgs = msgs[0].Content, msgs[1:]
		}
		rr.Input = inputItems(msgs)
	}
	if r.ReasoningEffort != "" {
		// summary auto streams the reasoning as summary text, so that its first token is seen.
		rr.Reasoning = &openai.ResponseReasoning{Effort: r.ReasoningEffort, Summary: "auto"}
	}
	if len(r.Tools) > 0 {
		parallel := r.ParallelToolCalls
		rr.ToolChoice, rr.ParallelToolCalls = responseToolChoice(r.ToolChoice), &parallel
		if !wired {
			rr.Tools = responseTools(r.Tools)
		}
	}
	return rr
}

// inputItems is a conversation as Responses input items.
func inputItems(msgs []openai.ChatCompletionMessage) []any {
	items := make([]any, 0, len(msgs))
	for _, m := range msgs {
		switch {
		case m.Role == openai.ChatMessageRoleTool:
			items = append(items, openai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: m.ToolCallID, Output: m.Content})
			continue
		case m.Role == openai.ChatMessageRoleAssistant:
			// A reply of reasoning alone is still a message of the history, as over chat
			// completions: the server's cache and a recording see the same conversation.
			if m.Content != "" || len(m.ToolCalls) == 0 {
				items = append(items, inputMessage{Type: "message", Role: m.Role, Content: []inputText{{Type: "output_text", Text: m.Content}}})
			}
			for _, c := range m.ToolCalls {
				items = append(items, functionCallItem{Type: "function_call", CallID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
			}
			continue
		}
		role := m.Role
		if role == openai.ChatMessageRoleSystem {
			role = openai.ChatMessageRoleDeveloper // a later system message: the Responses API's name for it
		}
		items = append(items, inputMessage{Type: "message", Role: role, Content: []inputText{{Type: "input_text", Text: m.Content}}})
	}
	return items
}

// responseTools is a chat tools array in the Responses API's form: a function's name,
// description, parameters and strict flag beside its type rather than in a function object;
// other kinds (web_search…) as they are.
func responseTools(tools []openai.Tool) []openai.ResponseTool {
	out := make([]openai.ResponseTool, len(tools))
	for i, t := range tools {
		if t.Function == nil {
			out[i] = t
			continue
		}
		f := t.Function
		p := map[string]any{"name": f.Name, "parameters": f.Parameters}
		if f.Description != "" {
			p["description"] = f.Description
		}
		if f.Strict {
			p["strict"] = true
		}
		out[i] = openai.ResponseTool{Type: openai.ToolTypeFunction, Parameters: p}
	}
	return out
}

// responseFunctionChoice is a tool_choice naming a function, in the Responses API's form.
type responseFunctionChoice struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// responseToolChoice is a chat tool_choice in the Responses API's form: the strings as they
// are, a named function as {"type": "function", "name": …}.
func responseToolChoice(choice any) any {
	if c, ok := choice.(openai.ToolChoice); ok {
		return responseFunctionChoice{Type: string(c.Type), Name: c.Function.Name}
	}
	return choice
}
