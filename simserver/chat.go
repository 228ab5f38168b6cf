package simserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/internal/freshstack"
	"github.com/agentsim/agentsim/internal/wire"
)

// chat serves POST /v1/chat/completions: read and check the request as vLLM does (JSON types
// and ranges, then the model name, then the context length), admit it, then stream or answer
// whole.
func (s *Server) chat(w *respWriter, r *http.Request, start time.Time) {
	var (
		req  *chatRequest
		job  engine.Job
		aerr *apiError
	)
	// Decoding a request takes a deep stack and a stream then waits on it for minutes:
	// thousands of streams would each keep the deep one (internal/freshstack).
	freshstack.Run(func() {
		req, job, aerr = s.admit(w, r, false, func(body []byte) (*chatRequest, *apiError) { return parseChatRequest(body, s.efforts) })
	})
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	job.Received = sentAt(r.Header, start)
	job.RequestID = r.Header.Get(wire.RequestIDHeader)
	s.generate(w, r.Context(), req, job, start)
}

// admit reads a request, checks it with parse (which reads the compact body of one API, the
// Responses API's when responses) and the server's limits, and makes its engine job, or says
// why it is refused.
func (s *Server) admit(w *respWriter, r *http.Request, responses bool, parse func([]byte) (*chatRequest, *apiError)) (*chatRequest, engine.Job, *apiError) {
	body, aerr := s.readBody(w, r, responses)
	if aerr != nil {
		return nil, engine.Job{}, aerr
	}
	req, aerr := parse(body.data)
	if aerr != nil {
		aerr = body.placeSyntaxError(aerr)
	}
	if aerr == nil {
		aerr = s.checkModel(req.Model)
	}
	if aerr != nil {
		return nil, engine.Job{}, aerr
	}
	if req.rawTools != nil {
		if req.tools, aerr = s.tools.get(req.rawTools, req.responses != nil); aerr != nil {
			return nil, engine.Job{}, aerr
		}
	}
	job := buildJob(req)
	inServerTokens(&job, s.opts.Profile)
	if aerr := s.admitTools(req, job.Key); aerr != nil {
		return nil, engine.Job{}, aerr
	}
	if req.reply != nil {
		job.ToolCallTokens = req.reply.tokens
	}
	// The job and the planned reply have what the engine and the stream need: a long stream
	// need not keep the text, nor the tools (which hold the body).
	req.Messages, req.rawTools, req.tools = nil, nil, nil
	if aerr := s.checkContext(job, req.maxTokensParam); aerr != nil {
		return nil, engine.Job{}, aerr
	}
	return req, job, nil
}

// checkModel answers 404, as vLLM does, for a model the server does not serve.
func (s *Server) checkModel(model string) *apiError {
	if slices.Contains(s.opts.ServedModelNames, model) {
		return nil
	}
	return &apiError{Status: http.StatusNotFound, Type: "NotFoundError", Param: "model",
		Message: fmt.Sprintf("The model `%s` does not exist.", model)}
}

// checkContext refuses, with vLLM's message, a request whose prompt plus max_tokens does not
// fit the model's context. A prompt that alone does not fit is the engine's to refuse.
func (s *Server) checkContext(job engine.Job, param string) *apiError {
	limit := s.opts.Profile.MaxContextTokens
	if job.MaxTokens == 0 || job.PromptTokens >= limit || job.PromptTokens+job.MaxTokens <= limit {
		return nil
	}
	return badRequest(param, fmt.Sprintf("'max_tokens' or 'max_completion_tokens' is too large: %d. "+
		"This model's maximum context length is %d tokens and your request has %d input tokens (%d > %d - %d).",
		job.MaxTokens, limit, job.PromptTokens, job.MaxTokens, limit, job.PromptTokens))
}

// readBody reads the request body within the size limit (413 beyond it), compacted as it
// arrives (compactBody; responses chooses the API's text members). The buffer grows with the
// bytes kept, never with the length the client declares: a client announcing 8 MB and
// sending one byte costs a few kilobytes. A body that does not arrive within the server's
// read timeout gets 408.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, responses bool) (*compactBody, *apiError) {
	limit := s.opts.MaxRequestBytes
	tooLarge := &apiError{Status: http.StatusRequestEntityTooLarge, Type: "RequestTooLargeError",
		Message: fmt.Sprintf("The request body exceeds the limit of %d bytes.", limit)}
	if r.ContentLength > limit {
		return nil, tooLarge
	}
	// Reading to EOF also lets net/http watch the connection, so that a client going away
	// cancels the request's context. The buffer starts at the declared length up to
	// bodyReserve: a short request is kept in one allocation instead of append's doublings
	// (about five times its size in garbage, at thousands of agents starting at once), and a
	// client declaring 8 MB makes the server reserve 16 KiB at most.
	body, err := readCompact(http.MaxBytesReader(w, r.Body, limit), responses, int(min(max(r.ContentLength, 0), bodyReserve)+1))
	var maxErr *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &maxErr):
		return nil, tooLarge
	case errors.As(err, &netErr) && netErr.Timeout():
		return nil, &apiError{Status: http.StatusRequestTimeout, Type: "RequestTimeoutError",
			Message: fmt.Sprintf("The request body did not arrive within %s.", s.opts.ReadTimeout)}
	case err != nil:
		return nil, badRequest("", "could not read the request body: "+err.Error())
	}
	return body, nil
}

// bodyReserve is the most of a request's declared length readBody reserves before the bytes
// arrive, in bytes.
const bodyReserve = 16 << 10

// generate submits the request to the engine and delivers its generation.
func (s *Server) generate(w *respWriter, ctx context.Context, req *chatRequest, job engine.Job, start time.Time) {
	gen, err := s.engine.Submit(job)
	if err != nil {
		var rej *engine.Rejection
		if errors.As(err, &rej) {
			writeError(w, req.shape(fromRejection(rej)))
		} else {
			writeError(w, req.shape(&apiError{Status: http.StatusServiceUnavailable, Type: "InternalServerError", Message: err.Error()}))
		}
		return
	}
	s.engine.Track(job.RequestID, gen)
	defer w.atEnd(func() { s.engine.Untrack(job.RequestID) })
	model, _ := json.Marshal(req.Model)
	x := &exchange{
		s: s, w: w, ctx: ctx, req: req, gen: gen, start: start,
		id:      fmt.Sprintf("chatcmpl-%016x%08x", mix64(s.idSeed^gen.ID), uint32(gen.ID)),
		created: start.Unix(),
		model:   model,
	}
	if req.responses != nil {
		x.id = fmt.Sprintf("resp_%016x%08x", mix64(s.idSeed^gen.ID), uint32(gen.ID))
	}
	// Deferred so that it runs when the handler aborts the connection too.
	defer w.atEnd(func() { s.metrics.endToEnd(s.clk.Since(start)) })
	switch {
	case req.Stream:
		x.stream()
	case req.responses != nil:
		x.respond()
	default:
		x.complete()
	}
}

// exchange is one admitted request being answered.
type exchange struct {
	s       *Server
	w       *respWriter
	ctx     context.Context
	req     *chatRequest
	gen     *engine.Gen
	start   time.Time // request arrival, simulated
	id      string
	created int64
	model   []byte // the requested model as a JSON string

	sent     int       // tokens delivered
	last     time.Time // when the previous tokens were delivered, simulated
	headSent bool      // the stream's response head has been written
	roleSent bool      // the stream's role chunk has been written

	// A stream's delivery plan (see stream).
	enc                streamEncoder
	interval, coalesce int                  // tokens a chunk carries, and the most a late one may
	at                 int                  // tokens delivered before the ending
	how                engine.Ending        // how the delivery ends
	style              engine.ToolCallStyle // how its tool calls are shaped
}

// delivered records n tokens handed to the client now, for the latency histograms.
func (x *exchange) delivered(n int) {
	now := x.s.clk.Now()
	if x.sent == 0 {
		x.s.metrics.firstToken(now.Sub(x.start))
	} else {
		x.s.metrics.interToken(now.Sub(x.last), n)
	}
	x.last, x.sent = now, x.sent+n
}

// abort gives the generation up because the client has gone (the connection failed, or the
// server is stopping) and cuts the connection: no final chunk, no [DONE]. The engine frees
// the request after the profile's abort delay.
func (x *exchange) abort() {
	x.s.engine.Cancel(x.gen)
	x.s.metrics.finished(finishAbort)
	panic(http.ErrAbortHandler)
}

// cut ends the delivery as the drop fault planned: the server closes the connection, and the
// engine frees the request at its next step.
func (x *exchange) cut() {
	x.giveUp(finishAbort)
	panic(http.ErrAbortHandler)
}

// giveUp ends the generation before its planned end by the server's own decision, counted
// under reason (finishAbort or finishError). The engine frees the request's slot and KV at its
// next step.
func (x *exchange) giveUp(reason string) {
	x.s.engine.Drop(x.gen)
	x.s.metrics.finished(reason)
}

// usage is the completion's token accounting.
func (x *exchange) usage() usage {
	return usage{Prompt: x.gen.Prompt, Completion: x.gen.Output, Cached: x.gen.CachedTokens(), Reasoning: x.gen.Reasoning}
}
