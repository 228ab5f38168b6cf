// Package simtest runs the simulated inference server for tests, in the shape of
// net/http/httptest: NewServer returns a started server with its URL and a Client that reaches
// it, and stops it when the test ends.
//
// By default the server listens on an in-memory network (connections are net.Pipe pairs), so
// it works both on its own and inside a testing/synctest bubble, where every read and write
// blocks durably and the simulator's clock runs in virtual time; real sockets do not. The
// in-memory URL is "http://sim" and only Client reaches it. NewLoopbackServer, or replacing
// Listener before Start, serves on a real socket instead, for clients that dial by address;
// NewLocalServer serves without any connection, as commands serve their embedded simulator.
//
// Inside a bubble, call NewServer from the bubble's goroutine: every goroutine the server
// starts then belongs to the bubble and ends, at the test's cleanup, before the bubble does.
package simtest

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/memnet"
	"github.com/agentsim/agentsim/simserver"
)

// MemoryURL is the base URL of a server on the in-memory network. Any host would do: Client
// dials the server whatever the URL names.
const MemoryURL = "http://sim"

// Server is a simulator serving for the length of one test.
type Server struct {
	// URL is the base URL, without a trailing slash: MemoryURL on the in-memory network,
	// http://127.0.0.1:port on loopback. It is set by Start.
	URL string
	// Listener is where the server serves. NewUnstartedServer sets an in-memory listener; it
	// may be replaced before Start (by a loopback listener, say) and not after.
	Listener net.Listener
	// Sim is the simulator being served; Sim.Engine() exposes its engine's gauges.
	Sim *simserver.Server

	tb        testing.TB
	local     *simserver.Local // serving in-process (NewLocalServer), or nil
	transport *http.Transport
	client    *http.Client
	stop      context.CancelFunc
	served    chan error
	closeOnce sync.Once
}

// NewServer builds a simulator from opts and starts it on the in-memory network; it stops when
// the test ends. A nil opts.Clock means clock.New(1): simulated time runs at wall speed, which
// inside a bubble is virtual. Invalid options fail the test.
func NewServer(tb testing.TB, opts simserver.Options) *Server {
	tb.Helper()
	s := NewUnstartedServer(tb, opts)
	s.Start()
	return s
}

// NewLoopbackServer is NewServer on a real loopback socket, for clients that dial by address.
// It cannot be used inside a synctest bubble.
func NewLoopbackServer(tb testing.TB, opts simserver.Options) *Server {
	tb.Helper()
	s := NewUnstartedServer(tb, opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("simtest: listen on loopback: %v", err)
	}
	s.Listener = ln
	s.Start()
	return s
}

// NewLocalServer is NewServer served as commands serve their embedded simulator: in-process,
// through simserver.Local, without connections. Its URL is simserver.LocalURL and only Client
// reaches it; Listener is nil. It works inside a synctest bubble.
func NewLocalServer(tb testing.TB, opts simserver.Options) *Server {
	tb.Helper()
	s := NewUnstartedServer(tb, opts)
	s.Listener = nil
	local, err := s.Sim.ServeLocal()
	if err != nil {
		tb.Fatalf("simtest: %v", err)
	}
	s.local, s.URL, s.client = local, simserver.LocalURL, local.Client()
	tb.Cleanup(s.Close)
	return s
}

// NewUnstartedServer builds a simulator from opts, with an in-memory Listener, but does not
// serve it: change Listener, then call Start.
func NewUnstartedServer(tb testing.TB, opts simserver.Options) *Server {
	tb.Helper()
	if opts.Clock == nil {
		clk, err := clock.New(1)
		if err != nil {
			tb.Fatalf("simtest: %v", err)
		}
		opts.Clock = clk
	}
	sim, err := simserver.New(opts)
	if err != nil {
		tb.Fatalf("simtest: %v", err)
	}
	return newUnstarted(tb, sim)
}

// Serve starts an already built simulator on the in-memory network, as NewServer does; use
// it when something else (a command's flags, say) builds the simulator.
func Serve(tb testing.TB, sim *simserver.Server) *Server {
	tb.Helper()
	s := newUnstarted(tb, sim)
	s.Start()
	return s
}

func newUnstarted(tb testing.TB, sim *simserver.Server) *Server {
	return &Server{Listener: memnet.Listen(), Sim: sim, tb: tb}
}

// Start serves the simulator on Listener until Close, which the test's cleanup calls. Start
// may be called once.
func (s *Server) Start() {
	s.tb.Helper()
	if s.served != nil || s.local != nil {
		s.tb.Fatal("simtest: Start called twice")
	}
	s.transport = &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1024}
	if mem, ok := s.Listener.(*memnet.Listener); ok {
		s.transport.DialContext = mem.DialContext
		s.URL = MemoryURL
	} else {
		s.URL = "http://" + s.Listener.Addr().String()
	}
	s.client = &http.Client{Transport: s.transport}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.served = cancel, make(chan error, 1)
	go func() { s.served <- s.Sim.Serve(ctx, s.Listener) }()
	s.tb.Cleanup(s.Close)
}

// Client returns an HTTP client that reaches the server (the same one each time). Close closes
// its idle connections.
func (s *Server) Client() *http.Client { return s.client }

// Clock returns the simulator's clock, the source of its simulated time.
func (s *Server) Clock() *clock.Clock { return s.Sim.Clock() }

// OpenAIClient returns a go-openai client of the server's /v1 API, sending apiKey as its
// bearer token, over Client.
func (s *Server) OpenAIClient(apiKey string) *openai.Client {
	cfg := openai.DefaultConfig(apiKey)
	cfg.BaseURL = s.URL + "/v1"
	cfg.HTTPClient = s.client
	return openai.NewClientWithConfig(cfg)
}

// Close stops the server: requests in flight end at once (streams without [DONE]), every
// goroutine it started returns, and a Serve failure fails the test. Close is safe to call
// twice; the test's cleanup calls it.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		if s.local != nil {
			s.local.Close()
			return
		}
		if s.served == nil {
			return
		}
		s.transport.CloseIdleConnections()
		s.stop()
		if err := <-s.served; err != nil {
			s.tb.Errorf("simtest: Serve() = %v; want nil", err)
		}
		// Connections that were busy when the server stopped are idle now.
		s.transport.CloseIdleConnections()
	})
}
