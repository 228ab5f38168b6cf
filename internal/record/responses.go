package record

import (
	"bytes"
	"encoding/json"
)

// The Responses API (POST …/responses) streams typed events instead of chat chunks: the proxy
// reads of them what it reads of a chat stream — the first output token, the text, reasoning
// and function calls of the reply, the usage of response.completed, and failures
// (response.failed, an error event). Sessions come from the harness's headers (exec tags each
// process's requests); a request's input items are not matched to earlier conversations.

// responsesMarker starts the type of every Responses stream event but error.
var responsesMarker = []byte(`"type":"response.`)

// responsesEnds are the events that end a Responses stream, which sends no [DONE].
var responsesEnds = [][]byte{[]byte(`"type":"response.completed"`), []byte(`"type":"response.failed"`), []byte(`"type":"response.incomplete"`)}

// endsResponses reports whether b holds the event that ends a Responses stream.
func endsResponses(b []byte) bool {
	for _, m := range responsesEnds {
		if bytes.Contains(b, m) {
			return true
		}
	}
	return false
}

// responseEvent is what the proxy reads of one Responses stream event.
type responseEvent struct {
	Type    string `json:"type"`
	Delta   string `json:"delta"`
	Message string `json:"message"` // of an error event
	Item    *struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Name   string `json:"name"`
	} `json:"item"`
	Response *struct {
		Usage *struct {
			InputTokens        int `json:"input_tokens"`
			OutputTokens       int `json:"output_tokens"`
			InputTokensDetails *struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"input_tokens_details"`
			OutputTokensDetails *struct {
				ReasoningTokens int `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		} `json:"usage"`
		Error *apiError `json:"error"`
	} `json:"response"`
}

// responsesLine reads data, an SSE data line whose bytes arrived at t, when it is a Responses
// stream event, and reports whether it was one.
func (x *exchange) responsesLine(data []byte, t float64) bool {
	if !bytes.Contains(data, responsesMarker) && !bytes.Contains(data, []byte(`"type":"error"`)) {
		return false
	}
	var e responseEvent
	if json.Unmarshal(data, &e) != nil {
		return false
	}
	switch e.Type {
	case "response.output_text.delta":
		x.output(t, false)
		x.reply.WriteString(e.Delta)
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		x.output(t, true)
		x.reasonB += len(e.Delta)
	case "response.output_item.added":
		if e.Item != nil && e.Item.Type == "function_call" {
			x.output(t, false)
			c := toolCall{Index: len(x.calls), ID: e.Item.CallID}
			c.Function.Name = e.Item.Name
			x.addCalls([]toolCall{c})
		}
	case "response.function_call_arguments.delta":
		if n := len(x.args); n > 0 {
			x.outChunks++
			x.args[n-1].WriteString(e.Delta)
		}
	case "response.completed", "response.incomplete":
		x.done, x.finish = true, "stop"
		if e.Type == "response.incomplete" {
			x.finish = "length"
		} else if len(x.calls) > 0 {
			x.finish = "tool_calls"
		}
		x.responsesUsage(&e)
	case "response.failed":
		x.failure = "response.failed"
		if e.Response != nil && e.Response.Error != nil {
			x.failure += ": " + e.Response.Error.Message
		}
	case "error":
		if x.failure == "" {
			x.failure = "error event: " + e.Message
		}
	}
	return true
}

// output counts a chunk of output arriving at t, and tells the observer of the first.
func (x *exchange) output(t float64, reasoning bool) {
	x.outChunks++
	if !x.first {
		x.first, x.firstS = true, t
		x.p.observe(func(o Observer) { o.FirstToken(x.seen(), t, reasoning) })
	}
}

// responsesUsage takes the usage of a completed response as the chat usage it stands for.
func (x *exchange) responsesUsage(e *responseEvent) {
	if e.Response == nil || e.Response.Usage == nil {
		return
	}
	u := e.Response.Usage
	x.usage = &usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens}
	if d := u.InputTokensDetails; d != nil {
		x.usage.PromptTokensDetails = &struct {
			CachedTokens int `json:"cached_tokens"`
		}{d.CachedTokens}
	}
	if d := u.OutputTokensDetails; d != nil {
		x.usage.CompletionTokensDetails = &struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		}{d.ReasoningTokens}
	}
}
