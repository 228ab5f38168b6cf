// Package fakeserver is the one fake OpenAI-compatible server of agentsim's tests. It imitates
// the real servers agentsim meets in the ways they surprise it, each by a field of Server:
// a vLLM-shaped server (vLLM, llm-d-inference-sim) lists its models on /v1/models with their
// max_model_len, answers 404 "The model … does not exist." to any other name and 400 "This
// model's maximum context length is …" to a request past its window, and exposes vllm:
// gauges with a generation counter it bumps only when a request ends; llama.cpp's
// llama-server lists meta.n_ctx, may require an API key and exposes llamacpp: gauges; a
// server can freeze (stop answering /metrics and stop streaming), fail every n-th request,
// answer every request with the same frames, serve only so many requests at once and queue
// the rest, advertise an agentsim speedup, or hang up on a kept-alive connection just as the
// client sends on it. Prompt
// tokens are counted as words.
//
// The zero Server lists no model and accepts any; a request gets the output tokens it forces
// with ignore_eos and max_tokens (else none), then the usage frame and [DONE]. POST
// /v1/responses answers the same way in the Responses API's events (response.created …
// response.completed with usage), or with its response object when not streaming.
package fakeserver

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsim/agentsim/internal/memnet"
	"github.com/agentsim/agentsim/internal/wire"
)

// Metrics is the flavour of a Server's /metrics.
type Metrics string

// The /metrics flavours.
const (
	NoMetrics   Metrics = ""             // 404, as a server with no metrics endpoint answers
	VLLM        Metrics = "vllm"         // vllm: gauges and a generation counter
	LlamaCpp    Metrics = "llamacpp"     // llama-server --metrics: llamacpp: gauges
	LlamaCppOff Metrics = "llamacpp-off" // llama-server without --metrics: 501
)

// Server is a fake OpenAI-compatible server; its fields say how it behaves and are read as it
// serves (change one only while no request is in flight). Start or StartInMemory serves it.
type Server struct {
	// Models are the names /v1/models lists and a request may send (any other gets vLLM's
	// 404); none lists nothing and accepts any name. Unlisted lists nothing all the same.
	Models   []string
	Unlisted bool
	// MaxModelLen is the max_model_len /v1/models lists (0: none); Window the context window
	// enforced on prompt + max_tokens (0: none), refused with vLLM's 400.
	MaxModelLen, Window int
	// NCtx is the per-slot window /v1/models lists as llama-server does, meta.n_ctx beside the
	// model's n_ctx_train (0: no meta).
	NCtx int
	// Tokens is how many output tokens a request gets, unless it asks fewer with max_tokens
	// or forces max_tokens with ignore_eos; with FixedTokens, whatever it asks. ITL is the
	// time between two of them (wall time, virtual in a synctest bubble).
	Tokens      int
	FixedTokens bool
	ITL         time.Duration
	// TokensPerWord is how many prompt tokens the server counts per word (0: one), as a
	// tokenizer unlike the harness's estimate does; PromptTokens, when > 0, is the count
	// reported whatever the prompt.
	TokensPerWord, PromptTokens int
	// RequireIgnoreEOS refuses, with 400, a request that does not set ignore_eos.
	RequireIgnoreEOS bool
	// FailEvery, when > 0, answers every FailEvery-th accepted request 503.
	FailEvery int
	// CallTools, when > 0, is how many calls of its first function tool a Responses request
	// that offers function tools gets, unless its input ends with tool results (then text).
	CallTools int
	// Frames, when set, are the data frames every accepted request is answered with, before
	// [DONE], instead of a stream of Tokens.
	Frames []string
	// Metrics is the /metrics flavour; Deferred is what llamacpp:requests_deferred reads.
	Metrics  Metrics
	Deferred int
	// APIKey, when set, is required as a bearer token on every path, /metrics included, as
	// llama-server --api-key does: 401 without it.
	APIKey string
	// Speedup, when set, is advertised on every response in wire.SpeedupHeader, as an agentsim
	// server advertises its clock's.
	Speedup string
	// Slots, when > 0, is how many requests stream at once, as llama-server's -np slots or
	// vLLM's --max-num-seqs: any more wait, without a byte (not even headers), until one
	// ends, and count in the queued gauges.
	Slots int
	// HangUpReused, when set, hangs up on the second request of every connection, having read
	// it whole, without a byte of an answer: a server that closes an idle connection (its
	// keep-alive timeout) just as the client sends the next request on it. HungUp counts them.
	// Only a server started by Start or StartInMemory tells its connections apart.
	HangUpReused bool

	hungUp atomic.Int64

	slots   chan struct{} // made on first use when Slots > 0; a token per streaming request
	waiting int           // requests waiting for a slot

	mu        sync.Mutex
	frozen    bool  // /metrics and every stream hang until their client gives up
	running   int   // requests streaming
	generated int64 // output tokens of requests that ended (the counter the server bumps)
	accepted  int   // requests accepted, for FailEvery
	responses int   // responses answered, for their ids
}

// Start serves s on a real loopback socket until the test ends.
func (s *Server) Start(tb testing.TB) *httptest.Server {
	ts := httptest.NewUnstartedServer(s)
	ts.Config.ConnContext = countRequests
	ts.Start()
	tb.Cleanup(ts.Close)
	return ts
}

// connRequestsKey carries, in a request's context, the count of requests its connection has
// brought.
type connRequestsKey struct{}

// countRequests gives each connection its count of requests (http.Server.ConnContext).
func countRequests(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connRequestsKey{}, new(atomic.Int32))
}

// hangUp reports whether r is a request HangUpReused hangs up on, and if so hangs up.
func (s *Server) hangUp(w http.ResponseWriter, r *http.Request) bool {
	n, ok := r.Context().Value(connRequestsKey{}).(*atomic.Int32)
	if !s.HangUpReused || !ok || n.Add(1) != 2 {
		return false
	}
	_, _ = io.Copy(io.Discard, r.Body) // read whole: nothing unread turns the close into a reset
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	s.hungUp.Add(1)
	_ = conn.Close()
	return true
}

// HungUp returns how many requests HangUpReused hung up on.
func (s *Server) HungUp() int { return int(s.hungUp.Load()) }

// StartInMemory serves s over an in-memory network (internal/memnet), for a synctest bubble,
// until the test ends, and returns the server with the client that reaches it.
func (s *Server) StartInMemory(tb testing.TB) (*httptest.Server, *http.Client) {
	ts := httptest.NewUnstartedServer(s)
	ts.Config.ConnContext = countRequests
	l := memnet.Listen()
	ts.Listener = l
	ts.Start()
	hc := l.Client()
	tb.Cleanup(func() {
		hc.CloseIdleConnections()
		ts.Close()
	})
	return ts, hc
}

// Freeze makes the server stop answering, as a wedged engine does: /metrics and every stream
// hang until their client gives up.
func (s *Server) Freeze() {
	s.mu.Lock()
	s.frozen = true
	s.mu.Unlock()
}

func (s *Server) isFrozen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frozen
}

// ServeHTTP serves /v1/models, /v1/chat/completions, /v1/responses and /metrics; any other path is 404.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.hangUp(w, r) {
		return
	}
	if s.Speedup != "" {
		w.Header().Set(wire.SpeedupHeader, s.Speedup)
	}
	if s.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.APIKey {
		llamaError(w, http.StatusUnauthorized, "authentication_error", "Invalid API Key")
		return
	}
	switch r.URL.Path {
	case "/v1/models":
		s.serveModels(w)
	case "/metrics":
		s.serveMetrics(w, r)
	case "/v1/chat/completions":
		s.serveChat(w, r)
	case "/v1/responses":
		s.serveResponses(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) serveModels(w http.ResponseWriter) {
	type meta struct {
		NCtx      int `json:"n_ctx"`
		NCtxTrain int `json:"n_ctx_train"`
		NVocab    int `json:"n_vocab"`
	}
	type card struct {
		ID          string `json:"id"`
		Object      string `json:"object"`
		MaxModelLen int    `json:"max_model_len,omitempty"`
		Meta        *meta  `json:"meta,omitempty"`
	}
	list := struct {
		Object string `json:"object"`
		Data   []card `json:"data"`
	}{Object: "list", Data: []card{}}
	for _, m := range s.Models {
		if s.Unlisted {
			break
		}
		c := card{ID: m, Object: "model", MaxModelLen: s.MaxModelLen}
		if s.NCtx > 0 {
			c.Meta = &meta{NCtx: s.NCtx, NCtxTrain: 8192, NVocab: 256}
		}
		list.Data = append(list.Data, c)
	}
	_ = json.NewEncoder(w).Encode(list)
}

// llamaError answers with llama-server's JSON error.
func llamaError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": msg, "type": typ}})
}

// vllmError answers with an OpenAI-style JSON error, as vLLM words it.
func vllmError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": status}})
}
