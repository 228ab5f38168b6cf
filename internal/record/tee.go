package record

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/agentsim/agentsim/trace"
)

// maxJSONBody bounds the bytes of a JSON response (non-streaming, or an error) the tee keeps
// to parse: 8 MiB. A larger body passes through whole; its usage is then estimated.
const maxJSONBody = 8 << 20

var doneMarker = []byte("[DONE]")

// tee is a response body that returns the server's bytes as they arrive and keeps a copy to
// parse. The bytes of one read are parsed at the start of the next, while the proxy waits for
// the server, so parsing never delays them — except the read that ends the response, parsed
// before it is returned (see exchange.complete).
type tee struct {
	body     io.ReadCloser
	x        *exchange
	pending  []byte  // the last read's bytes, not parsed yet
	pendingS float64 // when they arrived
	sse      bool    // an event stream, else a JSON body
	line     []byte  // an SSE line cut by a read boundary
	jsonBuf  []byte  // a JSON body so far, up to maxJSONBody
	jsonLen  int64   // bytes of the JSON body seen
	wantLen  int64   // its Content-Length, −1 when unknown
}

// Read implements io.Reader.
func (t *tee) Read(p []byte) (int, error) {
	t.parse()
	n, err := t.body.Read(p)
	now := t.x.p.now()
	if n > 0 {
		t.x.byteAt(now)
		t.pending = append(t.pending, p[:n]...)
		t.pendingS = now
		if t.ends(p[:n]) {
			t.parse()
			t.x.complete(now)
		}
	}
	if err != nil {
		t.parse()
		t.finishJSON()
		t.x.readEnded(now, err)
	}
	return n, err
}

// Close implements io.Closer.
func (t *tee) Close() error {
	t.parse()
	return t.body.Close()
}

// ends reports whether b, the bytes of the latest read, end the response.
func (t *tee) ends(b []byte) bool {
	if t.sse && t.x.api == trace.APIResponses {
		return endsResponses(b) || bytes.Contains(b, doneMarker)
	}
	if t.sse {
		return bytes.Contains(b, doneMarker)
	}
	return t.wantLen >= 0 && t.jsonLen+int64(len(t.pending)) >= t.wantLen
}

// parse parses the pending bytes.
func (t *tee) parse() {
	if len(t.pending) == 0 {
		return
	}
	if t.sse {
		t.parseSSE(t.pending, t.pendingS)
	} else {
		t.jsonLen += int64(len(t.pending))
		if room := maxJSONBody - len(t.jsonBuf); room > 0 {
			t.jsonBuf = append(t.jsonBuf, t.pending[:min(room, len(t.pending))]...)
		}
		if t.wantLen >= 0 && t.jsonLen >= t.wantLen {
			t.x.parseJSON(t.jsonBuf)
		}
	}
	t.pending = t.pending[:0]
}

// finishJSON parses a JSON body that ended without a Content-Length.
func (t *tee) finishJSON() {
	if !t.sse && t.wantLen < 0 {
		t.x.parseJSON(t.jsonBuf)
	}
}

// parseSSE splits b into lines, joined with the line cut by the previous read, and hands each
// data line to the exchange.
func (t *tee) parseSSE(b []byte, at float64) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			t.line = append(t.line, b...)
			return
		}
		line := b[:i]
		if len(t.line) > 0 {
			t.line = append(t.line, line...)
			line = t.line
		}
		t.x.sseLine(bytes.TrimSuffix(line, []byte{'\r'}), at)
		t.line = t.line[:0]
		b = b[i+1:]
	}
}

// usage is an OpenAI usage object.
type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// apiError is an OpenAI error object, in an error body or an SSE error frame.
type apiError struct {
	Message string `json:"message"`
}

// streamChunk is what the proxy reads of one SSE chunk.
type streamChunk struct {
	Choices []struct {
		Delta struct {
			Content          string     `json:"content"`
			ReasoningContent string     `json:"reasoning_content"`
			Reasoning        string     `json:"reasoning"`
			ToolCalls        []toolCall `json:"tool_calls"`
		} `json:"delta"`
		Text         string  `json:"text"` // legacy completions
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// fullResponse is what the proxy reads of a JSON response.
type fullResponse struct {
	Choices []struct {
		Message struct {
			Content          json.RawMessage `json:"content"`
			ReasoningContent string          `json:"reasoning_content"`
			ToolCalls        []toolCall      `json:"tool_calls"`
		} `json:"message"`
		Text         string `json:"text"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// errorMessage reads an error field: an object with a message, or a string.
func errorMessage(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] == 'n' {
		return ""
	}
	var e apiError
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return e.Message
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
