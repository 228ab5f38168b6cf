package record_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/memnet"
	"github.com/agentsim/agentsim/internal/record"
)

// upstreamFixture is a server and a proxy in front of it over record.Transport, both on the
// in-memory network; conns counts the connections the server accepted.
type upstreamFixture struct {
	up     *http.Server
	proxy  *record.Proxy
	client *http.Client
	conns  atomic.Int64
}

// newUpstreamFixture serves h behind a proxy until the test ends; the server closes a
// connection idle for a minute.
func newUpstreamFixture(t *testing.T, h http.HandlerFunc) *upstreamFixture {
	f := &upstreamFixture{}
	upLn := memnet.Listen()
	f.up = &http.Server{Handler: h, IdleTimeout: time.Minute, ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			f.conns.Add(1)
		}
	}}
	go func() { _ = f.up.Serve(upLn) }()
	u, _ := url.Parse("http://upstream")
	tr := record.NewTransport(upLn.Client().Transport.(*http.Transport))
	p, err := record.New(record.Options{Upstream: u, Trace: io.Discard, Transport: tr})
	require.NoError(t, err)
	f.proxy = p
	pxLn := memnet.Listen()
	px := &http.Server{Handler: p}
	go func() { _ = px.Serve(pxLn) }()
	f.client = pxLn.Client()
	t.Cleanup(func() {
		f.client.CloseIdleConnections()
		_ = px.Close()
		_ = p.Close()
		tr.CloseIdleConnections()
		_ = f.up.Close()
	})
	return f
}

// post sends a streamed chat request with body's text through the proxy.
func (f *upstreamFixture) post(ctx context.Context, text string) (*http.Response, error) {
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"` + text + `"}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://proxy/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	return f.client.Do(req)
}

const twoFrames = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n"

// streamed answers with twoFrames.
func streamed(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, twoFrames)
}

// TestTransportReusesConnections: one request after another goes over the same connection,
// each stream arriving whole; a server that closes an idle connection costs the next request
// nothing but a new one.
func TestTransportReusesConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newUpstreamFixture(t, streamed)
		for i := range 3 {
			resp, err := f.post(context.Background(), "x")
			require.NoError(t, err)
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			assert.Equal(t, twoFrames, string(b), "request %d", i)
		}
		assert.Equal(t, int64(1), f.conns.Load(), "three requests in turn, one connection")
		time.Sleep(2 * time.Minute) // the server closes the idle connection
		synctest.Wait()
		resp, err := f.post(context.Background(), "x")
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, twoFrames, string(b), "after the server closed the idle connection")
		assert.Equal(t, int64(2), f.conns.Load())
	})
}

// TestTransportHarnessLeaves: a harness that leaves mid-stream ends the server's request (its
// connection is closed, not read to its end), and the next request gets a connection of its
// own.
func TestTransportHarnessLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		left := make(chan struct{})
		f := newUpstreamFixture(t, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			if _, err := io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				close(left)
			case <-time.After(time.Hour):
				_, _ = io.WriteString(w, "data: [DONE]\n\n")
			}
		})
		ctx, cancel := context.WithCancel(context.Background())
		resp, err := f.post(ctx, "x")
		require.NoError(t, err)
		_, err = bufio.NewReader(resp.Body).ReadSlice('\n')
		require.NoError(t, err)
		cancel()
		resp.Body.Close()
		<-left // the server saw the request end, long before its hour
		synctest.Wait()
		resp, err = f.post(context.Background(), "x")
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Contains(t, string(b), "[DONE]")
		assert.Equal(t, int64(2), f.conns.Load(), "the left stream's connection is not reused")
	})
}

// TestTransportEarlyAnswer: a server that answers before it has read the request's body (a
// 413 for a body too large) is heard, though the body is still being written.
func TestTransportEarlyAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newUpstreamFixture(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			_, _ = io.WriteString(w, `{"error":{"message":"too large"}}`)
		})
		resp, err := f.post(context.Background(), strings.Repeat("x", 4<<20))
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
		assert.Equal(t, `{"error":{"message":"too large"}}`, string(b))
		time.Sleep(time.Second) // the server lingers on the connection it closes
		synctest.Wait()
	})
}
