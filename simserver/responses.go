package simserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/internal/freshstack"
	"github.com/agentsim/agentsim/internal/wire"
)

// responses serves POST /v1/responses (docs/responses.md): the request is read into the
// conversation a chat request would carry (responses_request.go, responses_input.go), checked,
// admitted and generated as a chat completion is — the same engine, tool model, faults,
// metrics and access log — and answered as the Responses API answers: a stream of events
// (responses_events.go) or one response object.
func (s *Server) responses(w *respWriter, r *http.Request, start time.Time) {
	var (
		req  *chatRequest
		job  engine.Job
		aerr *apiError
	)
	freshstack.Run(func() { req, job, aerr = s.admit(w, r, true, s.parseResponsesRequest) })
	if aerr != nil {
		writeError(w, responsesShape(aerr))
		return
	}
	job.Received = sentAt(r.Header, start)
	job.RequestID = r.Header.Get(wire.RequestIDHeader)
	s.generate(w, r.Context(), req, job, start)
}

// responsesShape is an error refusing a Responses API request, in that API's shape: the
// member a chat error names "messages" is its "input".
func responsesShape(e *apiError) *apiError {
	o := e.asOpenAI()
	if o.Param == "messages" {
		o.Param = "input"
	}
	return o
}

// respond answers a non-streaming Responses API request with the response object once the
// whole generation is done. Faults act as on chat completions (complete): an error frame
// becomes a 503 error body, a dropped stream a connection cut without a response.
func (x *exchange) respond() {
	x.style = x.toolStyle()
	at, how := x.gen.End()
	for x.sent < at {
		n, _, err := x.gen.Next(x.ctx, at-x.sent)
		if ab := (*engine.Aborted)(nil); errors.As(err, &ab) {
			x.giveUp(finishError)
			writeError(x.w, responsesShape(&apiError{Status: http.StatusInternalServerError, Message: ab.Error()}))
			return
		}
		if err != nil || n == 0 {
			x.abort()
		}
		x.delivered(n)
	}
	switch how {
	case engine.EndCut:
		x.cut()
	case engine.EndFail:
		x.giveUp(finishError)
		writeError(x.w, responsesShape(&apiError{Status: http.StatusServiceUnavailable, Message: streamErrorMessage}))
		return
	}
	x.s.metrics.finished(x.gen.Finish)
	u := x.usage()
	body := x.responseObject(x.finalStatus(), &u)
	h := x.w.Header()
	h.Set("Content-Type", "application/json")
	x.w.WriteHeader(http.StatusOK)
	_, _ = x.w.Write(append(body, '\n'))
	x.s.engine.Delivered(x.gen)
	x.stored()
}

// Statuses of a response object.
const (
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
	statusIncomplete = "incomplete"
	statusFailed     = "failed"
)

// finalStatus is the status of a response whose generation ended: incomplete when
// max_output_tokens cut it.
func (x *exchange) finalStatus() string {
	if x.gen.Finish == "length" {
		return statusIncomplete
	}
	return statusCompleted
}

// responseBody is the response object.
type responseBody struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Error              *responseFailure  `json:"error"`
	IncompleteDetails  *incompleteReason `json:"incomplete_details"`
	Instructions       json.RawMessage   `json:"instructions"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Model              json.RawMessage   `json:"model"`
	Output             []json.RawMessage `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Reasoning          responseReasoning `json:"reasoning"`
	Store              bool              `json:"store"`
	Text               json.RawMessage   `json:"text"`
	ToolChoice         any               `json:"tool_choice"`
	Truncation         string            `json:"truncation"`
	Usage              json.RawMessage   `json:"usage"`
	Metadata           json.RawMessage   `json:"metadata"`
}

type responseFailure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type incompleteReason struct {
	Reason string `json:"reason"`
}

type responseReasoning struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

// textFormat is the text member the response echoes: plain text.
var textFormat = json.RawMessage(`{"format":{"type":"text"}}`)

// responseObject is the response in the given status, its output as far as it was delivered,
// with usage when u is not nil.
func (x *exchange) responseObject(status string, u *usage) []byte {
	p := x.req.responses
	body := responseBody{
		ID: x.id, Object: "response", CreatedAt: x.created, Status: status,
		Instructions: p.instructions, MaxOutputTokens: p.maxOutput, Model: x.model,
		Output:            []json.RawMessage{},
		ParallelToolCalls: x.req.parallel, Store: p.store, Text: textFormat,
		ToolChoice: x.req.choice.echo(), Truncation: "disabled", Metadata: p.metadata,
	}
	if body.Metadata == nil {
		body.Metadata = json.RawMessage(`{}`)
	}
	if p.previousID != "" {
		body.PreviousResponseID = &p.previousID
	}
	if x.req.Effort != "" {
		body.Reasoning.Effort = &x.req.Effort
	}
	if p.summary != "" {
		body.Reasoning.Summary = &p.summary
	}
	switch status {
	case statusIncomplete:
		body.IncompleteDetails = &incompleteReason{Reason: "max_output_tokens"}
	case statusFailed:
		body.Error = &responseFailure{Code: "server_error", Message: streamErrorMessage}
	}
	if status != statusInProgress {
		msgStatus := statusCompleted
		if status != statusCompleted {
			msgStatus = statusIncomplete
		}
		body.Output = x.outputs().items(x.sent, msgStatus, x.style)
	}
	if u != nil {
		body.Usage = appendResponsesUsage(nil, *u)
	}
	b, _ := json.Marshal(body)
	return b
}

// echo is tool_choice as the response object echoes it.
func (c toolChoice) echo() any {
	if c.mode == "named" {
		return map[string]string{"type": "function", "name": c.name}
	}
	return c.mode
}

// appendResponsesUsage appends the Responses API's usage object.
func appendResponsesUsage(b []byte, u usage) []byte {
	b = append(b, `{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(u.Prompt), 10)
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(u.Cached), 10)
	b = append(b, `},"output_tokens":`...)
	b = strconv.AppendInt(b, int64(u.Completion), 10)
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(u.Reasoning), 10)
	b = append(b, `},"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.Prompt+u.Completion), 10)
	return append(b, '}')
}

// stored keeps a Responses API response that finished, when its request asked for it
// (store), for a later previous_response_id: its input and its output, as the messages a
// client sending them back would make.
func (x *exchange) stored() {
	p := x.req.responses
	if p == nil || !p.store {
		return
	}
	out := chatMessage{Role: "assistant"}
	g := x.gen
	if r := x.req.reply; r != nil {
		for _, c := range r.messageCalls(g.Output-g.Reasoning, engine.ToolCallsOpenAI) {
			out.Text.add(c.Function.Name)
			out.Text.add(c.Function.Arguments)
			out.CallIDs = append(out.CallIDs, c.ID)
		}
		out.Calls = len(out.CallIDs)
	} else {
		out.Text.add(string(appendWords(nil, g.Key(), g.Reasoning, g.Output-g.Reasoning)))
	}
	now := x.s.clk.Now()
	x.s.stored.put(&storedResponse{id: x.id, parent: p.chain, items: append(p.items, out), expires: now.Add(storedResponseTTL)}, now)
}
