package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentsim/agentsim/internal/keepalive"
)

// bodyFieldsKey carries extra JSON body fields in a request's context.
type bodyFieldsKey struct{}

// withBodyFields returns ctx carrying fields to add to the JSON body of the request sent
// under it — fields go-openai's request type has no place for, like ignore_eos.
func withBodyFields(ctx context.Context, fields map[string]any) context.Context {
	return context.WithValue(ctx, bodyFieldsKey{}, fields)
}

// Stamp adds headers to a request an agent sends: id and sent are the request's id and send
// time (sentRequest; zero for a request sent outside an agent's attempt). h is the request's
// own copy of its headers, whose values may be shared: set keys, do not change values.
type Stamp func(h http.Header, id string, sent time.Time)

// requestTransport adds the fields carried by a POST's context to its JSON object body, sends
// every POST body as a onceBody, and adds the stamp's headers to every request. It sends one
// shallow copy of the request, with its own header map when stamped: the request stays
// referenced by its response for as long as the stream lasts, and a deep Clone, or a copy per
// change, would be kept per stream. Through net/http's Transport, a POST lost to the
// kept-alive race (internal/keepalive: a reused connection the server closed before
// answering) is sent again, as the server never saw it begin (internal/keepalive).
type requestTransport struct {
	next  http.RoundTripper
	stamp Stamp // nil: none
}

// RoundTrip sends req, its body extended with the context's fields if it carries any and let
// go of once sent, its headers stamped.
func (t requestTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	fields, _ := req.Context().Value(bodyFieldsKey{}).(map[string]any)
	rewrap := req.Body != nil && req.Body != http.NoBody && req.Method == http.MethodPost
	if !rewrap && t.stamp == nil {
		return t.next.RoundTrip(req)
	}
	var once *onceBody
	var wire *wireBody
	var wireLen int64
	var attempt *keepalive.Attempt
	ctx := req.Context()
	if rewrap {
		// Every POST body is sent as a onceBody, extended or not, or, when the request
		// carries a wire plan, as a wireBody that writes the conversation as it is read
		// (wirebody.go): go-openai's own body keeps its bytes in GetBody for as long as the
		// request is referenced, which is the whole stream, and an agent's body is its
		// whole conversation (~0.5 MB for coding-agent).
		body, err := readBody(req)
		req.Body.Close() // a RoundTripper must close the body, even on error
		if err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		if len(fields) > 0 {
			if body, err = mergeFields(body, fields); err != nil {
				return nil, err
			}
		}
		var onReused func()
		if plan, ok := req.Context().Value(wirePlanKey{}).(*wirePlan); ok {
			// A conversation written as it is read makes itself again from its plan: a
			// resend needs nothing held.
			if wire, wireLen, err = newWireBody(plan, body); err != nil {
				return nil, err
			}
		} else {
			once = &onceBody{full: body, b: body}
			onReused = once.hold
		}
		if _, pooled := t.next.(*http.Transport); pooled {
			// Only net/http's pool reuses connections; an in-process transport (the embedded
			// simulator, internal/inproc) would only carry the watch for the whole stream.
			ctx, attempt = keepalive.Watch(ctx, onReused)
		}
	}
	out := req.WithContext(ctx) // the original must stay as it was
	switch {
	case wire != nil:
		out.ContentLength, out.Body, out.GetBody = wireLen, wire, wire.again
	case once != nil:
		out.ContentLength = int64(len(once.full))
		out.Body, out.GetBody = once, once.again
	}
	if t.stamp != nil {
		h := make(http.Header, len(req.Header)+2)
		for k, v := range req.Header {
			h[k] = v
		}
		id, sent := sentRequest(req.Context())
		t.stamp(h, id, sent)
		out.Header = h
	}
	if attempt == nil {
		return t.next.RoundTrip(out)
	}
	if once != nil {
		defer once.release()
	}
	return keepalive.RoundTrip(t.next, out, attempt)
}

// onceBody is a request body sent once. It lets go of its bytes when read to the end or
// closed: the request stays referenced by its response for as long as the stream lasts, and
// thousands of streams would otherwise each hold their whole conversation. Until then, again
// gives the body anew, for a transport that retries a request whose body it has not sent
// (HTTP/2's refused streams). Sent on a reused connection (hold), it keeps its bytes until its
// round trip returns (release), for the resend of a request lost to the kept-alive race:
// only then does it hold them past their sending, and only until the response's headers.
//
// A transport may close a body from another goroutine while it is being read (net/http's
// RoundTripper contract allows it, and internal/inproc does so when the client gives up), so
// its state is guarded; a read after Close fails rather than pretend the body ended there.
type onceBody struct {
	mu      sync.Mutex
	full, b []byte
	closed  bool
	held    bool // full is kept for a resend, until release
}

// errBodyReleased is what again returns once the body has been sent.
var errBodyReleased = errors.New("request body already sent and released")

// errBodyClosed is what Read returns after Close.
var errBodyClosed = errors.New("request body read after close")

// Read implements io.Reader.
func (o *onceBody) Read(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return 0, errBodyClosed
	}
	if len(o.b) == 0 {
		o.b = nil
		o.letGo()
		return 0, io.EOF
	}
	n := copy(p, o.b)
	o.b = o.b[n:]
	return n, nil
}

// Close implements io.Closer.
func (o *onceBody) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.b, o.closed = nil, true
	o.letGo()
	return nil
}

// letGo drops the whole body unless it is held; callers hold mu.
func (o *onceBody) letGo() {
	if !o.held {
		o.full = nil
	}
}

// hold keeps the whole body, for again, until release.
func (o *onceBody) hold() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.held = true
}

// release ends the hold: the round trip has returned, and no resend will come.
func (o *onceBody) release() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.held, o.full = false, nil
}

// again returns the body from its start while it is still held; it is the request's GetBody.
func (o *onceBody) again() (io.ReadCloser, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.full == nil {
		return nil, errBodyReleased
	}
	return &onceBody{full: o.full, b: o.full}, nil
}

// mergeSlack is the room readBody leaves after a body for the fields mergeFields adds, in bytes.
const mergeSlack = 64

// readBody reads a request's body into one buffer of its declared length plus mergeSlack, or
// grows one when the length is not declared.
func readBody(req *http.Request) ([]byte, error) {
	if n := req.ContentLength; n > 0 && n < 1<<30 {
		b := make([]byte, n, n+mergeSlack)
		if _, err := io.ReadFull(req.Body, b); err != nil {
			return nil, err
		}
		var one [1]byte
		if k, _ := req.Body.Read(one[:]); k > 0 {
			rest, err := io.ReadAll(req.Body)
			return append(append(b, one[0]), rest...), err
		}
		return b, nil
	}
	return io.ReadAll(req.Body)
}

// mergeFields appends fields, in key order, to the JSON object body, in body's own array when
// it has room. A field the body already has then appears twice; JSON decoders (Python's,
// Go's) keep the last, ours.
func mergeFields(body []byte, fields map[string]any) ([]byte, error) {
	obj := bytes.TrimSpace(body)
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return nil, errors.New("merge body fields: request body is not a JSON object")
	}
	out := obj[:len(obj)-1]
	empty := len(bytes.TrimSpace(obj[1:len(obj)-1])) == 0
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		v, err := json.Marshal(fields[k])
		if err != nil {
			return nil, fmt.Errorf("merge body field %q: %w", k, err)
		}
		if !empty {
			out = append(out, ',')
		}
		empty = false
		key, _ := json.Marshal(k) // a string always marshals
		out = append(append(append(out, key...), ':'), v...)
	}
	return append(out, '}'), nil
}

// responseHookKey carries a responseHook in a request's context.
type responseHookKey struct{}

// responseHook sees a response as soon as its headers arrive, before go-openai reads it (and,
// for an error status, drops its headers). It may replace resp.Body.
type responseHook func(resp *http.Response)

// withResponseHook returns ctx carrying h.
func withResponseHook(ctx context.Context, h responseHook) context.Context {
	return context.WithValue(ctx, responseHookKey{}, h)
}

// hookTransport calls the context's responseHook on every response.
type hookTransport struct{ next http.RoundTripper }

// RoundTrip sends req and shows the response to the context's hook.
func (t hookTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if h, ok := req.Context().Value(responseHookKey{}).(responseHook); ok && err == nil {
		h(resp)
	}
	return resp, err
}

// parseRetryAfter returns the delay a response asks for: retry-after-ms in milliseconds,
// else Retry-After in seconds or as an HTTP-date, counted from the response's Date header
// (or now when it has none). A date in the past gives 0; a missing or unreadable value, false.
func parseRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil && ms >= 0 && ms < 1e12 {
		return time.Duration(ms * float64(time.Millisecond)), true
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < 1e9 {
		return time.Duration(s * float64(time.Second)), true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if date, err := http.ParseTime(h.Get("Date")); err == nil {
		now = date
	}
	return max(at.Sub(now), 0), true
}
