//lint:file-ignore SA1019 max_tokens is the field the inference servers agentsim targets read.

package record_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/memnet"
	"github.com/agentsim/agentsim/internal/record"
)

// TestPassThrough checks that what the harness reads through the proxy is what it reads
// from the server: /v1/models, a non-streaming completion's status, and the server's errors
// with their status and body; only completions are recorded.
func TestPassThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr := startProxy(t, newSim(t), record.Options{})
		get := func(c *http.Client, base, method, path, body string) (int, string, http.Header) {
			req, err := http.NewRequest(method, base+path, strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			return resp.StatusCode, string(b), resp.Header
		}
		cases := []struct {
			name, method, path, body string
		}{
			// The model list, which harnesses read first.
			{"models", http.MethodGet, "/v1/models", ""},
			// A model the server does not serve: 404 and its error body.
			{"unknown model", http.MethodPost, "/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"x"}]}`},
			// A body that is not JSON: 400 and its error body.
			{"malformed body", http.MethodPost, "/v1/chat/completions", `{"model":`},
			// The health check.
			{"health", http.MethodGet, "/health", ""},
		}
		for _, tc := range cases {
			ds, db, _ := get(pr.sim.Client(), pr.sim.URL, tc.method, tc.path, tc.body)
			ps, pb, _ := get(pr.client, "http://proxy", tc.method, tc.path, tc.body)
			assert.Equal(t, ds, ps, "%s: status direct vs proxied", tc.name)
			assert.Equal(t, db, pb, "%s: body direct vs proxied", tc.name)
		}
		// A non-streaming completion: a whole JSON body with its usage.
		resp, err := pr.openai().CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model: "deepseek-v4-flash", MaxTokens: 20, Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hello"}}})
		require.NoError(t, err)
		require.NotEmpty(t, resp.Choices)
		pr.stop(t)
		_, reqs := readTrace(t, pr.buf.String())
		require.Len(t, reqs, 3, "two failed completions and one ok; models and health are not recorded")
		assert.Equal(t, 404, reqs[0].Status)
		assert.Contains(t, reqs[0].Error, "http_status: HTTP 404")
		assert.Equal(t, 400, reqs[1].Status)
		ok := reqs[2]
		assert.Equal(t, 200, ok.Status)
		assert.Empty(t, ok.Error)
		assert.False(t, ok.TokensEstimated)
		assert.Equal(t, resp.Usage.PromptTokens, ok.PromptTokens)
		assert.Equal(t, resp.Usage.CompletionTokens, ok.OutputTokens)
		assert.Zero(t, ok.TTFTS, "a whole JSON body has no first token")
	})
}

// TestUpstreamDiesMidStream cuts the server's connection after a few chunks: the harness
// sees the same failure through the proxy as directly (go-openai reads an unexpected EOF),
// and the trace records it.
func TestUpstreamDiesMidStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dying := dyingServer(t)
		up, _ := url.Parse("http://dying")
		buf := &syncBuffer{}
		p, err := record.New(record.Options{Upstream: up, Trace: buf, Transport: ownTransport(dying.Client().Transport)})
		require.NoError(t, err)
		ln := memnet.Listen()
		srv := &http.Server{Handler: p}
		go func() { _ = srv.Serve(ln) }()
		read := func(c *http.Client, base string) (string, error) {
			cfg := openai.DefaultConfig("k")
			cfg.BaseURL, cfg.HTTPClient = base+"/v1", c
			st, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(context.Background(),
				openai.ChatCompletionRequest{Model: "m", Stream: true, Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}})
			if err != nil {
				return "", err
			}
			defer st.Close()
			var got strings.Builder
			for {
				r, err := st.Recv()
				if err != nil {
					return got.String(), err
				}
				got.WriteString(r.Choices[0].Delta.Content)
			}
		}
		directText, directErr := read(dying.Client(), "http://dying")
		proxyText, proxyErr := read(ln.Client(), "http://proxy")
		assert.Equal(t, "abc", directText)
		assert.Equal(t, directText, proxyText, "the same bytes arrive before the failure")
		require.Error(t, directErr)
		require.Error(t, proxyErr)
		assert.False(t, errors.Is(directErr, io.EOF), "not a clean end: %v", directErr)
		assert.Equal(t, errors.Is(directErr, io.ErrUnexpectedEOF), errors.Is(proxyErr, io.ErrUnexpectedEOF),
			"direct %v, proxied %v", directErr, proxyErr)
		_ = srv.Close()
		require.NoError(t, p.Close())
		_, reqs := readTrace(t, buf.String())
		require.Len(t, reqs, 1)
		assert.Equal(t, 200, reqs[0].Status)
		assert.True(t, strings.HasPrefix(reqs[0].Error, "reset: ") || strings.HasPrefix(reqs[0].Error, "truncated: "), "error %q", reqs[0].Error)
		assert.Positive(t, reqs[0].TTFTS)
		t.Logf("direct: %v; proxied: %v; trace: %s", directErr, proxyErr, reqs[0].Error)
	})
}

// dyingServer streams three content chunks and then drops the connection without ending
// the chunked body.
func dyingServer(t *testing.T) *memnet.Listener {
	ln := memnet.Listen()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, s := range []string{"a", "b", "c"} {
			time.Sleep(10 * time.Millisecond)
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", s)
			w.(http.Flusher).Flush()
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); ln.Close() })
	return ln
}

var _ net.Listener = (*memnet.Listener)(nil)
