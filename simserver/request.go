package simserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// chatRequest is a validated POST /v1/chat/completions body, reduced to what the simulator
// uses.
type chatRequest struct {
	Model    string
	Messages []chatMessage
	Stream   bool
	// IncludeUsage is stream_options.include_usage.
	IncludeUsage bool
	// MaxTokens is the smaller of max_tokens and max_completion_tokens; 0 when neither is set.
	MaxTokens int
	IgnoreEOS bool
	// Effort is reasoning_effort, "" when absent.
	Effort string
}

// chatMessage is one message of the conversation: its role and the text of its content, as
// one string or as the text parts of a content array.
type chatMessage struct {
	Role  string
	Parts []string
}

// validRoles are the message roles the server accepts.
var validRoles = map[string]bool{"system": true, "user": true, "assistant": true, "tool": true, "developer": true}

// rawChatRequest is the wire form of the fields the simulator reads. Pointers tell absent
// (or null) from zero; everything else a client sends (temperature, tools, …) is ignored.
type rawChatRequest struct {
	Model         *string         `json:"model"`
	Messages      json.RawMessage `json:"messages"`
	Stream        *bool           `json:"stream"`
	StreamOptions *struct {
		IncludeUsage *bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           *int    `json:"max_tokens"`
	MaxCompletionTokens *int    `json:"max_completion_tokens"`
	IgnoreEOS           *bool   `json:"ignore_eos"`
	ReasoningEffort     *string `json:"reasoning_effort"`
	N                   *int    `json:"n"`
}

// rawMessage is the wire form of one message. Assistant messages may carry the reasoning of an
// earlier turn under either name; it is accepted and, as reasoning models' chat templates do,
// not fed back into the prompt.
type rawMessage struct {
	Role             *string         `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	Reasoning        *string         `json:"reasoning"`
}

// rawPart is one element of a content array.
type rawPart struct {
	Type *string `json:"type"`
	Text *string `json:"text"`
}

// parseChatRequest decodes and validates a chat completions body. Its error is an *apiError
// naming the offending parameter.
func parseChatRequest(body []byte) (*chatRequest, *apiError) {
	var raw rawChatRequest
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, jsonError("", err)
	}
	req := &chatRequest{}
	if raw.Model == nil || *raw.Model == "" {
		return nil, badRequest("model", "model is required: name the model to use")
	}
	req.Model = *raw.Model
	msgs, aerr := parseMessages(raw.Messages)
	if aerr != nil {
		return nil, aerr
	}
	req.Messages = msgs
	req.Stream = raw.Stream != nil && *raw.Stream
	if o := raw.StreamOptions; o != nil && o.IncludeUsage != nil {
		req.IncludeUsage = *o.IncludeUsage
	}
	if aerr := req.setMaxTokens(raw.MaxTokens, raw.MaxCompletionTokens); aerr != nil {
		return nil, aerr
	}
	if raw.N != nil && *raw.N != 1 {
		return nil, badRequest("n", fmt.Sprintf("n must be 1, got %d: this server generates one choice per request", *raw.N))
	}
	req.IgnoreEOS = raw.IgnoreEOS != nil && *raw.IgnoreEOS
	if raw.ReasoningEffort != nil {
		req.Effort = *raw.ReasoningEffort
	}
	return req, nil
}

// setMaxTokens takes the output cap from max_tokens and max_completion_tokens (the smaller
// when both are set); each must be at least 1.
func (req *chatRequest) setMaxTokens(maxTokens, maxCompletion *int) *apiError {
	for _, p := range []struct {
		name string
		v    *int
	}{{"max_tokens", maxTokens}, {"max_completion_tokens", maxCompletion}} {
		if p.v == nil {
			continue
		}
		if *p.v < 1 {
			return badRequest(p.name, fmt.Sprintf("%s must be at least 1, got %d", p.name, *p.v))
		}
		if req.MaxTokens == 0 || *p.v < req.MaxTokens {
			req.MaxTokens = *p.v
		}
	}
	return nil
}

// parseMessages validates the messages array.
func parseMessages(data json.RawMessage) ([]chatMessage, *apiError) {
	if isNull(data) {
		return nil, badRequest("messages", "messages is required: give at least one message")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, badRequest("messages", "messages must be an array of message objects")
	}
	if len(items) == 0 {
		return nil, badRequest("messages", "messages must not be empty")
	}
	msgs := make([]chatMessage, len(items))
	for i, item := range items {
		param := fmt.Sprintf("messages[%d]", i)
		var m rawMessage
		if err := json.Unmarshal(item, &m); err != nil {
			return nil, jsonError(param, err)
		}
		if m.Role == nil || !validRoles[*m.Role] {
			got := "none"
			if m.Role != nil {
				got = fmt.Sprintf("%q", *m.Role)
			}
			return nil, badRequest(param+".role",
				fmt.Sprintf("%s.role must be one of system, user, assistant, tool, developer; got %s", param, got))
		}
		parts, aerr := parseContent(param+".content", *m.Role, m.Content)
		if aerr != nil {
			return nil, aerr
		}
		msgs[i] = chatMessage{Role: *m.Role, Parts: parts}
	}
	return msgs, nil
}

// parseContent returns the text of a message's content: a string, or an array of
// {"type":"text","text":…} parts. Only assistant messages (which may carry just tool calls)
// may leave it out.
func parseContent(param, role string, data json.RawMessage) ([]string, *apiError) {
	if isNull(data) {
		if role == "assistant" {
			return nil, nil
		}
		return nil, badRequest(param, param+" is required for "+role+" messages")
	}
	var s string
	if data[0] == '"' {
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, badRequest(param, param+" is not a valid JSON string")
		}
		return []string{s}, nil
	}
	var parts []rawPart
	if err := json.Unmarshal(data, &parts); err != nil {
		return nil, badRequest(param, param+" must be a string or an array of text parts")
	}
	texts := make([]string, len(parts))
	for j, p := range parts {
		pp := fmt.Sprintf("%s[%d]", param, j)
		if p.Type == nil || *p.Type != "text" {
			return nil, badRequest(pp+".type", pp+`.type must be "text": this server takes text content only`)
		}
		if p.Text == nil {
			return nil, badRequest(pp+".text", pp+".text is required")
		}
		texts[j] = *p.Text
	}
	return texts, nil
}

// isNull reports whether a raw JSON value is absent or null.
func isNull(data json.RawMessage) bool {
	d := bytes.TrimSpace(data)
	return len(d) == 0 || string(d) == "null"
}

// jsonError turns a decoding error into a 400 naming the parameter: the field whose type was
// wrong, or (for syntax errors) none. prefix is the path of the object being decoded.
func jsonError(prefix string, err error) *apiError {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		param := strings.Trim(prefix+"."+typeErr.Field, ".")
		if param == "" {
			return badRequest("", "the request body must be a JSON object")
		}
		return badRequest(param, fmt.Sprintf("%s must be of type %s, got a JSON %s", param, jsonKind(typeErr), typeErr.Value))
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return badRequest("", fmt.Sprintf("the request body is not valid JSON: %v (at byte %d)", err, syntaxErr.Offset))
	}
	return badRequest("", fmt.Sprintf("the request body is not valid JSON: %v", err))
}

// jsonKind names the JSON type a Go type expects, for error messages.
func jsonKind(e *json.UnmarshalTypeError) string {
	t := e.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Slice:
		return "array"
	}
	return "object"
}
