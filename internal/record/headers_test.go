package record_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/memnet"
	"github.com/agentsim/agentsim/internal/record"
)

// TestHeadersBeforeFirstByte: the harness has the server's response head — its status and
// headers, the framing of its body among them — as soon as the server sends it, before the
// server's first body byte (a long prefill is not added to the harness's time to first
// byte), and the body then arrives whole in that framing: an event stream, and a JSON body
// of known length. A head flushed before the proxy has copied the server's headers (from
// ModifyResponse) goes out without them and fails it.
func TestHeadersBeforeFirstByte(t *testing.T) {
	const stream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n"
	const whole = `{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`
	for _, tc := range []struct {
		name, stream, contentType, body string
	}{
		{"event stream", "true", "text/event-stream", stream},
		{"JSON body", "false", "application/json", whole},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				upLn := memnet.Listen()
				up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body)
					w.Header().Set("Content-Type", tc.contentType)
					if tc.stream == "false" {
						w.Header().Set("Content-Length", strconv.Itoa(len(tc.body)))
					}
					w.WriteHeader(http.StatusOK)
					w.(http.Flusher).Flush() // the head, then the prefill
					<-release
					_, _ = io.WriteString(w, tc.body)
				})}
				go func() { _ = up.Serve(upLn) }()
				defer up.Close()
				client := proxyTo(t, upLn)
				resp := headWhileHeld(t, client, `{"model":"m","stream":`+tc.stream+`,"messages":[{"role":"user","content":"x"}]}`, release,
					"the harness had no response head while the server held its first body byte")
				defer resp.Body.Close()
				assert.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, tc.contentType, resp.Header.Get("Content-Type"))
				if tc.stream == "false" {
					assert.Equal(t, int64(len(tc.body)), resp.ContentLength, "the JSON body's length")
				}
				b, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				assert.Equal(t, tc.body, string(b))
			})
		})
	}
}

// TestHeadWithoutData: a head that arrived with the first bytes of the body waits to go out
// with them; when those bytes hold no data (a chunk's size line cut short), it goes out at
// once all the same, before the server sends the rest.
func TestHeadWithoutData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const frame = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n"
		release := make(chan struct{})
		upLn := memnet.Listen()
		go func() {
			c, err := upLn.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			br := bufio.NewReader(c)
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
				strconv.FormatInt(int64(len(frame)), 16)[:1]) // the head, and half a size line
			<-release
			_, _ = io.WriteString(c, strconv.FormatInt(int64(len(frame)), 16)[1:]+"\r\n"+frame+"\r\n0\r\n\r\n")
		}()
		client := proxyTo(t, upLn)
		resp := headWhileHeld(t, client, `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`, release,
			"the harness had no response head while the server held its first data byte")
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, frame, string(b))
	})
}

// proxyTo serves a recording proxy to the server listening on upLn, reached through the
// proxy's own Transport, and returns a client of it; all of it ends with the test.
func proxyTo(t *testing.T, upLn *memnet.Listener) *http.Client {
	u, _ := url.Parse("http://upstream")
	p, err := record.New(record.Options{Upstream: u, Trace: io.Discard, Transport: ownTransport(upLn.Client().Transport)})
	require.NoError(t, err)
	pxLn := memnet.Listen()
	px := &http.Server{Handler: p}
	go func() { _ = px.Serve(pxLn) }()
	client := pxLn.Client()
	t.Cleanup(func() { client.CloseIdleConnections(); _ = px.Close(); _ = p.Close() })
	return client
}

// headWhileHeld posts a chat completion of body through client and returns its response, which
// must have come while the server holds the rest of it until release is closed: once every
// goroutine of the bubble blocks, the head is there, or the test fails with missing.
func headWhileHeld(t *testing.T, client *http.Client, body string, release chan struct{}, missing string) *http.Response {
	got := make(chan *http.Response, 1)
	go func() {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://proxy/v1/chat/completions", strings.NewReader(body))
		resp, err := client.Do(req)
		if err != nil {
			t.Error(err)
			close(got)
			return
		}
		got <- resp
	}()
	synctest.Wait() // everything blocks: the server on what it holds
	var resp *http.Response
	select {
	case resp = <-got:
	default:
	}
	close(release)
	if resp == nil {
		if resp = <-got; resp != nil {
			resp.Body.Close()
		}
		t.Fatal(missing)
	}
	return resp
}
