package simserver

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/agentsim/agentsim/internal/inproc"
)

// LocalURL is the base URL a Local server answers: any host would do, since its Client
// reaches the server whatever the URL names. It is the URL results and logs show for the
// simulator embedded in a command.
const LocalURL = "http://embedded"

// Local is a simulator served to HTTP clients in its own process, without a network: no
// socket, no file descriptor and no goroutine per request, only a buffer of unread stream
// bytes. The handler runs on the client's goroutine, and a stream, once admitted, is written
// there too, as the client waits for its head and reads its chunks (see internal/inproc for
// what a client can and cannot tell from a socket, and docs/architecture.md §4). It is how
// commands reach their embedded simulator; Serve is for clients elsewhere. Create it with
// ServeLocal and stop it with Close.
type Local struct {
	s         *Server
	transport *inproc.Transport
	client    *http.Client
	cancel    context.CancelFunc
	closeOnce sync.Once
}

// ServeLocal starts the engine and serves the simulator in-process until Close. It fails if
// the server is already serving (Serve or ServeLocal may be called once per Server).
func (s *Server) ServeLocal() (*Local, error) {
	s.mu.Lock()
	if s.serving {
		s.mu.Unlock()
		return nil, errors.New("simserver: ServeLocal called on a server already serving")
	}
	s.serving = true
	s.mu.Unlock()
	base, cancel := context.WithCancel(context.Background())
	t := &inproc.Transport{Handler: s.Handler(), Context: base}
	s.engine.Start()
	return &Local{s: s, transport: t, client: &http.Client{Transport: t}, cancel: cancel}, nil
}

// Client returns the HTTP client that reaches the server (the same one each time).
func (l *Local) Client() *http.Client { return l.client }

// Close stops the server as Serve does when its context ends: new requests are refused as a
// closed port refuses them, requests in flight end at once (streams without [DONE]), every
// handler returns and the engine stops. Close is safe to call more than once.
func (l *Local) Close() {
	l.closeOnce.Do(func() {
		l.s.mu.Lock()
		l.s.stopping = true
		l.s.mu.Unlock()
		l.cancel()
		l.transport.Close()
		l.s.active.Wait()
		l.s.engine.Stop()
	})
}
