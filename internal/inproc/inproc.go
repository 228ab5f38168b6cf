// Package inproc serves HTTP inside one process: a Transport is an http.RoundTripper that
// answers each request by running a handler on the goroutine that calls RoundTrip and passing
// the response body through memory. No socket, no connection, no HTTP/1.1 framing and no
// goroutine is involved, so a client and a server in the same process cost one buffer of
// unread response bytes per request in flight, instead of two sockets, four buffers and four
// goroutines per connection. A handler that streams hands the rest of its response to a step
// the client runs as it waits for the head and reads the body (Continue): a stream, too, costs
// its client's goroutine only.
//
// What a client sees is what net/http's client sees from net/http's server, in the ways a
// streaming client can tell:
//   - RoundTrip returns once the handler has returned, or has continued and its steps have sent
//     the head. The head goes out when the handler or a step flushes, when it has written more
//     than FlushBytes of body, or when it ends — not at WriteHeader. A stream that sends its
//     head only with the first token is seen as such.
//   - Body bytes become readable when they are flushed (or at FlushBytes, or at the end); what
//     a handler writes before it returns is read once it has returned, whatever its size.
//   - A handler that panics with http.ErrAbortHandler cuts the response: before the head,
//     RoundTrip fails with an error wrapping io.EOF (a connection closed without an answer);
//     after it, the body's Read fails with io.ErrUnexpectedEOF (a truncated chunked body).
//     Other panics are logged with their stack, as net/http logs them, and cut the response
//     the same way.
//   - The handler's request context is cancelled when the client's request context is, when
//     the client closes the body before its end, when the Transport's Context is cancelled,
//     and when the handler returns (for a continued response, when its last step does). The
//     request body is closed when the client's context ends, so a handler reading it stops;
//     otherwise only a handler that watches its request's context ends when the client gives
//     up while it runs.
//   - A handler's or a step's writes never wait for the client: it is the goroutine running
//     them, and reads once they return. Once the client has closed the body they fail, as
//     writes to a closed connection do; once the request has ended, so does a flush that would
//     leave more than Window bytes unread.
//   - Once Close is called, RoundTrip fails as a refused connection does: an error wrapping
//     *net.OpError{Op: "dial"} and net.ErrClosed.
//
// Inside a testing/synctest bubble every wait is on a channel, so a Transport runs in virtual
// time.
package inproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
)

const (
	// FlushBytes is the body a handler may write before it is sent without a Flush: net/http's
	// server buffers 4 KiB per connection.
	FlushBytes = 4 << 10
	// Window is the unread response body a flush may leave once the request has ended, and
	// nobody will read it, before it fails: about what a loopback socket's buffers take before
	// writes to a peer that has gone fail.
	Window = 256 << 10
)

// Transport answers requests with Handler in this process. Its zero value is not usable: set
// Handler. Close it when done; it is safe for concurrent use.
type Transport struct {
	// Handler serves every request, whatever its URL's host.
	Handler http.Handler
	// Context is the parent of every request's context on the handler's side: cancelling it
	// ends the requests in flight, as a server stopping does. nil means context.Background.
	Context context.Context
	// ErrorLog receives handler panics other than http.ErrAbortHandler, with their stack; nil
	// means the log package's standard logger.
	ErrorLog *log.Logger

	mu       sync.Mutex
	closed   bool
	handlers sync.WaitGroup
	// continued holds the responses handed to steps (Continue) that have not ended: when
	// Context ends, one watch drains them all.
	continued map[*continuation]struct{}
	watching  bool // the watch on Context is set
	drained   bool // drainAll has taken its snapshot
}

// errClosed is what RoundTrip returns once the transport is closed: a refused dial.
var errClosed = &net.OpError{Op: "dial", Net: "inproc", Err: net.ErrClosed}

// Close refuses new requests and waits for every exchange to end: each handler to return and
// each continued response's last step. Responses still streaming end when their clients close
// the bodies or their contexts end: cancel Context first to end them. Close is safe to call
// more than once.
func (t *Transport) Close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.handlers.Wait()
}

// RoundTrip implements http.RoundTripper: it runs the handler on req and returns once the
// handler has returned, or has continued and its steps have sent the response head; it fails
// when the response is cut before its head or req's context ends first.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	body := req.Body
	if body == nil {
		body = http.NoBody
	}
	if err := req.Context().Err(); err != nil {
		_ = body.Close()
		return nil, err // net/http's client does not send a request whose context has ended
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		_ = body.Close()
		return nil, errClosed
	}
	t.handlers.Add(1)
	t.mu.Unlock()

	parent := t.Context
	if parent == nil {
		parent = context.Background()
	}
	// The handler's context descends from the server's, as net/http's BaseContext, and ends
	// when the client's does: it carries neither the client's values nor its deadline.
	ctx, cancel := context.WithCancel(parent)
	sreq := req.WithContext(ctx)
	sreq.Body = body
	sreq.RequestURI = req.URL.RequestURI()
	sreq.RemoteAddr = "inproc"
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	w := &responseWriter{header: make(http.Header), head: make(chan struct{}), req: req,
		body: &pipe{serverDone: ctx.Done(), client: req.Context(), cancel: cancel}}
	// The request body is closed once: when the exchange ends, or, as net/http's client
	// closes it, when the client's context ends, so that a handler reading it stops.
	closeBody := sync.OnceFunc(func() { _ = body.Close() })
	stopClient := context.AfterFunc(req.Context(), func() {
		cancel()
		closeBody()
		w.body.abandoned()
	})
	done := func() {
		closeBody()
		cancel()
		stopClient()
		t.handlers.Done()
	}
	w.serveEnding(t, sreq, ctx, done)
	return w.awaitHead(req)
}

// serveEnding runs the handler (serve) and ends the exchange with done unless it continues:
// deferred, so that a handler that calls runtime.Goexit ends it too.
func (w *responseWriter) serveEnding(t *Transport, r *http.Request, ctx context.Context, done func()) {
	continued := false
	defer func() {
		if !continued {
			done()
		}
	}()
	continued = w.serve(t, r, ctx, done)
}

// awaitHead returns the response once its head is out, or the error of an exchange cut before
// it, or of a client's context that ended meanwhile. A handler that continued (Continue)
// before sending its head sends it from a step: the client's goroutine runs them, here, until
// one does.
func (w *responseWriter) awaitHead(req *http.Request) (*http.Response, error) {
	for {
		select {
		case <-w.head:
			if err := req.Context().Err(); err != nil {
				if !w.cut {
					_ = w.resp.Body.Close()
				}
				return nil, err
			}
			if w.cut {
				return nil, fmt.Errorf("inproc: the server closed the connection without answering: %w", io.EOF)
			}
			return w.resp, nil
		default:
		}
		w.body.mu.Lock()
		c := w.body.cont
		w.body.mu.Unlock()
		c.next() // c is set: the handler returned without a head, so it continued
	}
}

// responseWriter is the handler's side of one exchange.
type responseWriter struct {
	req    *http.Request
	header http.Header
	body   *pipe

	status   int         // 0 until WriteHeader
	sent     http.Header // the head as sent, taken at WriteHeader
	head     chan struct{}
	headOnce sync.Once
	resp     *http.Response // set before head closes, unless cut
	cut      bool           // the handler aborted before its head went out
	step     func() bool    // what Continue was given; nil when it was not called
}

// serve runs the handler and ends the exchange: the head goes out if it has not, and the body
// ends (cut when the handler panicked) — unless the handler handed the rest of the response
// to a step (Continue): then serve sends the head, hands the step to the body and returns true,
// and the step's end calls done. ctx is the handler's request context.
func (w *responseWriter) serve(t *Transport, r *http.Request, ctx context.Context, done func()) (continued bool) {
	aborted := true
	defer func() {
		switch {
		case aborted:
			w.logPanic(t, r, recover())
			w.headOnce.Do(func() {
				w.cut = true
				close(w.head)
			})
			w.body.finish(io.ErrUnexpectedEOF)
		case w.step != nil:
			// The head goes out with the first step that flushes, or at the end.
			t.carryOn(w.body, &continuation{step: w.step, w: w, t: t, r: r, done: done}, ctx)
			continued = true
		default:
			w.sendHead()
			w.body.finish(io.EOF)
		}
	}()
	t.Handler.ServeHTTP(w, r)
	aborted = false
	return false
}

// logPanic logs, with its stack, the panic v of a handler or a step, as net/http logs it,
// unless it is nil or http.ErrAbortHandler.
func (w *responseWriter) logPanic(t *Transport, r *http.Request, v any) {
	if v == nil || v == http.ErrAbortHandler {
		return
	}
	logf := log.Printf
	if t.ErrorLog != nil {
		logf = t.ErrorLog.Printf
	}
	buf := make([]byte, 64<<10)
	buf = buf[:runtime.Stack(buf, false)]
	logf("inproc: panic serving %s %s: %v\n%s", r.Method, r.URL.Path, v, buf)
}

// Continue, called by a handler served by a Transport (w is its ResponseWriter, or wraps it
// with an Unwrap method as http.ResponseController expects), hands the rest of the response
// to step, and returns true; for any other ResponseWriter it does nothing and returns false.
//
// The handler then returns without ending the response. From then on step writes the response
// as the handler would have (WriteHeader, Write, Flush, a panic with http.ErrAbortHandler to
// cut it), one part per call, returning false when the response is complete. It is called on
// the client's goroutine: inside RoundTrip while the head has not gone out (it goes with the
// first flush, or at the end), then inside the body's Read whenever everything written so far
// has been read; so a stream waits for its first token and between its parts on its client's
// goroutine, where the handler would have blocked it. A step's writes never wait for the
// client, who reads them once it returns, however much one step writes. When the request ends before the
// response does, step is called until it returns false with the request's context done, on
// the goroutine that ended it: the client's, in Close; one of the Transport's when the
// client's context or the Transport's Context ends. It must then end promptly, as a handler
// must. Calls never overlap — a Read or Close meanwhile waits for the one running — and the
// request context the handler was given stays alive until the last one has returned. A handler
// that panics after Continue cuts the response as it would have; step is not called.
//
// A step runs on a stack it does not own: it should block only where the handler would have,
// and not deeply (see docs/speed.md).
func Continue(w http.ResponseWriter, step func() bool) bool {
	for {
		if rw, ok := w.(*responseWriter); ok {
			rw.step = step
			return true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
}

// continuation is the rest of a response that Continue handed to a step.
type continuation struct {
	mu    sync.Mutex // held while step runs
	step  func() bool
	ended bool // step returned false or panicked

	w    *responseWriter
	t    *Transport
	r    *http.Request
	done func() // ends the exchange, as serveEnding does for a handler that did not continue
}

// run calls step once, unless the response has ended; the caller holds mu.
func (c *continuation) run() {
	if c.ended {
		return
	}
	aborted := true
	defer func() {
		if aborted {
			c.w.logPanic(c.t, c.r, recover())
			c.end(io.ErrUnexpectedEOF)
		}
	}()
	more := c.step()
	aborted = false
	if !more {
		c.end(io.EOF)
	}
}

// end ends the body with err and the exchange with it; the caller holds mu. A response whose
// head has not gone out sends it now, or, cut, ends without one.
func (c *continuation) end(err error) {
	c.ended = true
	if err == io.EOF {
		c.w.sendHead()
	} else {
		c.w.headOnce.Do(func() {
			c.w.cut = true
			close(c.w.head)
		})
	}
	c.w.body.finish(err)
	c.t.mu.Lock()
	delete(c.t.continued, c)
	c.t.mu.Unlock()
	c.done()
}

// next runs one step for a reader that has read everything written so far.
func (c *continuation) next() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.run()
}

// carryOn hands the rest of p's body to c, whose request's context is ctx: the client's reads
// run its steps, and the request ending drains it. Every way the request ends drains it — the
// client's context (RoundTrip's watch), closing the body (pipe.Close), Context (one watch for
// all) — and, for a request that ended while its handler was still running, carryOn itself.
func (t *Transport) carryOn(p *pipe, c *continuation, ctx context.Context) {
	t.mu.Lock()
	if t.continued == nil {
		t.continued = make(map[*continuation]struct{})
	}
	t.continued[c] = struct{}{}
	late := t.drained
	if !t.watching && t.Context != nil {
		t.watching = true
		context.AfterFunc(t.Context, t.drainAll)
	}
	t.mu.Unlock()
	p.mu.Lock()
	p.cont = c
	p.mu.Unlock()
	if late || ctx.Err() != nil {
		c.drain()
	}
}

// drainAll drains every continued response once Context has ended.
func (t *Transport) drainAll() {
	t.mu.Lock()
	t.drained = true
	all := make([]*continuation, 0, len(t.continued))
	for c := range t.continued {
		all = append(all, c)
	}
	t.mu.Unlock()
	for _, c := range all {
		c.drain()
	}
}

// drain runs the steps to the end once the request's context is done.
func (c *continuation) drain() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for !c.ended {
		c.run()
	}
}

// Header implements http.ResponseWriter.
func (w *responseWriter) Header() http.Header {
	if w.header == nil {
		w.header = make(http.Header) // after WriteHeader: changes are not sent
	}
	return w.header
}

// WriteHeader implements http.ResponseWriter. As with net/http, the head is fixed now and sent
// at the first flush; informational (1xx) codes are not passed on.
func (w *responseWriter) WriteHeader(code int) {
	if w.status != 0 || (code >= 100 && code < 200) {
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	w.status = code
	// The map itself becomes the response's headers, not a copy: a stream's head costs no
	// second map. A handler that changes headers after WriteHeader gets a new one (Header).
	w.sent, w.header = w.header, nil
}

// Write implements http.ResponseWriter: p is buffered and becomes readable at the next flush,
// or at once when more than FlushBytes are waiting.
func (w *responseWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		if w.Header().Get("Content-Type") == "" {
			w.header.Set("Content-Type", http.DetectContentType(p))
		}
		w.WriteHeader(http.StatusOK)
	}
	pending, err := w.body.write(p)
	if err != nil {
		return 0, err
	}
	if pending > FlushBytes {
		return len(p), w.FlushError()
	}
	return len(p), nil
}

// FlushError sends the head, when it has not gone out, and makes what was written readable;
// it fails once the client has closed the body, or once the request has ended with more than
// Window bytes unread.
func (w *responseWriter) FlushError() error {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.sendHead()
	return w.body.flush()
}

// Flush implements http.Flusher.
func (w *responseWriter) Flush() { _ = w.FlushError() }

// sendHead hands the response to RoundTrip, once.
func (w *responseWriter) sendHead() {
	w.headOnce.Do(func() {
		if w.status == 0 {
			w.WriteHeader(http.StatusOK)
		}
		length := int64(-1)
		if n, err := strconv.ParseInt(w.sent.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
			length = n
		}
		w.resp = &http.Response{
			Status: strconv.Itoa(w.status) + " " + http.StatusText(w.status), StatusCode: w.status,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: w.sent, Body: w.body, ContentLength: length, Request: w.req,
		}
		close(w.head)
	})
}

// pipe carries one response body from the handler to the client: buf[off:visible] is
// readable, buf[visible:] written but not yet flushed.
type pipe struct {
	mu      sync.Mutex
	buf     []byte
	pooled  *[]byte // where buf came from and goes back to; nil while the pipe holds none
	off     int
	visible int
	end     error // io.EOF, or io.ErrUnexpectedEOF for a cut body, once the handler is done
	closed  bool  // the client closed the body

	serverDone <-chan struct{}
	client     context.Context    // the client's request context
	cancel     context.CancelFunc // ends the handler's request
	cont       *continuation      // what writes the rest of the body, once the handler has returned (Continue)
}

// abandoned drains the continued response, if there is one, once the request has ended.
func (p *pipe) abandoned() {
	p.mu.Lock()
	c := p.cont
	p.mu.Unlock()
	if c != nil {
		c.drain()
	}
}

// errBodyClosed is what the handler's writes return once the client has closed the body,
// as writes to a connection the peer closed fail.
var errBodyClosed = errors.New("inproc: the client closed the response body")

// buffers holds the buffers of drained pipes: a stream whose client keeps up holds none
// between its writes, so thousands of streams share a few.
var buffers = sync.Pool{New: func() any { return new([]byte) }}

// write appends p to the unflushed bytes and returns how many are unflushed.
func (p *pipe) write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, errBodyClosed
	}
	if p.pooled == nil {
		p.pooled = buffers.Get().(*[]byte)
		p.buf = (*p.pooled)[:0]
	}
	p.buf = append(p.buf, b...)
	return len(p.buf) - p.visible, nil
}

// flush makes the written bytes readable. It never waits: the handler, or the step, runs on its
// reader's goroutine, who reads once it returns. But once the request has ended nobody reads,
// and a drain writing more than Window is cut.
func (p *pipe) flush() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return errBodyClosed
	}
	p.visible = len(p.buf)
	unread := p.visible - p.off
	p.mu.Unlock()
	if unread <= Window {
		return nil
	}
	select {
	case <-p.serverDone:
		return context.Canceled
	default:
		return nil
	}
}

// finish ends the body with end after making every written byte readable.
func (p *pipe) finish(end error) {
	p.mu.Lock()
	p.visible = len(p.buf)
	p.end = end
	p.mu.Unlock()
}

// Read implements io.Reader for the client: it returns what is readable, or, when everything
// written so far has been read, runs the next step of a continued response. Once the client's
// request context ends, Read fails with its error, as net/http's response bodies do.
func (p *pipe) Read(b []byte) (int, error) {
	for {
		if err := p.client.Err(); err != nil {
			return 0, err
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return 0, http.ErrBodyReadAfterClose
		}
		if p.off < p.visible {
			n := copy(b, p.buf[p.off:p.visible])
			p.off += n
			if p.off == p.visible {
				// Drained: move what is not yet flushed to the start, or, when nothing is
				// left, give the buffer back.
				rest := copy(p.buf, p.buf[p.off:])
				p.buf, p.off, p.visible = p.buf[:rest], 0, 0
				if rest == 0 {
					p.release()
				}
			}
			p.mu.Unlock()
			return n, nil
		}
		end, cont := p.end, p.cont
		p.mu.Unlock()
		if end != nil {
			return 0, end
		}
		// The body has not ended, so the handler continued (it returned before RoundTrip did):
		// its next step writes what comes next.
		cont.next()
	}
}

// Close implements io.Closer for the client: unread bytes are dropped and, when the body had
// not ended, the handler's request is cancelled, as closing a connection mid-response does.
func (p *pipe) Close() error {
	p.mu.Lock()
	p.closed = true
	p.release()
	p.off, p.visible = 0, 0
	p.mu.Unlock()
	p.cancel()
	p.abandoned()
	return nil
}

// release gives the buffer back to the pool; the caller holds mu.
func (p *pipe) release() {
	if p.pooled != nil {
		*p.pooled = p.buf[:0]
		buffers.Put(p.pooled)
	}
	p.pooled, p.buf = nil, nil
}
