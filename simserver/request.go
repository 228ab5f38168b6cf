package simserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
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
	// maxTokensParam names the parameter MaxTokens came from, for errors about it.
	maxTokensParam string
	IgnoreEOS      bool
	// Effort is reasoning_effort, "" when absent.
	Effort string

	// rawTools is the tools array as sent (nil: none), which admission compiles into tools.
	rawTools []json.RawMessage
	tools    *toolSet
	// choice is tool_choice; parallel is parallel_tool_calls (true when absent).
	choice   toolChoice
	parallel bool
	// reply is the tool calls the model answers with, planned at admission; nil: text.
	reply *toolReply

	// session names the conversation beyond its messages when the client does (the Responses
	// API's prompt_cache_key); "" for chat completions.
	session string
	// responses is what a POST /v1/responses request adds; nil for chat completions.
	responses *responsesParams
}

// shape is an error as the request's API sends it: vLLM's body for chat completions, OpenAI's
// for the Responses API.
func (req *chatRequest) shape(e *apiError) *apiError {
	if req.responses != nil {
		return responsesShape(e)
	}
	return e
}

// chatMessage is one message of the conversation: its role and the digest of the text of its
// content, one string or the text parts of a content array (for an assistant message, with
// the name and arguments of each tool call it made).
type chatMessage struct {
	Role string
	// Text is what is kept of the text of its parts, each in turn.
	Text textDigest
	// Calls is how many tool calls an assistant message made, CallIDs their ids; CallID is
	// the id of the call a tool message answers.
	Calls   int
	CallIDs []string
	CallID  string
}

// validRoles are the message roles the server accepts.
var validRoles = map[string]bool{"system": true, "user": true, "assistant": true, "tool": true, "developer": true}

// rawChatRequest is the wire form of the request. Pointers tell absent (or null) from zero.
// The sampling parameters below the first group are not used by the simulator, but their JSON
// types and ranges are checked as vLLM and SGLang check them, so a request a real server would
// refuse is refused here too; fields no OpenAI-compatible server knows are ignored, as theirs
// are.
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

	Temperature       *float64           `json:"temperature"`
	TopP              *float64           `json:"top_p"`
	TopK              *int               `json:"top_k"`
	MinP              *float64           `json:"min_p"`
	FrequencyPenalty  *float64           `json:"frequency_penalty"`
	PresencePenalty   *float64           `json:"presence_penalty"`
	RepetitionPenalty *float64           `json:"repetition_penalty"`
	Seed              *int64             `json:"seed"`
	MinTokens         *int               `json:"min_tokens"`
	Logprobs          *bool              `json:"logprobs"`
	TopLogprobs       *int               `json:"top_logprobs"`
	LogitBias         map[string]float64 `json:"logit_bias"`
	User              *string            `json:"user"`
	Stop              json.RawMessage    `json:"stop"`
	Tools             []json.RawMessage  `json:"tools"`
	ToolChoice        json.RawMessage    `json:"tool_choice"`
	ParallelToolCalls *bool              `json:"parallel_tool_calls"`
	ResponseFormat    *struct {
		Type *string `json:"type"`
	} `json:"response_format"`
}

// rawMessage is the wire form of one message. Assistant messages may carry the reasoning of an
// earlier turn under either name; it is accepted and, as reasoning models' chat templates do,
// not fed back into the prompt.
type rawMessage struct {
	Role             *string         `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	Reasoning        *string         `json:"reasoning"`
	ToolCalls        json.RawMessage `json:"tool_calls"`
	ToolCallID       *string         `json:"tool_call_id"`
}

// rawPart is one element of a content array.
type rawPart struct {
	Type *string `json:"type"`
	Text *string `json:"text"`
}

// parseChatRequest decodes and validates a chat completions body: JSON types, value ranges,
// and reasoning_effort against efforts (the values the served model accepts). It does not
// check the model name or the context length, which need the server. Its error is an
// *apiError naming the offending parameter.
//
// The body is decoded once, messages included. Only a body that does not decode so is decoded
// again in steps (the top level, then the messages array, then each message), to name the
// parameter at fault and to report the faults in the same order whatever else the body holds.
func parseChatRequest(body []byte, efforts []string) (*chatRequest, *apiError) {
	var whole wholeChatRequest
	if json.Unmarshal(body, &whole) != nil {
		return parseChatRequestInSteps(body, efforts)
	}
	return whole.rawChatRequest.validate(efforts, func() ([]chatMessage, *apiError) {
		return checkMessages(whole.Messages)
	})
}

// wholeChatRequest is the wire form with the messages decoded along with the rest.
type wholeChatRequest struct {
	rawChatRequest
	// Messages shadows rawChatRequest.Messages; nil when absent or null.
	Messages rawMessages `json:"messages"`
}

// rawMessages is the messages array decoded whole.
type rawMessages []rawMessage

// UnmarshalJSON decodes the array into a new slice, so that of two "messages" members the last
// wins whole, as it does for a json.RawMessage, instead of being merged into the first.
func (m *rawMessages) UnmarshalJSON(data []byte) error {
	var items []rawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return err
	}
	*m = items
	return nil
}

// parseChatRequestInSteps is parseChatRequest for a body that does not decode at once: it
// finds the first fault as a step-by-step reading meets it.
func parseChatRequestInSteps(body []byte, efforts []string) (*chatRequest, *apiError) {
	var raw rawChatRequest
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, jsonError("", err)
	}
	return raw.validate(efforts, func() ([]chatMessage, *apiError) { return parseMessages(raw.Messages) })
}

// validate checks a decoded body and reduces it to a chatRequest; messages reads the messages
// once the model has been checked.
func (raw *rawChatRequest) validate(efforts []string, messages func() ([]chatMessage, *apiError)) (*chatRequest, *apiError) {
	req := &chatRequest{}
	if raw.Model == nil || *raw.Model == "" {
		return nil, badRequest("model", "model is required: name the model to use")
	}
	req.Model = *raw.Model
	msgs, aerr := messages()
	if aerr == nil {
		aerr = checkToolHistory(msgs)
	}
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
		if !slices.Contains(efforts, req.Effort) {
			return nil, badRequest("reasoning_effort", fmt.Sprintf("reasoning_effort must be one of %s; got %q",
				quoteAll(efforts), req.Effort))
		}
	}
	if aerr := raw.checkSampling(); aerr != nil {
		return nil, aerr
	}
	if req.choice, aerr = parseToolChoice(raw.ToolChoice); aerr != nil {
		return nil, aerr
	}
	if len(raw.Tools) > 0 {
		req.rawTools = raw.Tools
	}
	req.parallel = raw.ParallelToolCalls == nil || *raw.ParallelToolCalls
	return req, nil
}

// checkSampling checks the ranges of the sampling parameters as vLLM's and SGLang's sampling
// parameters do, and the shapes of stop and response_format.
func (raw *rawChatRequest) checkSampling() *apiError {
	for _, c := range []struct {
		name    string
		v       *float64
		lo, hi  float64
		openLo  bool
		allowed string
	}{
		{"temperature", raw.Temperature, 0, math.MaxFloat64, false, "a number ≥ 0"},
		{"top_p", raw.TopP, 0, 1, true, "a number in (0, 1]"},
		{"min_p", raw.MinP, 0, 1, false, "a number in [0, 1]"},
		{"frequency_penalty", raw.FrequencyPenalty, -2, 2, false, "a number in [-2, 2]"},
		{"presence_penalty", raw.PresencePenalty, -2, 2, false, "a number in [-2, 2]"},
		{"repetition_penalty", raw.RepetitionPenalty, 0, math.MaxFloat64, true, "a number > 0"},
	} {
		if c.v == nil {
			continue
		}
		v := *c.v
		if v < c.lo || v > c.hi || (c.openLo && v == c.lo) {
			return badRequest(c.name, fmt.Sprintf("%s must be %s, got %g", c.name, c.allowed, v))
		}
	}
	switch {
	case raw.TopK != nil && *raw.TopK < -1:
		return badRequest("top_k", fmt.Sprintf("top_k must be -1 or 0 (off) or at least 1, got %d", *raw.TopK))
	case raw.MinTokens != nil && *raw.MinTokens < 0:
		return badRequest("min_tokens", fmt.Sprintf("min_tokens must be at least 0, got %d", *raw.MinTokens))
	case raw.TopLogprobs != nil && (*raw.TopLogprobs < 0 || *raw.TopLogprobs > 20):
		return badRequest("top_logprobs", fmt.Sprintf("top_logprobs must be in [0, 20], got %d", *raw.TopLogprobs))
	}
	if !isNull(raw.Stop) {
		var one string
		var many []string
		if json.Unmarshal(raw.Stop, &one) != nil && json.Unmarshal(raw.Stop, &many) != nil {
			return badRequest("stop", "stop must be a string or an array of strings")
		}
	}
	if f := raw.ResponseFormat; f != nil && (f.Type == nil || !slices.Contains(responseFormats, *f.Type)) {
		return badRequest("response_format.type", fmt.Sprintf("response_format.type must be one of %s", quoteAll(responseFormats)))
	}
	return nil
}

// responseFormats are the response_format types OpenAI-compatible servers take.
var responseFormats = []string{"text", "json_object", "json_schema", "structural_tag"}

// quoteAll renders values as a comma-separated list of quoted strings.
func quoteAll(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
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
			req.MaxTokens, req.maxTokensParam = *p.v, p.name
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
		var m rawMessage
		if err := json.Unmarshal(item, &m); err != nil {
			return nil, jsonError(fmt.Sprintf("messages[%d]", i), err)
		}
		var aerr *apiError
		if msgs[i], aerr = checkMessage(i, &m); aerr != nil {
			return nil, aerr
		}
	}
	return msgs, nil
}

// checkMessages validates decoded messages: nil (absent or null) or none at all is refused,
// then each message in turn.
func checkMessages(raw []rawMessage) ([]chatMessage, *apiError) {
	if raw == nil {
		return nil, badRequest("messages", "messages is required: give at least one message")
	}
	if len(raw) == 0 {
		return nil, badRequest("messages", "messages must not be empty")
	}
	msgs := make([]chatMessage, len(raw))
	for i := range raw {
		var aerr *apiError
		if msgs[i], aerr = checkMessage(i, &raw[i]); aerr != nil {
			return nil, aerr
		}
	}
	return msgs, nil
}

// checkMessage validates message i's role and content.
func checkMessage(i int, m *rawMessage) (chatMessage, *apiError) {
	if m.Role == nil || !validRoles[*m.Role] {
		param := fmt.Sprintf("messages[%d]", i)
		got := "none"
		if m.Role != nil {
			got = fmt.Sprintf("%q", *m.Role)
		}
		return chatMessage{}, badRequest(param+".role",
			fmt.Sprintf("%s.role must be one of system, user, assistant, tool, developer; got %s", param, got))
	}
	msg := chatMessage{Role: *m.Role}
	aerr := parseContent(i, *m.Role, m.Content, &msg.Text)
	if aerr != nil {
		return chatMessage{}, aerr
	}
	switch msg.Role {
	case "assistant":
		aerr = msg.readToolCalls(i, m.ToolCalls)
	case "tool":
		if m.ToolCallID != nil {
			msg.CallID = *m.ToolCallID
		}
	}
	return msg, aerr
}

// parseContent digests into text the text of a message's content: a string, or an array of
// {"type":"text","text":…} parts. Only assistant messages (which may carry just tool calls)
// may leave it out.
// i is the message's index in messages.
func parseContent(i int, role string, data json.RawMessage, text *textDigest) *apiError {
	if isNull(data) {
		if role == "assistant" {
			return nil
		}
		param := fmt.Sprintf("messages[%d].content", i)
		return badRequest(param, param+" is required for "+role+" messages")
	}
	if s, ok := plainString(data); ok {
		text.add(s)
		return nil
	}
	param := fmt.Sprintf("messages[%d].content", i)
	var s string
	if data[0] == '"' {
		if err := json.Unmarshal(data, &s); err != nil {
			return badRequest(param, param+" is not a valid JSON string")
		}
		text.add(s)
		return nil
	}
	var parts []rawPart
	if err := json.Unmarshal(data, &parts); err != nil {
		return badRequest(param, param+" must be a string or an array of text parts")
	}
	var d textDigest
	for j, p := range parts {
		pp := fmt.Sprintf("%s[%d]", param, j)
		if p.Type == nil || *p.Type != "text" {
			return badRequest(pp+".type", pp+`.type must be "text": this server takes text content only`)
		}
		if p.Text == nil {
			return badRequest(pp+".text", pp+".text is required")
		}
		d.add(*p.Text)
	}
	*text = d
	return nil
}

// plainString returns the value of a JSON string without escapes whose bytes are valid UTF-8:
// its bytes between the quotes, as encoding/json would decode them. data has been checked as
// JSON already.
func plainString(data []byte) (string, bool) {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return "", false
	}
	in := data[1 : len(data)-1]
	if bytes.IndexByte(in, '\\') >= 0 || bytes.IndexByte(in, '"') >= 0 || !utf8.Valid(in) {
		return "", false
	}
	return string(in), true
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
		return syntaxError(syntaxErr, syntaxErr.Offset)
	}
	return badRequest("", fmt.Sprintf("the request body is not valid JSON: %v", err))
}

// syntaxError is the 400 of a body that is not JSON, its fault at offset.
func syntaxError(err *json.SyntaxError, offset int64) *apiError {
	return badRequest("", fmt.Sprintf("the request body is not valid JSON: %v (at byte %d)", err, offset))
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
	case reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Slice:
		return "array"
	}
	return "object"
}
