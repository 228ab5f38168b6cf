package agents

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMergeFields(t *testing.T) {
	for _, tc := range []struct {
		body   string
		fields map[string]any
		want   string // "" means an error
	}{
		// The usual case: go-openai's body gains ignore_eos at the end.
		{`{"model":"m","stream":true}`, map[string]any{"ignore_eos": true}, `{"model":"m","stream":true,"ignore_eos":true}`},
		// An empty object gets no leading comma.
		{`{}`, map[string]any{"ignore_eos": true}, `{"ignore_eos":true}`},
		{" { \n } \n", map[string]any{"ignore_eos": true}, "{ \n \"ignore_eos\":true}"},
		// Trailing whitespace after the object is dropped.
		{"{\"a\":1}\n", map[string]any{"ignore_eos": false}, `{"a":1,"ignore_eos":false}`},
		// Several fields go in key order; values and keys are JSON-encoded.
		{`{"a":1}`, map[string]any{"z": "q\"", "b": []int{1, 2}, "k\"ey": nil}, `{"a":1,"b":[1,2],"k\"ey":null,"z":"q\""}`},
		// Not an object: refused.
		{`[1,2]`, map[string]any{"x": 1}, ""},
		{``, map[string]any{"x": 1}, ""},
		// A value JSON cannot encode: refused.
		{`{}`, map[string]any{"x": func() {}}, ""},
	} {
		got, err := mergeFields([]byte(tc.body), tc.fields)
		if tc.want == "" {
			assert.Error(t, err, "mergeFields(%q, %v)", tc.body, tc.fields)
			continue
		}
		require.NoError(t, err, "mergeFields(%q, %v)", tc.body, tc.fields)
		assert.Equal(t, tc.want, string(got), "mergeFields(%q, %v)", tc.body, tc.fields)
	}
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// closeRecorder is a request body that remembers being closed.
type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

func TestRequestTransportBodyFields(t *testing.T) {
	var sent *http.Request
	var sentBody string
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent, sentBody = r, ""
		if r.Body != nil {
			b, _ := io.ReadAll(r.Body)
			sentBody = string(b)
		}
		return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
	})
	tr := requestTransport{next: next}

	// With fields in the context, the body is extended and its length updated; the
	// original request is left alone and its body closed.
	orig := &closeRecorder{Reader: strings.NewReader(`{"model":"m"}`)}
	ctx := withBodyFields(context.Background(), map[string]any{"ignore_eos": true})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://x/v1/chat/completions", orig)
	require.NoError(t, err)
	_, err = tr.RoundTrip(req)
	require.NoError(t, err)
	want := `{"model":"m","ignore_eos":true}`
	assert.Equal(t, want, sentBody)
	assert.Equal(t, int64(len(want)), sent.ContentLength)
	assert.NotSame(t, req, sent, "RoundTrip must not modify its request")
	assert.True(t, orig.closed, "the original body is closed")
	_, err = sent.GetBody()
	assert.ErrorIs(t, err, errBodyReleased, "once sent, the merged body is let go (TestOnceBodyReleases)")

	// Without fields a POST's body is sent as it was, but as a body that lets go of its
	// bytes once sent: the original's GetBody would hold them for the whole stream.
	plain, _ := http.NewRequest(http.MethodPost, "http://x/", strings.NewReader(`{}`))
	_, _ = tr.RoundTrip(plain)
	assert.NotSame(t, plain, sent)
	assert.Equal(t, `{}`, sentBody)
	assert.Equal(t, int64(2), sent.ContentLength)
	_, err = sent.GetBody()
	assert.ErrorIs(t, err, errBodyReleased, "once sent, the body is let go")

	// A GET passes through untouched.
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://x/", nil)
	_, _ = tr.RoundTrip(get)
	assert.Same(t, get, sent)

	// A body that is not a JSON object fails the request.
	bad, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://x/", strings.NewReader(`[]`))
	_, err = tr.RoundTrip(bad)
	assert.Error(t, err)
}

// TestRequestTransportStamps checks that the stamp sets headers on one copy of the request,
// with the request's id and send time, the body fields merged into the same copy, and the
// original's headers left as they were.
func TestRequestTransportStamps(t *testing.T) {
	var sent *http.Request
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = r
		return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
	})
	at := time.Unix(1700000000, 5)
	tr := requestTransport{next: next, stamp: func(h http.Header, id string, sentAt time.Time) {
		h.Set("X-Id", id)
		h.Set("X-Sent", strconv.FormatInt(sentAt.UnixNano(), 10))
	}}
	ctx := withBodyFields(withRequest(context.Background(), "a1-r2-0", at), map[string]any{"ignore_eos": true})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://x/v1/chat/completions", strings.NewReader(`{"model":"m"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	_, err = tr.RoundTrip(req)
	require.NoError(t, err)
	assert.NotSame(t, req, sent)
	assert.Equal(t, "a1-r2-0", sent.Header.Get("X-Id"))
	assert.Equal(t, "1700000000000000005", sent.Header.Get("X-Sent"))
	assert.Equal(t, "application/json", sent.Header.Get("Content-Type"), "the request's own headers are kept")
	assert.Equal(t, int64(len(`{"model":"m","ignore_eos":true}`)), sent.ContentLength, "fields merged into the same copy")
	assert.Empty(t, req.Header.Get("X-Id"), "the original's headers are left alone")

	// A GET outside an attempt is stamped too, with no id and a zero time.
	get, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
	_, err = tr.RoundTrip(get)
	require.NoError(t, err)
	assert.NotSame(t, get, sent)
	assert.Empty(t, sent.Header.Get("X-Id"))
	assert.Equal(t, strconv.FormatInt(time.Time{}.UnixNano(), 10), sent.Header.Get("X-Sent"))
}

func TestHookTransport(t *testing.T) {
	resp := &http.Response{StatusCode: 429, Body: http.NoBody}
	fail := errors.New("dial failed")
	var seen []*http.Response
	ctx := withResponseHook(context.Background(), func(r *http.Response) { seen = append(seen, r) })
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://x/", nil)

	got, err := hookTransport{next: roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })}.RoundTrip(req)
	require.NoError(t, err)
	assert.Same(t, resp, got)
	assert.Equal(t, []*http.Response{resp}, seen, "the hook sees the response")

	_, err = hookTransport{next: roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, fail })}.RoundTrip(req)
	assert.ErrorIs(t, err, fail)
	assert.Len(t, seen, 1, "no response, no hook call")
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 19, 45, 0, 0, time.UTC)
	for _, tc := range []struct {
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{map[string]string{"Retry-After": "5"}, 5 * time.Second, true},
		{map[string]string{"Retry-After": " 0 "}, 0, true},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond, true},
		// An HTTP-date counts from the response's Date header…
		{map[string]string{"Retry-After": "Sun, 29 Nov 2026 19:46:00 GMT", "Date": "Sun, 29 Nov 2026 19:45:30 GMT"}, 30 * time.Second, true},
		// …or from now when there is none; a date in the past means no wait.
		{map[string]string{"Retry-After": "Sun, 29 Nov 2026 19:45:20 GMT"}, 20 * time.Second, true},
		{map[string]string{"Retry-After": "Sun, 29 Nov 2026 19:40:00 GMT"}, 0, true},
		// retry-after-ms (OpenAI) wins over Retry-After.
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "5"}, 250 * time.Millisecond, true},
		{map[string]string{}, 0, false},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{"Retry-After": "-3"}, 0, false},
	} {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		got, ok := parseRetryAfter(h, now)
		assert.Equal(t, tc.want, got, "parseRetryAfter(%v)", tc.header)
		assert.Equal(t, tc.ok, ok, "parseRetryAfter(%v) ok", tc.header)
	}
}

// TestOnceBodyReleases checks that the body sent with added fields lets go of its bytes once
// read to the end or closed, and can be had again only until then.
func TestOnceBodyReleases(t *testing.T) {
	o := &onceBody{full: []byte("abc"), b: []byte("abc")}
	again, err := o.again()
	require.NoError(t, err)
	b, err := io.ReadAll(o)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(b))
	assert.Nil(t, o.full, "released at EOF")
	_, err = o.again()
	assert.ErrorIs(t, err, errBodyReleased)
	b, err = io.ReadAll(again)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(b), "a body had before the release is whole")
	c := &onceBody{full: []byte("x"), b: []byte("x")}
	require.NoError(t, c.Close())
	assert.Nil(t, c.full, "released at Close")
}

// TestOnceBodyCloseWhileRead checks that a body closed from another goroutine while it is read,
// as a transport may when its client gives up, is safe and fails the reads after the Close.
func TestOnceBodyCloseWhileRead(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 1<<16)
	o := &onceBody{full: body, b: body}
	done := make(chan error)
	go func() {
		p := make([]byte, 16)
		for {
			if _, err := o.Read(p); err != nil {
				done <- err
				return
			}
		}
	}()
	require.NoError(t, o.Close())
	err := <-done
	if !errors.Is(err, io.EOF) {
		assert.ErrorIs(t, err, errBodyClosed)
	}
	_, err = o.Read(make([]byte, 1))
	assert.ErrorIs(t, err, errBodyClosed, "a read after Close")
}
