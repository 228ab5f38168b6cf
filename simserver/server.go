package simserver

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/internal/wire"
)

// Reasoning field names: where reasoning deltas go in a stream and reasoning text in a
// message.
const (
	// FieldReasoningContent is the DeepSeek/SGLang name, the default.
	FieldReasoningContent = "reasoning_content"
	// FieldReasoning is the name newer vLLM emits.
	FieldReasoning = "reasoning"
)

// DefaultMaxRequestBytes is the request body limit when Options.MaxRequestBytes is 0: 8 MiB.
const DefaultMaxRequestBytes = 8 << 20

// DefaultReadTimeout is Options.ReadTimeout when it is 0: 30 s of wall time.
const DefaultReadTimeout = 30 * time.Second

// idleTimeout is how long, in wall time, a keep-alive connection may wait for its next
// request before the server closes it: longer than any pause between an agent's requests, and
// still a bound on connections a client opens and forgets.
const idleTimeout = 10 * time.Minute

// maxHeaderBytes caps a request's head (request line and headers), in bytes: ample for any
// API client, and with it a client trickling headers holds at most this much of the heap.
const maxHeaderBytes = 64 << 10

// SpeedupHeader is the response header with which the server advertises its clock's speedup
// (simulated seconds per wall second), on every response. A client that finds it can run its
// own clock at the same speed, so that its timeouts and think times agree with the server's.
const SpeedupHeader = wire.SpeedupHeader

// shutdownGrace is how long, in simulated time, Serve lets cancelled handlers finish their
// responses before it closes every connection.
const shutdownGrace = 5 * time.Second

// Options configures a Server. The zero value serves the default profile, healthy, in real
// time, without an API key or access log.
type Options struct {
	// Profile is the engine model; nil means engine.DSV4PD().
	Profile *engine.Profile
	// Faults are the injected faults; nil means none.
	Faults *engine.Faults
	// Clock is the source of simulated time for the engine, the latency metrics and the access
	// log; nil means clock.Real().
	Clock *clock.Clock
	// APIKey, when set, is required on /v1/* as "Authorization: Bearer <key>". /health and
	// /metrics stay open. The key is never logged.
	APIKey string
	// AccessLog receives two lines per chat request, when it starts and when it ends (see
	// accessLog); nil turns it off.
	AccessLog io.Writer
	// ServedModelNames are the model names requests may ask for and /v1/models lists, as
	// vLLM's --served-model-name; any other name gets 404. nil means the profile's Model.
	ServedModelNames []string
	// MaxRequestBytes limits request bodies, in bytes; larger ones get 413. 0 means
	// DefaultMaxRequestBytes. The server's memory follows the bytes that arrive, never the
	// length a client declares.
	MaxRequestBytes int64
	// ReadTimeout is the longest a client may take to send one request, headers and body, in
	// wall time; a body still arriving then gets 408 and its connection is closed. 0 means
	// DefaultReadTimeout. It is wall time, not the simulated clock, because it guards the
	// server against real clients on real sockets, whose sending speed --speedup does not
	// change; it is http.Server's ReadTimeout, so it applies when the server runs through
	// Serve. Generation after the body is in is not bounded by it.
	ReadTimeout time.Duration
	// ReasoningField names the reasoning field of deltas and messages: FieldReasoningContent ("",
	// the default) or FieldReasoning.
	ReasoningField string
}

// Server is the simulated OpenAI-compatible inference server: POST /v1/chat/completions,
// POST /v1/responses, GET /v1/models, GET /metrics and GET /health in front of an engine.Engine.
type Server struct {
	opts    Options
	clk     *clock.Clock
	engine  *engine.Engine
	metrics *metrics
	// metricsHandler serves metrics on /metrics.
	metricsHandler http.Handler
	log            *accessLog
	keyHash        [sha256.Size]byte
	created        int64         // Unix seconds of simulated time when the server was made
	idSeed         uint64        // makes completion ids differ between servers
	reasoningField string        // the reasoning delta member's opening (quotedField)
	models         []byte        // the /v1/models body
	efforts        []string      // the reasoning_effort values requests may send, sorted
	speedup        string        // the SpeedupHeader value
	requests       atomic.Uint64 // requests logged, for the ids the server makes up
	tools          toolCache     // the tools arrays of recent requests, compiled
	toolSeed       uint64        // seeds the simulated model's tool calls: the faults' seed
	stored         responseStore // the Responses API's stored responses

	mu       sync.Mutex
	stopping bool
	active   sync.WaitGroup // handlers running; Add only under mu while !stopping
	serving  bool
}

// New builds a server from the options; it serves once the engine runs (Serve starts it).
func New(o Options) (*Server, error) {
	if o.Profile == nil {
		o.Profile = engine.DSV4PD()
	}
	if o.Clock == nil {
		o.Clock = clock.Real()
	}
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.ReasoningField == "" {
		o.ReasoningField = FieldReasoningContent
	}
	if o.ServedModelNames == nil {
		o.ServedModelNames = []string{o.Profile.Model}
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	var bad []error
	if len(o.ServedModelNames) == 0 || slices.Contains(o.ServedModelNames, "") {
		bad = append(bad, fmt.Errorf("served model names: %q is not allowed: want one or more non-empty names", o.ServedModelNames))
	}
	if o.ReadTimeout < 0 {
		bad = append(bad, fmt.Errorf("read timeout: %s is not allowed: want a duration > 0 (0: %s)", o.ReadTimeout, DefaultReadTimeout))
	}
	if o.MaxRequestBytes < 0 {
		bad = append(bad, fmt.Errorf("max request bytes: %d is not allowed: want a size ≥ 0 (0: %d)", o.MaxRequestBytes, DefaultMaxRequestBytes))
	}
	if o.ReasoningField != FieldReasoningContent && o.ReasoningField != FieldReasoning {
		bad = append(bad, fmt.Errorf("reasoning field: %q is not allowed: want %q or %q", o.ReasoningField, FieldReasoningContent, FieldReasoning))
	}
	eng, err := engine.NewEngine(o.Clock, o.Profile, o.Faults)
	if err != nil {
		bad = append(bad, err)
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("simserver: %w", errors.Join(bad...))
	}
	now := o.Clock.Now()
	s := &Server{
		opts: o, clk: o.Clock, engine: eng,
		metrics:        newMetrics(eng, o.Profile.Model),
		log:            &accessLog{w: o.AccessLog},
		created:        now.Unix(),
		idSeed:         mix64(uint64(now.UnixNano())),
		reasoningField: quotedField(o.ReasoningField),
		toolSeed:       o.Faults.Seed(),
	}
	s.metricsHandler = s.metrics.handler()
	s.speedup = strconv.FormatFloat(o.Clock.Speedup(), 'g', -1, 64)
	if o.APIKey != "" {
		s.keyHash = sha256.Sum256([]byte(o.APIKey))
	}
	cards := make([]modelCard, len(o.ServedModelNames))
	for i, name := range o.ServedModelNames {
		cards[i] = modelCard{ID: name, Object: "model", Created: s.created, OwnedBy: "agentsim",
			MaxModelLen: o.Profile.MaxContextTokens,
			Agentsim:    &cardMeta{Speedup: o.Clock.Speedup(), Profile: o.Profile.Name}}
	}
	s.models, _ = json.Marshal(modelList{Object: "list", Data: cards})
	for effort := range o.Profile.Efforts {
		if effort != "" {
			s.efforts = append(s.efforts, effort)
		}
	}
	slices.Sort(s.efforts)
	return s, nil
}

// Clock returns the server's clock, the source of its simulated time.
func (s *Server) Clock() *clock.Clock { return s.clk }

// Engine returns the server's engine.
func (s *Server) Engine() *engine.Engine { return s.engine }

// Handler returns the server's HTTP handler. Requests are generated only while the engine runs:
// Serve starts and stops it; a caller that mounts Handler in its own http.Server calls
// Engine().Start and Engine().Stop itself.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// Serve starts the engine and serves HTTP on ln until ctx is done. Then it cancels every
// request in flight (streams end at once, without [DONE]), shuts the HTTP server down, stops
// the engine and returns nil, leaving no goroutine behind. It returns early with the error if
// serving ln fails. Serve may be called once per Server.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	if s.serving {
		s.mu.Unlock()
		return errors.New("simserver: Serve called twice")
	}
	s.serving = true
	s.mu.Unlock()

	// Handlers live in base, not in ctx, so that cancelling them is a step of our own,
	// ordered after we stop accepting work.
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	// The timeouts are wall time: see Options.ReadTimeout. net/http lifts the read deadline
	// once a handler has read the body, so a long generation is not cut
	// (TestLongStreamOutlivesReadTimeout).
	hs := &http.Server{
		Handler:        s.Handler(),
		BaseContext:    func(net.Listener) context.Context { return base },
		ReadTimeout:    s.opts.ReadTimeout,
		IdleTimeout:    idleTimeout,
		MaxHeaderBytes: maxHeaderBytes,
	}
	s.engine.Start()
	defer s.engine.Stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	s.shutdown(hs, cancel)
	if serveErr == nil {
		serveErr = <-errc
	}
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	return serveErr
}

// shutdown stops an HTTP server whose handlers run under the context cancel ends: it refuses
// new requests, cancels those in flight (their streams end at once), lets their connections
// close for up to shutdownGrace, closes the rest, and waits for every handler to return.
func (s *Server) shutdown(hs *http.Server, cancel context.CancelFunc) {
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	cancel()
	grace, stop := s.clk.WithTimeout(context.Background(), shutdownGrace)
	defer stop()
	if err := hs.Shutdown(grace); err != nil {
		// A handler still reading a slow request body, or a client that connected and never
		// sent a request: cut them off.
		_ = hs.Close()
	}
	s.active.Wait()
}

// enter registers a handler; false means the server is stopping and the request is refused.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return false
	}
	s.active.Add(1)
	return true
}

// serveHTTP routes a request.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		writeError(w, &apiError{Status: http.StatusServiceUnavailable, Type: "InternalServerError", Message: "The server is shutting down."})
		return
	}
	rw := newRespWriter(w)
	defer rw.endOnPanic()
	defer rw.atEnd(s.active.Done)
	w.Header().Set(SpeedupHeader, s.speedup)
	switch path := r.URL.Path; path {
	case "/v1/chat/completions":
		s.logged(rw, r, func(w *respWriter, start time.Time) {
			if s.authorize(w, r) && allow(w, r, http.MethodPost) {
				s.chat(w, r, start)
			}
		})
	case "/v1/responses":
		s.logged(rw, r, func(w *respWriter, start time.Time) {
			if s.authorize(w, r) && allow(w, r, http.MethodPost) {
				s.responses(w, r, start)
			}
		})
	case "/v1/models":
		if s.authorize(w, r) && allow(w, r, http.MethodGet) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(s.models)
		}
	case "/metrics":
		if allow(w, r, http.MethodGet) {
			s.metricsHandler.ServeHTTP(w, r)
		}
	case "/health":
		if allow(w, r, http.MethodGet) {
			w.WriteHeader(http.StatusOK)
		}
	default:
		if strings.HasPrefix(path, "/v1/") && !s.authorize(w, r) {
			return
		}
		writeError(w, &apiError{Status: http.StatusNotFound, Type: "NotFoundError",
			Message: fmt.Sprintf("Not found: %s %s (this server serves POST /v1/chat/completions, POST /v1/responses, GET /v1/models, GET /metrics, GET /health)", r.Method, path)})
	}
}

// allow answers 405 unless the request uses method.
func allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method {
		return true
	}
	w.Header().Set("Allow", method)
	writeError(w, &apiError{Status: http.StatusMethodNotAllowed, Type: "MethodNotAllowedError",
		Message: fmt.Sprintf("Method %s is not allowed on %s: use %s", r.Method, r.URL.Path, method)})
	return false
}

// logged runs a handler and writes its access log line when the response ends, even if the
// handler aborts the connection.
func (s *Server) logged(rw *respWriter, r *http.Request, h func(*respWriter, time.Time)) {
	start := s.clk.Now()
	uri := r.URL.RequestURI()
	id := s.requestID(r.Header.Get(wire.ClientRequestIDHeader))
	s.log.started(start, id, r.Method, uri)
	defer rw.atEnd(func() {
		now := s.clk.Now()
		s.log.record(now, id, r.Method, uri, rw.loggedStatus(), now.Sub(start))
	})
	h(rw, start)
}

// modelList is the /v1/models body.
type modelList struct {
	Object string      `json:"object"`
	Data   []modelCard `json:"data"`
}

type modelCard struct {
	ID          string    `json:"id"`
	Object      string    `json:"object"`
	Created     int64     `json:"created"`
	OwnedBy     string    `json:"owned_by"`
	MaxModelLen int       `json:"max_model_len"`
	Agentsim    *cardMeta `json:"agentsim"`
}

// cardMeta is what a model card says about the simulator behind it.
type cardMeta struct {
	// Speedup is the server clock's speedup: simulated seconds per wall second.
	Speedup float64 `json:"speedup"`
	// Profile is the engine profile's name.
	Profile string `json:"profile"`
}
