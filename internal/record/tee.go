package record

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/agentsim/agentsim/events"
)

// maxJSONBody bounds the bytes of a JSON response (non-streaming, or an error) the tee keeps
// to parse: 8 MiB. A larger body passes through whole; its usage is then estimated.
const maxJSONBody = 8 << 20

var doneMarker = []byte("[DONE]")

// tee is a response body that returns the server's bytes as they arrive and parses them on
// the way, once: an event stream line by line in the reader's own buffer (only a line cut by
// a read boundary is kept, until its end arrives), a JSON body into a copy it parses whole.
// An event stream's frames cost a scan each (see scanChunk), so parsing a read before it is
// returned holds its bytes for a fraction of a microsecond; the read that ends the response
// also releases its lane before the harness can see the end (see exchange.complete).
type tee struct {
	body    io.ReadCloser
	x       *exchange
	sse     bool    // an event stream, else a JSON body
	line    []byte  // an SSE line cut by a read boundary
	tooLong bool    // a line passed events.MaxStreamLineBytes: the rest is passed on unread
	jsonBuf []byte  // a JSON body so far, up to maxJSONBody
	jsonLen int64   // bytes of the JSON body seen
	wantLen int64   // its Content-Length, −1 when unknown
	up      *upBody // the body, when it is pumped (see pump) and has not been yet
	wrote   error   // how a pumped write to the harness failed
	pumped  bool    // the body was pumped: Read returns pumpErr
	pumpErr error
}

// Read implements io.Reader. A body Transport carried is pumped once its head is written
// (headFirst.WriteHeader), or else on the first Read, and Read then returns how the pump
// ended; any other body is read through p.
func (t *tee) Read(p []byte) (int, error) {
	if t.up != nil {
		t.pumpNow()
	}
	if t.pumped {
		return 0, t.pumpErr
	}
	n, err := t.body.Read(p)
	now := t.x.p.now()
	if n > 0 {
		t.x.byteAt(now)
		if t.parse(p[:n], now) {
			t.x.complete(now)
		}
	}
	if err != nil {
		t.finishJSON()
		t.x.readEnded(now, err)
	}
	return n, err
}

// Close implements io.Closer.
func (t *tee) Close() error { return t.body.Close() }

// pump carries the whole body to the harness as its head is written (headFirst.WriteHeader),
// before httputil.ReverseProxy's copy, which then has nothing left to copy and returns what
// pump did: each read of the server's connection (upBody.pump) is parsed, as Read parses
// one, and written and flushed to the harness at once, the read that ends the body with the
// body's last chunk (headFirst.writeFlush). It returns io.EOF at the body's end and how
// reading it failed otherwise, as Read would; a write to
// the harness that failed comes back as context.Canceled, which ReverseProxy does not log as
// a read error, and aborts the harness's connection on, as it does on its own write's error.
// A head that waited for the body's first bytes (headFirst) goes out with them, or, when
// what came with it held no data, before the pump waits for more.
func (t *tee) pump(b *upBody) error {
	err := b.pump(t.x.hw.flushHead, func(p []byte, last bool) error {
		now := t.x.p.now()
		t.x.byteAt(now)
		if t.parse(p, now) {
			t.x.complete(now)
		}
		if werr := t.x.hw.writeFlush(p, last); werr != nil {
			t.wrote = werr
			return werr
		}
		return nil
	})
	if t.wrote != nil {
		return context.Canceled
	}
	t.finishJSON()
	t.x.readEnded(t.x.p.now(), err)
	return err
}

// pumpNow pumps the body, once, keeping how it ended for Read.
func (t *tee) pumpNow() {
	if b := t.up; b != nil {
		t.up = nil
		t.pumped, t.pumpErr = true, t.pump(b)
	}
}

// parse parses b, the bytes of a read that arrived at t, and reports whether they end the
// response: an event stream's end (see exchange.sseLine), or a JSON body's last byte by its
// Content-Length.
func (t *tee) parse(b []byte, at float64) bool {
	if t.sse {
		t.parseSSE(b, at)
		return t.x.ended
	}
	t.jsonLen += int64(len(b))
	if room := maxJSONBody - len(t.jsonBuf); room > 0 {
		t.jsonBuf = append(t.jsonBuf, b[:min(room, len(b))]...)
	}
	if t.wantLen >= 0 && t.jsonLen >= t.wantLen && t.jsonLen-int64(len(b)) < t.wantLen {
		t.x.parseJSON(t.jsonBuf)
		return true
	}
	return false
}

// finishJSON parses a JSON body that ended without a Content-Length.
func (t *tee) finishJSON() {
	if !t.sse && t.wantLen < 0 {
		t.x.parseJSON(t.jsonBuf)
	}
}

// parseSSE splits b into lines, the first joined with the line cut by the previous read, and
// hands each to the exchange; it keeps the line b's end cuts. A line longer than
// events.MaxStreamLineBytes fails the request as events.ClassLineTooLong and ends the parsing:
// the proxy keeps no more of what a server sends than one line, and passes the bytes on as
// they come.
func (t *tee) parseSSE(b []byte, at float64) {
	for len(b) > 0 && !t.tooLong {
		i := bytes.IndexByte(b, '\n')
		n := i // the line's bytes in b
		if i < 0 {
			n = len(b)
		}
		if len(t.line)+n > events.MaxStreamLineBytes {
			t.tooLong, t.line = true, nil
			t.x.lineTooLong()
			return
		}
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
