package simserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agentsim/agentsim/simserver/engine"
)

// maxChunkTokens is the most tokens one stream chunk carries. A chunk carries what has
// accumulated since the previous one, up to this, so chunks grow when the engine's steps
// outrun the writer, as real servers' do under load.
const maxChunkTokens = 8

// chat serves POST /v1/chat/completions: parse, admit, then stream or answer whole.
func (s *Server) chat(w *respWriter, r *http.Request, start time.Time) {
	body, aerr := s.readBody(w, r)
	if aerr == nil {
		var req *chatRequest
		if req, aerr = parseChatRequest(body); aerr == nil {
			s.generate(w, r.Context(), req, start)
			return
		}
	}
	writeError(w, aerr)
}

// readBody reads the request body within the size limit (413 beyond it).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	limit := s.opts.MaxRequestBytes
	tooLarge := &apiError{Status: http.StatusRequestEntityTooLarge, Type: "RequestTooLargeError",
		Message: fmt.Sprintf("The request body exceeds the limit of %d bytes.", limit)}
	if r.ContentLength > limit {
		return nil, tooLarge
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength) + 1)
	}
	// Reading to EOF also lets net/http watch the connection, so that a client going away
	// cancels the request's context.
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		return nil, tooLarge
	case err != nil:
		return nil, badRequest("", "could not read the request body: "+err.Error())
	}
	return buf.Bytes(), nil
}

// generate submits the request to the engine and delivers its generation.
func (s *Server) generate(w *respWriter, ctx context.Context, req *chatRequest, start time.Time) {
	gen, err := s.engine.Submit(buildJob(req))
	if err != nil {
		var rej *engine.Rejection
		if errors.As(err, &rej) {
			writeError(w, fromRejection(rej))
		} else {
			writeError(w, &apiError{Status: http.StatusServiceUnavailable, Type: "InternalServerError", Message: err.Error()})
		}
		return
	}
	model, _ := json.Marshal(req.Model)
	x := &exchange{
		s: s, w: w, ctx: ctx, req: req, gen: gen, start: start,
		id:      fmt.Sprintf("chatcmpl-%016x%08x", mix64(s.idSeed^gen.ID), uint32(gen.ID)),
		created: start.Unix(),
		model:   model,
	}
	// Deferred so that it runs when the handler aborts the connection too.
	defer func() { s.metrics.endToEnd(s.clk.Since(start)) }()
	if req.Stream {
		x.stream()
	} else {
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

	sent int       // tokens delivered
	last time.Time // when the previous tokens were delivered, simulated
}

// next waits for up to limit new tokens. ok is false when the request's context ended: the
// client went away or the server is stopping.
func (x *exchange) next(limit int) (n int, ok bool) {
	n, _, err := x.gen.Next(x.ctx, limit)
	return n, err == nil && n > 0
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

// abort gives the generation up and cuts the connection: no final chunk, no [DONE].
func (x *exchange) abort() {
	x.giveUp(finishAbort)
	panic(http.ErrAbortHandler)
}

// giveUp ends the generation before its planned end, counted under reason (finishAbort or
// finishError). The engine frees the request's slot and KV at its next step.
func (x *exchange) giveUp(reason string) {
	x.s.engine.Cancel(x.gen)
	x.s.metrics.finished(reason)
}

// usage is the completion's token accounting.
func (x *exchange) usage() usage {
	return usage{Prompt: x.gen.Prompt, Completion: x.gen.Output, Cached: x.gen.CachedTokens(), Reasoning: x.gen.Reasoning}
}
