package memnet

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientReachesServer: an HTTP server on the listener answers the listener's client,
// whatever host the URL names, inside a synctest bubble.
func TestClientReachesServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := Listen()
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "hello "+r.Host)
		})}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(l) }()
		c := l.Client()
		resp, err := c.Get("http://anything.test/x")
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, "hello anything.test", string(body))
		c.CloseIdleConnections()
		require.NoError(t, srv.Close())
		assert.ErrorIs(t, <-served, http.ErrServerClosed)
	})
}

// TestClosedListenerRefuses: after Close (twice is fine), Accept and DialContext fail with
// net.ErrClosed.
func TestClosedListenerRefuses(t *testing.T) {
	l := Listen()
	require.NoError(t, l.Close())
	require.NoError(t, l.Close(), "Close twice")
	_, err := l.Accept()
	assert.ErrorIs(t, err, net.ErrClosed, "Accept after Close")
	_, err = l.DialContext(context.Background(), "tcp", "x")
	assert.ErrorIs(t, err, net.ErrClosed, "DialContext after Close")
}

// TestDialWaitsForAcceptUntilContextEnds: with nobody accepting, a dial waits and gives up
// with its context's error when the context ends.
func TestDialWaitsForAcceptUntilContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := Listen()
		defer l.Close()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		_, err := l.DialContext(ctx, "tcp", "x")
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(start), "waited for the deadline")
	})
}
