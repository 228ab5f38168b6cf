package simserver

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/agentsim/agentsim/internal/engine"
)

// apiError is an error answered before any stream starts: an HTTP status and the OpenAI
// error body {"error":{"message","type","param","code"}}, code being the status.
type apiError struct {
	Status  int
	Type    string
	Param   string // "" is sent as null
	Message string
	// RetryAfter > 0 is sent as a Retry-After header in whole seconds (rounded up).
	RetryAfter time.Duration
	// Code, when set, is sent as the error's code instead of the status: the Responses API's
	// error codes are strings ("previous_response_not_found").
	Code string
	// openAI shapes the body as OpenAI's own API does, the Responses API's: its code a string
	// or null, never the status.
	openAI bool
}

// asOpenAI is the error as the Responses API sends it: OpenAI's types (invalid_request_error
// for a request refused, requests for a rate limit, server_error for the server's own
// failures) and its code a string or null.
func (e *apiError) asOpenAI() *apiError {
	o := *e
	o.openAI = true
	switch {
	case e.Type == "invalid_request_error":
	case e.Status == http.StatusTooManyRequests:
		o.Type, o.Code = "requests", "rate_limit_exceeded"
	case e.Status == http.StatusNotFound && e.Param == "model":
		o.Type, o.Code = "invalid_request_error", "model_not_found"
	case e.Status >= 500:
		o.Type = "server_error"
	default:
		o.Type = "invalid_request_error"
	}
	return &o
}

func badRequest(param, message string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "BadRequestError", Param: param, Message: message}
}

// fromRejection is the HTTP answer to the engine's refusal: a status, an OpenAI error type
// and the message the real servers send for the same reason (vLLM's, for a prompt too long).
func fromRejection(r *engine.Rejection) *apiError {
	switch r.Reason {
	case engine.TooLong:
		return badRequest("messages", fmt.Sprintf("This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input messages.",
			r.MaxContextTokens, r.PromptTokens))
	case engine.RateLimited:
		return &apiError{Status: http.StatusTooManyRequests, Type: "RateLimitError", RetryAfter: r.RetryAfter,
			Message: "Rate limit reached for requests. Please retry after the time given in Retry-After."}
	case engine.Overloaded:
		return &apiError{Status: http.StatusServiceUnavailable, Type: "InternalServerError",
			Message: "The server is overloaded or not ready yet."}
	case engine.QueueFull:
		return &apiError{Status: http.StatusServiceUnavailable, Type: "InternalServerError", Message: "The request queue is full."}
	case engine.Unavailable:
		return &apiError{Status: http.StatusServiceUnavailable, Type: "InternalServerError",
			Message: "The server is not available: its scheduler has died."}
	}
	return &apiError{Status: http.StatusServiceUnavailable, Type: "InternalServerError", Message: r.Error()}
}

// errorBody is the OpenAI error object.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	// Code is the HTTP status (vLLM's form) or the API's string code.
	Code any `json:"code"`
}

// writeError answers the request with the error's status, headers and body.
func writeError(w http.ResponseWriter, e *apiError) {
	d := errorDetail{Message: e.Message, Type: e.Type, Code: e.Status}
	switch {
	case e.Code != "":
		d.Code = e.Code
	case e.openAI:
		d.Code = nil
	}
	if e.Param != "" {
		d.Param = &e.Param
	}
	body, _ := json.Marshal(errorBody{Error: d})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)+1))
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(append(body, '\n'))
}
