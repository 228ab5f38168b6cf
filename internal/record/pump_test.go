package record_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/record"
)

// TestPumpOverTCP: over loopback TCP, where the proxy's own Transport waits on the server's
// socket with no buffer (upstream.go, upBody.pump), a stream of frames of every size, some
// larger than a pump buffer, one flush each or many at once, reaches the harness byte for
// byte with its trailer; the trace reads its reply; the next request reuses the connection;
// and a harness that leaves mid-stream ends the server's request.
func TestPumpOverTCP(t *testing.T) {
	var conns atomic.Int64
	left := make(chan struct{})
	var frames []string
	for i := range 40 {
		frames = append(frames, fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"}}]}\n\n", strings.Repeat("y", i*i*30)))
	}
	frames = append(frames, "data: [DONE]\n\n")
	want := strings.Join(frames, "")
	var reply strings.Builder
	for i := range 40 {
		reply.WriteString(strings.Repeat("y", i*i*30))
	}
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Trailer", "X-Served")
		if strings.Contains(r.URL.RawQuery, "leave") {
			_, _ = io.WriteString(w, frames[0])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			close(left)
			return
		}
		for i, f := range frames {
			_, _ = io.WriteString(w, f)
			if i%3 != 1 {
				w.(http.Flusher).Flush()
			}
		}
		w.Header().Set("X-Served", "whole")
	}))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	up.Start()
	defer up.Close()
	px, ended := recordOver(t, up)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	post := func(ctx context.Context, q string) *http.Response {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, px.URL+"/v1/chat/completions"+q,
			strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`))
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		return resp
	}
	for i := range 2 {
		resp := post(context.Background(), "")
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, want, string(b), "request %d", i)
		assert.Equal(t, "whole", resp.Trailer.Get("X-Served"), "request %d", i)
	}
	assert.Equal(t, int64(1), conns.Load(), "two requests in turn, one connection")

	ctx, cancel := context.WithCancel(context.Background())
	resp := post(ctx, "?leave")
	_, err := bufio.NewReader(resp.Body).ReadSlice('\n')
	require.NoError(t, err)
	cancel()
	resp.Body.Close()
	<-left // the server saw the request end

	client.CloseIdleConnections()
	_, reqs := readTrace(t, ended())
	require.Len(t, reqs, 3)
	for _, r := range reqs[:2] {
		assert.Empty(t, r.Error)
		assert.Equal(t, (reply.Len()+3)/4, r.OutputTokens, "the reply, read whole")
	}
	assert.True(t, strings.HasPrefix(reqs[2].Error, "cancelled: "), "error %q", reqs[2].Error)
}

// TestPumpEndsInOneWrite: over loopback TCP, the read that ends a pumped body goes to the
// harness in the same write as the body's last chunk (net/http's, when the handler returns),
// not in a write of its own before it; and the trace still records the reply whole.
func TestPumpEndsInOneWrite(t *testing.T) {
	const frame = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"
	sent := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, frame)
		w.(http.Flusher).Flush()
		<-sent // the harness has the first frame
		_, _ = io.WriteString(w, frame+"data: [DONE]\n\n")
	}))
	defer up.Close()
	px, ended := recordOver(t, up)
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`
	c, err := net.Dial("tcp", px.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: proxy\r\nContent-Type: application/json\r\n"+
		"Connection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	require.NoError(t, err)
	var got strings.Builder
	var reads []string
	rd := make([]byte, 64<<10)
	released := false
	for !strings.Contains(got.String(), "[DONE]") {
		n, err := c.Read(rd)
		got.Write(rd[:n])
		reads = append(reads, string(rd[:n]))
		if strings.Contains(got.String(), "hi") && !released {
			close(sent)
			released = true
		}
		require.NoError(t, err, "after %q", got.String())
	}
	last := reads[len(reads)-1]
	assert.Contains(t, last, "data: [DONE]")
	assert.True(t, strings.HasSuffix(last, "\r\n0\r\n\r\n"), "the body's end came apart from its last data: %q", last)
	c.Close()
	_, reqs := readTrace(t, ended())
	require.Len(t, reqs, 1)
	assert.Empty(t, reqs[0].Error)
	assert.Equal(t, 2, reqs[0].OutputTokens, "two frames of one token each")
}

// recordOver starts a recording proxy in front of up over loopback; ended stops it and
// returns the trace it wrote.
func recordOver(t *testing.T, up *httptest.Server) (px *httptest.Server, ended func() string) {
	u, _ := url.Parse(up.URL)
	buf := &syncBuffer{}
	p, err := record.New(record.Options{Upstream: u, Trace: buf})
	require.NoError(t, err)
	px = httptest.NewServer(p)
	return px, func() string {
		px.Close()
		require.NoError(t, p.Close())
		return buf.String()
	}
}
