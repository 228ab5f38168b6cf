package simserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
)

// responsesParams is what a POST /v1/responses request carries beyond what a chat request
// does: what its response object echoes, and what storing it needs.
type responsesParams struct {
	// instructions is the instructions as sent (a JSON string), or nil.
	instructions json.RawMessage
	// previousID is previous_response_id, "" when absent.
	previousID string
	// store says whether the response is kept for a later previous_response_id (true when
	// absent, as the API has it).
	store bool
	// summary is reasoning.summary ("auto", "concise", "detailed"), "" when not asked for:
	// reasoning streams as summary deltas when asked, as reasoning text otherwise.
	summary string
	// maxOutput is max_output_tokens, nil when absent; metadata is metadata as sent, or nil.
	maxOutput *int
	metadata  json.RawMessage
	// chain is the stored response previous_response_id names, nil without one; items are
	// the request's input as messages, stored with the response's output.
	chain *storedResponse
	items []chatMessage
}

// rawResponsesRequest is the wire form of a Responses API request. Members the simulator does
// not use are checked for their JSON types only; members no server knows are ignored.
type rawResponsesRequest struct {
	Model              *string           `json:"model"`
	Input              json.RawMessage   `json:"input"`
	Instructions       json.RawMessage   `json:"instructions"`
	Stream             *bool             `json:"stream"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Tools              []json.RawMessage `json:"tools"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls  *bool             `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Store              *bool             `json:"store"`
	PromptCacheKey     *string           `json:"prompt_cache_key"`
	Reasoning          *struct {
		Effort  *string `json:"effort"`
		Summary *string `json:"summary"`
		// GenerateSummary is the older name of Summary.
		GenerateSummary *string `json:"generate_summary"`
	} `json:"reasoning"`
	// IgnoreEOS is vLLM's extension: generate max_output_tokens whatever the model would.
	IgnoreEOS    *bool           `json:"ignore_eos"`
	Background   *bool           `json:"background"`
	Conversation json.RawMessage `json:"conversation"`

	Temperature    *float64          `json:"temperature"`
	TopP           *float64          `json:"top_p"`
	TopLogprobs    *int              `json:"top_logprobs"`
	MaxToolCalls   *int              `json:"max_tool_calls"`
	Include        []string          `json:"include"`
	Metadata       map[string]string `json:"metadata"`
	ClientMetadata json.RawMessage   `json:"client_metadata"`
	Text           json.RawMessage   `json:"text"`
	Truncation     *string           `json:"truncation"`
	User           *string           `json:"user"`
	ServiceTier    *string           `json:"service_tier"`
}

// reasoningSummaries are the values of reasoning.summary.
var reasoningSummaries = []string{"auto", "concise", "detailed", "none"}

// parseResponsesRequest decodes and validates a Responses API body into the chat request the
// engine and the tool model answer: its messages are the instructions, the conversation of
// the stored response it continues (found in store) and its input. Its error is an *apiError
// naming the member at fault, as the API's 400s do.
func (s *Server) parseResponsesRequest(body []byte) (*chatRequest, *apiError) {
	var raw rawResponsesRequest
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, jsonError("", err)
	}
	if raw.Model == nil || *raw.Model == "" {
		return nil, badRequest("model", "model is required: name the model to use")
	}
	req := &chatRequest{Model: *raw.Model, parallel: raw.ParallelToolCalls == nil || *raw.ParallelToolCalls}
	p := &responsesParams{store: raw.Store == nil || *raw.Store, maxOutput: raw.MaxOutputTokens}
	req.responses = p
	req.Stream = raw.Stream != nil && *raw.Stream
	req.IgnoreEOS = raw.IgnoreEOS != nil && *raw.IgnoreEOS
	if aerr := raw.checkUnsupported(); aerr != nil {
		return nil, aerr
	}
	if aerr := raw.checkSampling(); aerr != nil {
		return nil, aerr
	}
	if raw.MaxOutputTokens != nil {
		if *raw.MaxOutputTokens < 1 {
			return nil, badRequest("max_output_tokens", fmt.Sprintf("max_output_tokens must be at least 1, got %d", *raw.MaxOutputTokens))
		}
		req.MaxTokens, req.maxTokensParam = *raw.MaxOutputTokens, "max_output_tokens"
	}
	if r := raw.Reasoning; r != nil {
		if r.Effort != nil {
			req.Effort = *r.Effort
			if !slices.Contains(s.efforts, req.Effort) {
				return nil, badRequest("reasoning.effort", fmt.Sprintf("reasoning.effort must be one of %s; got %q", quoteAll(s.efforts), req.Effort))
			}
		}
		if r.Summary == nil {
			r.Summary = r.GenerateSummary
		}
		if r.Summary != nil {
			if !slices.Contains(reasoningSummaries, *r.Summary) {
				return nil, badRequest("reasoning.summary", fmt.Sprintf("reasoning.summary must be one of %s; got %q", quoteAll(reasoningSummaries), *r.Summary))
			}
			if *r.Summary != "none" {
				p.summary = *r.Summary
			}
		}
	}
	var aerr *apiError
	if req.choice, aerr = parseToolChoice(raw.ToolChoice); aerr != nil {
		return nil, aerr
	}
	if len(raw.Tools) > 0 {
		req.rawTools = raw.Tools
	}
	if raw.PromptCacheKey != nil {
		req.session = *raw.PromptCacheKey
	}
	if len(raw.Metadata) > 0 {
		p.metadata, _ = json.Marshal(raw.Metadata)
	}
	if aerr := s.readConversation(&raw, req); aerr != nil {
		return nil, aerr
	}
	return req, nil
}

// readConversation sets the request's messages: the instructions as a system message, then
// the stored conversation previous_response_id continues, then the input.
func (s *Server) readConversation(raw *rawResponsesRequest, req *chatRequest) *apiError {
	p := req.responses
	var msgs []chatMessage
	if !isNull(raw.Instructions) {
		var text string
		if json.Unmarshal(raw.Instructions, &text) != nil {
			return badRequest("instructions", "instructions must be a string")
		}
		p.instructions = raw.Instructions
		msgs = append(msgs, textMessage("system", text))
	}
	if id := raw.PreviousResponseID; id != nil && *id != "" {
		p.previousID = *id
		if p.chain = s.stored.get(*id, s.clk.Now()); p.chain == nil {
			return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "previous_response_id", Code: "previous_response_not_found",
				Message: fmt.Sprintf("Previous response with id '%s' not found: it does not exist or has expired (this server keeps a stored response for %s of simulated time, the latest %d).",
					*id, storedResponseTTL, maxStoredResponses)}
		}
		msgs = p.chain.conversation(msgs)
	}
	var calls []string
	for _, m := range msgs {
		calls = append(calls, m.CallIDs...)
	}
	items, aerr := parseInput(raw.Input, calls)
	if aerr != nil {
		return aerr
	}
	p.items = items
	req.Messages = append(msgs, items...)
	return nil
}

// checkUnsupported refuses what the simulator does not do, saying what to use instead.
func (raw *rawResponsesRequest) checkUnsupported() *apiError {
	switch {
	case raw.Background != nil && *raw.Background:
		return badRequest("background", "background is not supported: this server answers in the foreground; stream the response instead")
	case !isNull(raw.Conversation):
		return badRequest("conversation", "conversation is not supported: continue a response with previous_response_id, or send the whole input")
	}
	return nil
}

// checkSampling checks the ranges of the sampling members, as the API does.
func (raw *rawResponsesRequest) checkSampling() *apiError {
	switch {
	case raw.Temperature != nil && (*raw.Temperature < 0 || *raw.Temperature > 2):
		return badRequest("temperature", fmt.Sprintf("temperature must be a number in [0, 2], got %g", *raw.Temperature))
	case raw.TopP != nil && (*raw.TopP <= 0 || *raw.TopP > 1):
		return badRequest("top_p", fmt.Sprintf("top_p must be a number in (0, 1], got %g", *raw.TopP))
	case raw.TopLogprobs != nil && (*raw.TopLogprobs < 0 || *raw.TopLogprobs > 20):
		return badRequest("top_logprobs", fmt.Sprintf("top_logprobs must be in [0, 20], got %d", *raw.TopLogprobs))
	case raw.MaxToolCalls != nil && *raw.MaxToolCalls < 1:
		return badRequest("max_tool_calls", fmt.Sprintf("max_tool_calls must be at least 1, got %d", *raw.MaxToolCalls))
	case raw.Truncation != nil && *raw.Truncation != "auto" && *raw.Truncation != "disabled":
		return badRequest("truncation", fmt.Sprintf(`truncation must be "auto" or "disabled", got %q`, *raw.Truncation))
	}
	return nil
}
