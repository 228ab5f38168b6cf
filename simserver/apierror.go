package simserver

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"time"
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
}

func badRequest(param, message string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "BadRequestError", Param: param, Message: message}
}

// fromAdmission converts the engine's refusal into its HTTP answer.
func fromAdmission(e *AdmissionError) *apiError {
	return &apiError{Status: e.Status, Type: e.Type, Param: e.Param, Message: e.Message, RetryAfter: e.RetryAfter}
}

// errorBody is the OpenAI error object.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    int     `json:"code"`
}

// writeError answers the request with the error's status, headers and body.
func writeError(w http.ResponseWriter, e *apiError) {
	d := errorDetail{Message: e.Message, Type: e.Type, Code: e.Status}
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
