package agents

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
)

// bodyTransport answers every request with 200 and the same event-stream body.
type bodyTransport []byte

func (b bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(b)), Request: req}, nil
}

// readAll reads a stream with next until its error: the data lines and the error's text.
func readAll(next func() ([]byte, error)) (lines []string, end string) {
	for {
		line, err := next()
		if err != nil {
			return lines, err.Error()
		}
		lines = append(lines, string(line))
		if len(lines) > 1<<12 {
			return lines, "too many lines"
		}
	}
}

// sseSeeds are stream bodies covering each rule of go-openai's stream reading.
var sseSeeds = []string{
	"data: {\"a\":1}\n\ndata: [DONE]\n\n",
	"data:{\"a\":1}\r\n\r\ndata:\t[DONE]\n",
	": keep-alive\n\nevent: x\ndata: {}\n\n  data: [DONE]  \n",
	"data: {\"a\":1}\n\ndata: {\"a\":2}",
	"data: {\"error\":{\"message\":\"boom\",\"code\":503}}\n\ndata: [DONE]\n\n",
	"data: {\"error\":{\"message\":\"boom\"}}",
	"data: {\"error\":\n{\"message\":\"x\"}}\n",
	"{\"error\":{\"message\":\"not sse\",\"type\":\"t\"}}\n",
	"{\"error\":null}\n",
	"null\n",
	"\n\n\n\n\n\n",
	"data: " + strings.Repeat("x", 5000) + "\n\ndata: [DONE]\n",
	"data: [DONE]x\n\ndata: [DONE]\n",
	"data \n\ndata:\n\n",
	"\xc2\x85data: {}\xc2\x85\n",
}

// FuzzSSEReader checks that sseReader reads any body as go-openai's stream reader does: the
// same data lines, then the same error.
func FuzzSSEReader(f *testing.F) {
	for _, s := range sseSeeds {
		f.Add([]byte(s))
	}
	const limit = 3
	f.Fuzz(func(t *testing.T, body []byte) {
		cfg := openai.DefaultConfig("")
		cfg.BaseURL = "http://sim/v1"
		cfg.EmptyMessagesLimit = limit
		cfg.HTTPClient = &http.Client{Transport: bodyTransport(body)}
		st, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(context.Background(),
			openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}})
		if err != nil {
			t.Fatalf("go-openai: %v", err)
		}
		defer st.Close()
		wantLines, wantEnd := readAll(st.RecvRaw)
		r := newSSEReader(bytes.NewReader(body), limit)
		defer r.release()
		gotLines, gotEnd := readAll(r.next)
		assert.Equal(t, wantLines, gotLines, "data lines of %q", body)
		assert.Equal(t, wantEnd, gotEnd, "end of %q", body)
	})
}
