package agents

import (
	"context"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agentsim/agentsim/clock"
)

// memListener is an in-memory net.Listener: DialContext hands one end of a net.Pipe to
// Accept. Inside a synctest bubble its connections block durably, so virtual time advances
// while a stream is silent. No sockets are involved.
type memListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once

	mu      sync.Mutex
	clients []*pipeConn
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for the next dialled connection.
func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting; later dials are refused.
func (l *memListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is a placeholder address.
func (l *memListener) Addr() net.Addr { return pipeAddr{} }

// DialContext connects to the listener, or fails as a refused TCP connection would.
func (l *memListener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	pc := &pipeConn{Conn: client, peer: server}
	select {
	case l.conns <- server:
		l.mu.Lock()
		l.clients = append(l.clients, pc)
		l.mu.Unlock()
		return pc, nil
	case <-l.done:
	case <-ctx.Done():
	}
	client.Close()
	server.Close()
	return nil, refused()
}

// refused is the error a dial to a closed port returns.
func refused() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// resetAll breaks every connection as a TCP RST would: client reads fail with ECONNRESET.
func (l *memListener) resetAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.clients {
		c.reset.Store(true)
		c.peer.Close()
	}
}

// pipeConn is the client end of a pipe, able to fail like a reset TCP connection.
type pipeConn struct {
	net.Conn
	peer  net.Conn
	reset atomic.Bool
}

// Read reads from the pipe; after resetAll it fails with ECONNRESET.
func (c *pipeConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil && c.reset.Load() {
		return n, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	}
	return n, err
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// testEnv is an HTTP server and a Client talking over in-memory connections. Create it and
// close it inside the synctest bubble.
type testEnv struct {
	clk    *clock.Clock
	lis    *memListener
	srv    *http.Server
	tr     *http.Transport
	client *Client
	served chan struct{}
}

// newTestEnv serves h and returns a Client for it, timed by clk.
func newTestEnv(t *testing.T, clk *clock.Clock, h http.Handler) *testEnv {
	t.Helper()
	e := &testEnv{clk: clk, lis: newMemListener(), srv: &http.Server{Handler: h}, served: make(chan struct{})}
	e.tr = &http.Transport{DialContext: e.lis.DialContext}
	e.client = NewClient("http://agentsim.test/v1", "sk-test", &http.Client{Transport: e.tr}, clk)
	if s, ok := h.(*script); ok {
		s.lis = e.lis // before serving: reset steps break this listener's connections
	}
	go func() {
		defer close(e.served)
		_ = e.srv.Serve(e.lis)
	}()
	return e
}

// close shuts the server and the client's idle connections and waits for the server loop.
func (e *testEnv) close() {
	_ = e.srv.Close()
	e.tr.CloseIdleConnections()
	<-e.served
}
