package keepalive_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/keepalive"
)

// closer is a server that answers each request with its body, except the request it is told
// to drop: that one it reads and then hangs up on without a byte of an answer, as a server
// does that closes an idle connection just as the client sends on it. It counts the requests
// and the connections they came on.
type closer struct {
	// drop picks the requests to hang up on, by their number on their connection (1 the
	// first) and overall (1 the first).
	drop func(onConn, overall int) bool
	// reset hangs up with a reset (SO_LINGER 0) instead of an end of file.
	reset bool
	// partial writes the start of a status line before hanging up.
	partial bool
	// together, when set, holds the first requests until as many have arrived as it counts
	// (sync.WaitGroup.Add before the requests), so they are in flight at once.
	together *sync.WaitGroup
	held     int // how many the together group counts

	mu       sync.Mutex
	requests int
	conns    map[string]int // remote address → requests seen on it
}

func (c *closer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body) // all of it: nothing unread to turn a close into a reset
	c.mu.Lock()
	c.requests++
	c.conns[r.RemoteAddr]++
	drop := c.drop(c.conns[r.RemoteAddr], c.requests)
	first := c.requests <= c.held
	c.mu.Unlock()
	if first {
		c.together.Done()
		c.together.Wait()
	}
	if !drop {
		_, _ = w.Write(append([]byte("echo:"), body...))
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	if c.partial {
		_, _ = buf.WriteString("HTTP/1.1 20")
		_ = buf.Flush()
	}
	if c.reset {
		_ = conn.(*net.TCPConn).SetLinger(0)
	}
	_ = conn.Close()
}

// seen returns the requests and connections the server saw.
func (c *closer) seen() (requests, conns int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests, len(c.conns)
}

// post sends body to url through rt and returns the answer's body; with keep, once the
// connection it came on is idle again, so that the next request reuses it.
func post(t *testing.T, rt http.RoundTripper, url, body string, keep bool) (string, error) {
	t.Helper()
	idle := make(chan struct{}, 1)
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{PutIdleConn: func(error) { idle <- struct{}{} }})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	if keep {
		<-idle
	}
	return string(b), nil
}

// TestResendLostToKeepAlive checks that a POST lost to the keep-alive race — sent on a reused
// connection the server hangs up on before answering — is sent once more and answered, where
// net/http alone fails it; and that a request is not resent when the race is not what failed
// it: a fresh connection, or a response already begun.
func TestResendLostToKeepAlive(t *testing.T) {
	second := func(onConn, _ int) bool { return onConn == 2 }
	for _, tc := range []struct {
		name   string
		srv    *closer
		fresh  bool // no connection is kept between requests
		resent bool
	}{
		// The server's end of file on the reused connection: resent on a new one.
		{name: "eof", srv: &closer{drop: second}, resent: true},
		// A reset instead: the same.
		{name: "reset", srv: &closer{drop: second, reset: true}, resent: true},
		// A response had begun: not the race, not resent.
		{name: "answered", srv: &closer{drop: second, partial: true}},
		// A fresh connection the server hangs up on: it does not want the request.
		{name: "fresh", srv: &closer{drop: func(_, overall int) bool { return overall == 2 }}, fresh: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, ours := range []bool{false, true} {
				tc.srv.conns, tc.srv.requests = map[string]int{}, 0
				srv := httptest.NewServer(tc.srv)
				tr := &http.Transport{DisableKeepAlives: tc.fresh}
				var rt http.RoundTripper = tr
				if ours {
					rt = keepalive.Transport{Next: tr}
				}
				got, err := post(t, rt, srv.URL, "one", !tc.fresh)
				require.NoError(t, err)
				require.Equal(t, "echo:one", got)
				got, err = post(t, rt, srv.URL, "two", false)
				requests, conns := tc.srv.seen()
				if ours && tc.resent {
					require.NoError(t, err, "keepalive.Transport resends the lost POST")
					assert.Equal(t, "echo:two", got)
					assert.Equal(t, 3, requests, "the server saw the lost POST and its resend")
					assert.Equal(t, 2, conns, "the resend went on a new connection")
				} else {
					assert.Error(t, err, "ours=%t: the POST fails", ours)
					assert.Equal(t, 2, requests, "ours=%t: the POST is sent once", ours)
				}
				tr.CloseIdleConnections()
				srv.Close()
			}
		})
	}
}

// TestLostOnlyByTheRace checks the cases Lost leaves to the caller: a round trip that
// succeeded, one whose context ended, and a timeout.
func TestLostOnlyByTheRace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var reused bool
	traced, a := keepalive.Watch(ctx, func() { reused = true })
	httptrace.ContextClientTrace(traced).GotConn(httptrace.GotConnInfo{Reused: true})
	assert.True(t, reused, "onReused is called for a reused connection")
	lost := errors.New("EOF")
	assert.True(t, a.Lost(traced, lost), "a failure on a reused connection before any byte")
	assert.False(t, a.Lost(traced, nil), "no failure")
	assert.False(t, a.Lost(traced, &net.OpError{Op: "read", Err: timeoutError{}}), "a timeout")
	cancel()
	assert.False(t, a.Lost(traced, lost), "the context's end")
}

// timeoutError is a net.Error that timed out.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// TestBodyWithoutGetBodyNotResent checks that a body that cannot be had again passes through:
// the request is sent once.
func TestBodyWithoutGetBodyNotResent(t *testing.T) {
	var sent int
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent++
		httptrace.ContextClientTrace(r.Context()).GotConn(httptrace.GotConnInfo{Reused: true})
		return nil, io.EOF
	})
	ctx, a := keepalive.Watch(context.Background(), nil)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://x/", io.NopCloser(bytes.NewReader([]byte("{}"))))
	_, err := keepalive.RoundTrip(next, req, a)
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, 1, sent, "no GetBody: sent once")

	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("{}")), nil }
	_, err = keepalive.RoundTrip(next, req, a)
	assert.ErrorIs(t, err, io.EOF, "every resend fails too: the last error is returned")
	assert.Equal(t, 1+1+keepalive.MaxResends, sent, "with GetBody: resent while lost, MaxResends times at most")
}

// TestResendThroughDeadPool checks a pool of connections the server closed at once — its
// keep-alive timeout passing while the agents think: the request meets them in turn and is
// answered on a new connection, where a single resend would meet the second dead one.
func TestResendThroughDeadPool(t *testing.T) {
	together := &sync.WaitGroup{}
	together.Add(2)
	srv := &closer{drop: func(onConn, _ int) bool { return onConn == 2 }, conns: map[string]int{}, together: together, held: 2}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	// Two requests at once (the server answers neither before both have arrived) leave two
	// idle connections, each of which the server hangs up on at its next request.
	var wg sync.WaitGroup
	for _, b := range []string{"a", "b"} {
		wg.Go(func() {
			got, err := post(t, tr, ts.URL, b, true)
			assert.NoError(t, err)
			assert.Equal(t, "echo:"+b, got)
		})
	}
	wg.Wait()
	_, conns := srv.seen()
	require.Equal(t, 2, conns, "two connections in the pool")
	got, err := post(t, keepalive.Transport{Next: tr}, ts.URL, "c", false)
	require.NoError(t, err)
	assert.Equal(t, "echo:c", got)
	requests, conns := srv.seen()
	assert.Equal(t, 5, requests, "two answered, two lost on the dead connections, one answered")
	assert.Equal(t, 3, conns, "the answer came on a new connection")
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
