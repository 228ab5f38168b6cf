package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"hash"
	"io"
	"net/http"
	"sync"
)

// DefaultMaxBody is the largest request body, in bytes, the proxy parses (64 MiB). A larger
// body still reaches the server whole and unchanged; it is recorded without its messages.
const DefaultMaxBody = 64 << 20

// chatRequest is what the proxy reads of a chat or legacy completions request body.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []message       `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"` // legacy completions
	Stream              bool            `json:"stream"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	ReasoningEffort     string          `json:"reasoning_effort"`
	Tools               json.RawMessage `json:"tools"`
	User                string          `json:"user"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// message is one chat message, as far as its hash goes.
type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []toolCall      `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
}

// toolCall is a tool call of an assistant message.
type toolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// parsedBody is a request body read by the proxy.
type parsedBody struct {
	raw []byte // the body as the harness sent it, or its first MaxBody bytes when larger
	// whole is set when raw is the whole body and it parsed as JSON into req.
	whole bool
	req   chatRequest
	// resp is a Responses request's own fields; req holds its messages, output cap and
	// reasoning effort as a chat request's (readResponses).
	resp responsesFields
	size int64 // bytes read so far (the whole body when whole)
	// messages is the number of the request's messages, once forget has let them go.
	messages int
	// sent is the body as it goes on to the server (setBody); nil when it goes unparsed.
	sent *sentBody
}

// forget lets go of what the request's record no longer needs once the request is placed in
// its session — its messages and tool definitions, hashed and counted by then, and the body's
// bytes unless keepText and the body was parsed (the content file takes it at the end) — so that a stream that
// stays open for minutes holds its record, not its request.
func (b *parsedBody) forget(keepText bool) {
	b.messages = len(b.req.Messages)
	b.req.Messages, b.req.Tools, b.req.Prompt = nil, nil, nil
	if !keepText || !b.whole {
		b.raw, b.resp.Input, b.resp.Instructions = nil, nil, nil
	}
}

// sentBody is a request body read whole, as it goes on to the server. Until the server's
// answer begins (release), again gives it anew, so that a request lost to the kept-alive race
// upstream is sent again from it (internal/keepalive); from then on it lets go of its
// bytes once they have been read, so an open stream does not hold its request. A transport
// may read it on one goroutine while the proxy releases it on another, so it is guarded.
type sentBody struct {
	mu      sync.Mutex
	b, full []byte
}

// Read implements io.Reader.
func (s *sentBody) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.b) == 0 {
		s.b = nil
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

// Close implements io.Closer.
func (*sentBody) Close() error { return nil }

// again returns the body from its start while it is held; it is the request's GetBody.
func (s *sentBody) again() (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full == nil {
		return nil, errBodyReleased
	}
	return &sentBody{b: s.full}, nil
}

// release ends again: the server has begun to answer, or the request has failed, and it
// will not be sent again.
func (s *sentBody) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.full = nil
}

// errBodyReleased is what again returns once the server has begun to answer.
var errBodyReleased = errors.New("request body already sent and released")

// readBody reads r's body up to limit bytes and replaces it with one that yields the same
// bytes: the part read, then the rest. It parses the body when it fits.
func readBody(r *http.Request, limit int64) (*parsedBody, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return &parsedBody{}, nil
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, err
	}
	b := &parsedBody{raw: raw, size: int64(len(raw))}
	if int64(len(raw)) > limit {
		// Too large to parse: pass the read part and the rest on, unchanged.
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(raw), r.Body), r.Body}
		return b, nil
	}
	r.Body.Close()
	b.whole = json.Unmarshal(raw, &b.req) == nil
	b.setBody(r, raw)
	return b, nil
}

// setBody makes raw r's body, and its GetBody until b.releaseSent.
func (b *parsedBody) setBody(r *http.Request, raw []byte) {
	b.sent = &sentBody{b: raw, full: raw}
	r.Body, r.GetBody = b.sent, b.sent.again
	r.ContentLength = int64(len(raw))
}

// releaseSent lets go of the body sent to the server once it has been read: called when the
// server's answer begins or the request fails, after which it is never sent again.
func (b *parsedBody) releaseSent() {
	if b.sent != nil {
		b.sent.release()
	}
}

// injectUsage rewrites a streaming request's body to ask for the usage frame
// (stream_options.include_usage), keeping every other field as it was. It reports whether it
// changed anything.
func (b *parsedBody) injectUsage(r *http.Request) bool {
	if !b.whole || !b.req.Stream || (b.req.StreamOptions != nil && b.req.StreamOptions.IncludeUsage) {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(b.raw, &fields) != nil {
		return false
	}
	opts := map[string]json.RawMessage{}
	_ = json.Unmarshal(fields["stream_options"], &opts) // null or absent: start afresh
	opts["include_usage"] = json.RawMessage("true")
	fields["stream_options"], _ = json.Marshal(opts)
	raw, err := json.Marshal(fields)
	if err != nil {
		return false
	}
	b.raw = raw
	b.setBody(r, raw)
	r.Header.Del("Content-Length")
	return true
}

// toolsBytes is the size of the request's tool definitions as compact JSON, the basis of
// their token estimate; 0 when it offers none (or its body was not parsed).
func (b *parsedBody) toolsBytes() int {
	t := bytes.TrimSpace(b.req.Tools)
	if !b.whole || len(t) == 0 || t[0] != '[' || bytes.Equal(t, []byte("[]")) {
		return 0
	}
	var c bytes.Buffer
	if json.Compact(&c, t) != nil {
		return len(t)
	}
	return c.Len()
}

// toolResults are the tool messages of a request: the results of earlier tool calls.
type toolResults struct {
	ids  map[string]bool // their tool_call_ids
	last int             // the index of the last tool message, −1 when none
}

// toolResults returns the request's tool messages.
func (b *parsedBody) toolResults() toolResults {
	r := toolResults{last: -1}
	for i, m := range b.req.Messages {
		if m.Role != "tool" {
			continue
		}
		r.last = i
		if m.ToolCallID != "" {
			if r.ids == nil {
				r.ids = map[string]bool{}
			}
			r.ids[m.ToolCallID] = true
		}
	}
	return r
}

// answer reports whether the request carries the results of e's tool calls: a tool message
// naming one of its call ids, or, when its calls had no ids, a tool message after its reply.
func (r toolResults) answer(e *ended) bool {
	if len(e.callIDs) == 0 {
		return r.last >= e.msgs
	}
	for _, id := range e.callIDs {
		if r.ids[id] {
			return true
		}
	}
	return false
}

// maxTokens is the output cap the request asked for: max_tokens, max_completion_tokens or
// max_output_tokens.
func (b *parsedBody) maxTokens() int { return max(b.req.MaxTokens, b.req.MaxCompletionTokens) }

// keys returns the prefix keys of the request's conversation (keys[i] covers messages 0…i)
// and its hash, ready to add the reply; h.bytes counts the text hashed, the basis of a token
// estimate. A legacy completion's prompt is one message. from, when not nil, is the hash of
// the conversation the request continues (previous_response_id): its key comes first.
func (b *parsedBody) keys(from *convHash) ([]key, *convHash) {
	h := from
	if h == nil {
		h = &convHash{h: sha256.New()}
	}
	if !b.whole {
		h.bytes += int(b.size)
		return nil, h
	}
	var keys []key
	if from != nil {
		var k key
		h.h.Sum(k[:0])
		keys = append(keys, k)
	}
	for _, m := range b.req.Messages {
		keys = append(keys, h.add(m.Role, contentText(m.Content), m.ToolCalls, m.ToolCallID))
	}
	if len(b.req.Messages) == 0 && len(b.req.Prompt) > 0 {
		keys = append(keys, h.add("prompt", contentText(b.req.Prompt), nil, ""))
	}
	return keys, h
}

// convHash hashes a conversation one message at a time.
type convHash struct {
	h     hash.Hash
	bytes int // text bytes hashed
}

// add hashes one message and returns the key of the conversation so far.
func (c *convHash) add(role, text string, calls []toolCall, callID string) key {
	w := func(s string) {
		c.h.Write([]byte(s))
		c.h.Write([]byte{0})
		c.bytes += len(s)
	}
	w(role)
	w(text)
	for _, tc := range calls {
		w(tc.Function.Name)
		w(tc.Function.Arguments)
	}
	w(callID)
	c.h.Write([]byte{0xff}) // end of message
	var k key
	c.h.Sum(k[:0])
	return k
}

// contentText is a message content's text: the string, the text parts of an array of parts
// joined, or "" for null.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] == 'n' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b bytes.Buffer
		for _, p := range parts {
			b.WriteString(p.Text)
			b.WriteString(p.ImageURL.URL)
		}
		return b.String()
	}
	return string(raw)
}
