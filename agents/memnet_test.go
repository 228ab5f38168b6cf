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
	"github.com/agentsim/agentsim/internal/memnet"
)

// memListener is a memnet.Listener with the two things these tests need beyond it: dials
// that fail as a refused TCP connection does once it is closed, and resetAll.
type memListener struct {
	*memnet.Listener

	mu      sync.Mutex
	clients []*pipeConn
}

func newMemListener() *memListener { return &memListener{Listener: memnet.Listen()} }

// DialContext connects to the listener, or fails as a refused TCP connection would.
func (l *memListener) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := l.Listener.DialContext(ctx, network, addr)
	if err != nil {
		return nil, refused()
	}
	pc := &pipeConn{Conn: c}
	l.mu.Lock()
	l.clients = append(l.clients, pc)
	l.mu.Unlock()
	return pc, nil
}

// refused is the error a dial to a closed port returns.
func refused() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// resetAll breaks every connection as a TCP RST would: client reads fail with ECONNRESET, and
// the server's end sees the connection closed.
func (l *memListener) resetAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.clients {
		c.reset.Store(true)
		c.Conn.Close()
	}
}

// pipeConn is the client end of a pipe, able to fail like a reset TCP connection.
type pipeConn struct {
	net.Conn
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
	e.client = NewClient("http://agentsim.test/v1", "sk-test", &http.Client{Transport: e.tr}, clk, nil)
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
