//lint:file-ignore SA1019 max_tokens is the field the inference servers agentsim targets read.

package record_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/memnet"
	"github.com/agentsim/agentsim/internal/record"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
	"github.com/agentsim/agentsim/trace"
)

// proxied is a recording proxy in front of a simulator, both on the in-memory network.
type proxied struct {
	sim    *simtest.Server
	proxy  *record.Proxy
	srv    *http.Server
	client *http.Client
	buf    *syncBuffer
	closed chan struct{}
}

// syncBuffer is a bytes.Buffer safe for the proxy's writer and the test's reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startProxy serves a Proxy of sim on the in-memory network; opts' Upstream, Trace, Clock and
// Transport are filled in. It stops when the test ends.
func startProxy(t *testing.T, sim *simtest.Server, opts record.Options) *proxied {
	t.Helper()
	up, err := url.Parse(sim.URL)
	require.NoError(t, err)
	buf := &syncBuffer{}
	opts.Upstream, opts.Trace, opts.Clock, opts.Transport = up, buf, sim.Clock(), ownTransport(sim.Client().Transport)
	p, err := record.New(opts)
	require.NoError(t, err)
	ln := memnet.Listen()
	srv := &http.Server{Handler: p}
	pr := &proxied{sim: sim, proxy: p, srv: srv, client: ln.Client(), buf: buf, closed: make(chan struct{})}
	go func() { _ = srv.Serve(ln); close(pr.closed) }()
	t.Cleanup(func() { pr.stop(t) })
	return pr
}

// stop ends the proxy's server, then the proxy; safe to call twice.
func (pr *proxied) stop(t *testing.T) {
	_ = pr.srv.Close()
	<-pr.closed
	pr.client.CloseIdleConnections()
	require.NoError(t, pr.proxy.Close())
}

// openai returns a go-openai client of the proxy.
func (pr *proxied) openai() *openai.Client {
	cfg := openai.DefaultConfig("sk-test")
	cfg.BaseURL = "http://proxy/v1"
	cfg.HTTPClient = pr.client
	return openai.NewClientWithConfig(cfg)
}

// readTrace parses the trace the proxy wrote so far.
func readTrace(t *testing.T, s string) (trace.Header, []trace.Request) {
	t.Helper()
	rd, err := trace.NewReader(strings.NewReader(s), "trace.jsonl")
	require.NoError(t, err)
	var out []trace.Request
	for {
		r, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return rd.Header(), out
		}
		require.NoError(t, err)
		out = append(out, r)
	}
}

// chat streams one request and returns the reply's text.
func chat(t *testing.T, c *openai.Client, msgs []openai.ChatCompletionMessage, usage bool) string {
	t.Helper()
	req := openai.ChatCompletionRequest{Model: "deepseek-v4-flash", Messages: msgs, Stream: true, MaxTokens: 40}
	if usage {
		req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	st, err := c.CreateChatCompletionStream(context.Background(), req)
	require.NoError(t, err)
	defer st.Close()
	var b strings.Builder
	for {
		resp, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return b.String()
		}
		require.NoError(t, err)
		for _, ch := range resp.Choices {
			b.WriteString(ch.Delta.Content)
		}
	}
}

func newSim(t *testing.T) *simtest.Server {
	clk, err := clock.New(1)
	require.NoError(t, err)
	return simtest.NewServer(t, simserver.Options{Clock: clk})
}

// TestThreeInterleavedConversations drives three conversations turn by turn, interleaved,
// through the proxy with go-openai and no session header: the trace must find three sessions
// of three requests each, every later request extending the one before.
func TestThreeInterleavedConversations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr := startProxy(t, newSim(t), record.Options{})
		c := pr.openai()
		convs := make([][]openai.ChatCompletionMessage, 3)
		for i := range convs {
			convs[i] = []openai.ChatCompletionMessage{
				{Role: openai.ChatMessageRoleSystem, Content: "You are a careful agent."}, // shared by all three
				{Role: openai.ChatMessageRoleUser, Content: []string{"task A", "task B", "task C"}[i]},
			}
		}
		for turn := 0; turn < 3; turn++ {
			for i := range convs {
				reply := chat(t, c, convs[i], i == 0)
				convs[i] = append(convs[i], openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: reply},
					openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "go on"})
			}
		}
		// Each line is flushed as its request's handler ends, a hair after the harness read
		// [DONE]: once the handlers are idle, a killed proxy has lost nothing.
		synctest.Wait()
		_, before := readTrace(t, pr.buf.String())
		assert.Len(t, before, 9, "lines written before the proxy stops")
		pr.stop(t)
		h, reqs := readTrace(t, pr.buf.String())
		assert.Equal(t, "record:http://sim", h.Source)
		require.Len(t, reqs, 9)
		bySession := map[string][]trace.Request{}
		for _, r := range reqs {
			bySession[r.Session] = append(bySession[r.Session], r)
		}
		require.Len(t, bySession, 3, "sessions: %v", bySession)
		for s, rs := range bySession {
			require.Len(t, rs, 3, "session %s", s)
			for k, r := range rs {
				assert.Equal(t, k, r.Seq)
				assert.Equal(t, 200, r.Status)
				assert.NotEmpty(t, r.FinishReason)
				assert.Positive(t, r.E2ES)
				assert.Positive(t, r.TTFTS)
				if k == 0 {
					assert.Nil(t, r.Extends, "session %s seq 0", s)
					continue
				}
				require.NotNil(t, r.Extends, "session %s seq %d", s, k)
				assert.Equal(t, k-1, *r.Extends)
				assert.Positive(t, r.NewTokens)
			}
		}
		// The first conversation asked for usage: its counts are the server's.
		estimated := 0
		for _, r := range reqs {
			if r.TokensEstimated {
				estimated++
			}
		}
		assert.Equal(t, 6, estimated, "two conversations without usage are estimated")
	})
}

// ownTransport is the proxy's default transport, record.Transport, over rt, a test server's
// *http.Transport: the tests reach their servers the way the proxy does by default.
func ownTransport(rt http.RoundTripper) http.RoundTripper {
	return record.NewTransport(rt.(*http.Transport))
}
