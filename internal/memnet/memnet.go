// Package memnet is an in-memory network for tests: a net.Listener whose connections are
// net.Pipe pairs, and an HTTP client that dials it. Inside a testing/synctest bubble every
// read and write on such a connection blocks durably and runs in virtual time, which real
// sockets do not, so a whole harness and simulator can run in a bubble.
package memnet

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// Listener is an in-memory net.Listener. Create it with Listen.
type Listener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

// Listen returns a new Listener.
func Listen() *Listener {
	return &Listener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept implements net.Listener.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener; it is safe to call twice.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr implements net.Listener.
func (l *Listener) Addr() net.Addr { return addr{} }

// DialContext connects a client to the listener, waiting for Accept; it fails with
// net.ErrClosed once the listener is closed, and with ctx.Err() if ctx ends first.
func (l *Listener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	var err error
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		err = net.ErrClosed
	case <-ctx.Done():
		err = ctx.Err()
	}
	client.Close()
	server.Close()
	return nil, err
}

// Client returns an HTTP client whose every connection dials l, whatever the URL's host.
// Call CloseIdleConnections on its transport (or Client.CloseIdleConnections) when done, so
// no connection goroutine outlives the test.
func (l *Listener) Client() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: l.DialContext, ForceAttemptHTTP2: false,
		MaxIdleConnsPerHost: 1024}}
}

type addr struct{}

func (addr) Network() string { return "memnet" }
func (addr) String() string  { return "memnet" }
