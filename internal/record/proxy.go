package record

import (
	"context"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/freshstack"
	"github.com/agentsim/agentsim/internal/keepalive"
	"github.com/agentsim/agentsim/internal/redact"
	"github.com/agentsim/agentsim/internal/wire"
	"github.com/agentsim/agentsim/trace"
)

// Options configures a Proxy. Upstream and Trace are required.
type Options struct {
	// Upstream is the server's base URL, e.g. http://10.0.0.5:30000. A request's path is
	// forwarded as it is, after Upstream's path unless it already begins with it (so both
	// http://host and http://host/v1 work for a harness whose base URL ends in /v1).
	Upstream *url.URL
	// Trace receives the trace: the header at once, then one line per request as it ends,
	// each flushed to Trace when written.
	Trace io.Writer
	// Content, when set, receives the text of every recorded request and reply, one JSON
	// object a line (session, seq, messages, reply); nil stores no text (--keep-content).
	Content io.Writer
	// InjectUsage asks the server for the usage frame of a stream whose request did not
	// (stream_options.include_usage), so token counts are the server's rather than
	// estimated. It changes the harness's traffic: the stream gains a usage frame.
	InjectUsage bool
	// MaxBody is the largest request body parsed, in bytes; 0 means DefaultMaxBody. A larger
	// body still reaches the server whole and unchanged (and so does its answer, a 413 or
	// another); it is recorded in a session of its own, with its tokens estimated from its
	// size.
	MaxBody int64
	// Clock times the trace; nil means clock.Real().
	Clock *clock.Clock
	// Transport reaches the server; nil means a Transport (upstream.go) over a clone of
	// http.DefaultTransport that keeps up to 1024 idle connections and never asks for
	// compression itself. A recorded request lost to the kept-alive race (a reused
	// connection the server closed before answering: internal/keepalive) is sent again,
	// and recorded once, by how the last attempt ended.
	Transport http.RoundTripper
	// Log receives the proxy's own problems (a trace line it could not write, a server it
	// could not reach); nil discards them.
	Log io.Writer
	// Observer, when set, is told of every recorded request as the proxy sees it (--watch).
	Observer Observer
}

// Observer is told of each recorded request as the proxy sees it. Calls for one request come
// in order from one goroutine; calls for different requests come concurrently. Times are
// seconds since the recording began.
type Observer interface {
	// Sent: the request arrived and is being forwarded.
	Sent(r Seen)
	// Headers: the server's response headers arrived at tS.
	Headers(r Seen, tS float64, status int)
	// FirstToken: the first output token arrived at tS; reasoning says it was reasoning
	// rather than content.
	FirstToken(r Seen, tS float64, reasoning bool)
	// Ended: the response ended (or failed) at tS; req is its trace line, class its failure
	// class (events.ClassNone for a whole response), chunks the reads that brought bytes.
	Ended(r Seen, tS float64, req trace.Request, class events.Class, chunks int)
}

// Seen identifies a recorded request.
type Seen struct {
	ID      uint64
	Session string
	Seq     int
	SentS   float64
	// PromptTokens is the prompt's size estimated from its text (about 4 bytes a token);
	// MaxTokens what the request asked for.
	PromptTokens, MaxTokens int
	// LastByteS is when the request last received a byte, its send time before any.
	LastByteS float64
	// Retry is set when the request re-sends the messages of its session's previous
	// request, which failed: the harness's own retry.
	Retry bool
	// UserAgent is the request's User-Agent header.
	UserAgent string
}

// Proxy is the recording reverse proxy, an http.Handler. Create it with New; Close it after
// the server that serves it has stopped.
type Proxy struct {
	o        Options
	own      *Transport // the default transport, when Options.Transport was nil
	rp       *httputil.ReverseProxy
	start    time.Time
	sessions *sessions
	chains   *chains
	out      *output
	nextID   atomic.Uint64

	mu       sync.RWMutex
	closed   bool
	inFlight sync.WaitGroup
	open     map[uint64]*exchange
	// resending holds each open request by its session group and whole messages, so that a
	// re-send of the same messages can wait for its first attempt to end (awaitFirstAttempt).
	resending map[twinKey]*exchange
}

// twinKey is a request's session group and the key of its whole messages.
type twinKey struct {
	group string
	k     key
}

// resendWait bounds how long, in wall time, a request that repeats an open request's
// messages waits for that one to end: a harness that re-sends has given up on the first
// attempt and closed its connection, and the proxy notices within milliseconds; a request
// still open after this is a concurrent twin, not a first attempt. Two requests sent within
// resendWait of each other are twins from the start (a harness sending the same messages
// twice at once), and neither waits.
const resendWait = 250 * time.Millisecond

type exchangeKey struct{}

// New returns a Proxy for o and writes the trace's header.
func New(o Options) (*Proxy, error) {
	if o.Upstream == nil || o.Upstream.Host == "" || (o.Upstream.Scheme != "http" && o.Upstream.Scheme != "https") {
		return nil, fmt.Errorf("upstream %q: want an http or https URL with a host, e.g. http://127.0.0.1:30000", redact.URL(fmt.Sprint(o.Upstream)))
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.Clock == nil {
		o.Clock = clock.Real()
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	var own *Transport
	if o.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost, t.MaxIdleConns, t.DisableCompression = 1024, 1024, true
		t.ReadBufferSize, t.WriteBufferSize = upstreamReadBuffer, upstreamWriteBuffer
		own = NewTransport(t)
		o.Transport = own
	}
	p := &Proxy{o: o, own: own, start: o.Clock.Now(), sessions: newSessions(), chains: newChains(), open: map[uint64]*exchange{}, resending: map[twinKey]*exchange{}}
	h := trace.Header{Source: "record:" + redact.URL(o.Upstream.String()), AfterSFrom: trace.AfterEnd,
		Created: o.Clock.WallNow().UTC().Format(time.RFC3339)}
	out, err := newOutput(o.Trace, o.Content, h, o.Log)
	if err != nil {
		return nil, err
	}
	p.out = out
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		FlushInterval:  -1, // every read is written and flushed at once: streams are never buffered
		BufferPool:     copyBuffers,
		Transport:      keepalive.Transport{Next: o.Transport},
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
		ErrorLog:       log.New(o.Log, "agentsim record: ", 0),
	}
	return p, nil
}

// upstreamReadBuffer and upstreamWriteBuffer are the default transport's buffers per
// connection to the server, in bytes (http.Transport's are 4 KiB each): every open stream
// holds a read buffer, and a read brings what the server flushed since the last, a frame or
// a few; a write buffer holds only a request's head, a larger body being written past it.
const upstreamReadBuffer, upstreamWriteBuffer = 2 << 10, 1 << 10

// copyBufferSize is the buffer each response is copied through, in bytes: a read brings
// what the server flushed since the last, a few frames, so a buffer larger than the
// transport's own (4 KiB) would only add to what every open stream holds.
const copyBufferSize = 2 << 10

// copyBuffers lends the buffers responses are copied through (httputil.ReverseProxy's own
// are 32 KiB, one a response, which a thousand open streams hold at once).
var copyBuffers = &bufferPool{sync.Pool{New: func() any { return new([copyBufferSize]byte) }}}

// bufferPool is a sync.Pool of copy buffers, an httputil.BufferPool.
type bufferPool struct{ p sync.Pool }

// Get implements httputil.BufferPool.
func (b *bufferPool) Get() []byte { return b.p.Get().(*[copyBufferSize]byte)[:] }

// Put implements httputil.BufferPool.
func (b *bufferPool) Put(buf []byte) {
	if cap(buf) == copyBufferSize {
		b.p.Put((*[copyBufferSize]byte)(buf[:copyBufferSize]))
	}
}

// now returns the time since the recording began, in seconds.
func (p *Proxy) now() float64 { return p.o.Clock.Since(p.start).Seconds() }

// recorded reports whether r is a request the trace records: a POST of a chat or legacy
// completion, or of a response (the Responses API, responses.go).
func recorded(r *http.Request) bool {
	p := r.URL.Path
	return r.Method == http.MethodPost &&
		(strings.HasSuffix(p, "/chat/completions") || strings.HasSuffix(p, "/completions") || strings.HasSuffix(p, "/responses"))
}

// ServeHTTP forwards r to the server and its response back, recording completions.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.RLock()
	if p.closed {
		p.mu.RUnlock()
		http.Error(w, "agentsim record: the proxy is stopping", http.StatusServiceUnavailable)
		return
	}
	p.inFlight.Add(1)
	p.mu.RUnlock()
	defer p.inFlight.Done()
	if !recorded(r) {
		p.rp.ServeHTTP(w, r)
		return
	}
	x, err := p.begin(r)
	if err != nil {
		// The harness's body could not be read (it went away mid-upload): nothing to forward.
		fmt.Fprintf(p.o.Log, "agentsim record: read request body: %v\n", err)
		http.Error(w, "agentsim record: read request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	// The deferred end runs whether the copy ends normally or the proxy aborts the
	// connection (a server that failed mid-stream): the harness then sees the same failure.
	defer p.end(x)
	x.hw = newHeadFirst(w)
	p.rp.ServeHTTP(x.hw, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x)))
}

// headFirst is the harness's ResponseWriter for a recorded request: it sends the response
// head as soon as it is written, before the server's first body byte, so that the server's
// prefill is not added to the harness's time to first byte. It flushes when
// httputil.ReverseProxy writes the head, after it has copied the server's headers: a head
// flushed before (from ModifyResponse) goes out without them, its body in another framing
// (TestHeadersBeforeFirstByte).
//
// A pumped body (tee.pump) is written and flushed to the harness by the pump, from the
// handler's goroutine, past httputil.ReverseProxy's own writer, as soon as the head is
// written (WriteHeader): ReverseProxy's copy of the body, which takes a buffer from its
// BufferPool and sets a timer to flush, then begins with the body already ended, so an open
// stream holds neither; its flushes have nothing to add, and are not made. When the server's
// first body bytes arrived with its head, the head waits for them, which the pump writes at
// once, so that the two go out in one write. The read that ends the body is written without
// a flush once the head has gone out: net/http sends it with the body's last chunk when the
// handler returns, in one write rather than two.
type headFirst struct {
	http.ResponseWriter
	rc *http.ResponseController
	// pumped: the body is pumped. deferHead: the head goes out with the first body bytes,
	// which came with it; headPending: it has not gone out yet.
	pumped, deferHead, headPending bool
	// body is the pumped body, until WriteHeader has carried it.
	body *tee
}

// newHeadFirst returns w as a headFirst.
func newHeadFirst(w http.ResponseWriter) *headFirst {
	return &headFirst{ResponseWriter: w, rc: http.NewResponseController(w)}
}

// WriteHeader implements http.ResponseWriter.
func (h *headFirst) WriteHeader(code int) {
	h.ResponseWriter.WriteHeader(code)
	if code < http.StatusOK { // an informational head is not the response's
		return
	}
	if h.deferHead {
		h.headPending = true
	} else {
		h.flushOnFreshStack()
	}
	if t := h.body; t != nil {
		h.body = nil
		t.pumpNow()
	}
}

// FlushError flushes what was written to the harness (http.ResponseController finds it),
// unless the body is pumped, which flushes every write itself.
func (h *headFirst) FlushError() error {
	if h.pumped {
		return nil
	}
	return h.rc.Flush()
}

// flushHead sends a head that waited for the body's first bytes, when none came with it.
func (h *headFirst) flushHead() {
	if h.headPending {
		h.headPending = false
		h.flushOnFreshStack()
	}
}

// flushOnFreshStack flushes what was written to the harness, the head with it, on a goroutine
// of its own: net/http writes a head through its sorted headers, kilobytes deep, and under
// httputil.ReverseProxy and the pump that takes the handler's stack past 8 KiB, a size it
// then keeps for as long as the stream stays open (internal/freshstack, docs/speed.md). A
// flush that fails is not reported here: the next write to the harness fails too.
func (h *headFirst) flushOnFreshStack() {
	freshstack.Run(func() { _ = h.rc.Flush() })
}

// writeFlush writes p to the harness and flushes it, with the head if it waited; p that ends
// the body (last) is flushed only when the head waited for it (a body that came whole with
// its head: unflushed, net/http would frame it by its length), and goes out otherwise with
// the body's last chunk as the handler returns.
func (h *headFirst) writeFlush(p []byte, last bool) error {
	if h.headPending {
		// The head goes out with p, both on a fresh stack (see flushOnFreshStack): a write of
		// p larger than net/http's buffer writes the head itself.
		h.headPending = false
		var err error
		freshstack.Run(func() {
			if _, err = h.ResponseWriter.Write(p); err == nil {
				err = h.rc.Flush()
			}
		})
		return err
	}
	if _, err := h.ResponseWriter.Write(p); err != nil {
		return err
	}
	if last {
		return nil
	}
	return h.rc.Flush()
}

// Unwrap returns the harness's ResponseWriter, for http.ResponseController.
func (h *headFirst) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// begin reads a recorded request, places it in a session and tells the observer.
func (p *Proxy) begin(r *http.Request) (*exchange, error) {
	x := &exchange{p: p, ctx: r.Context(), id: p.nextID.Add(1), sendS: p.now(), userAgent: r.Header.Get("User-Agent")}
	x.lastByte.Store(math.Float64bits(x.sendS))
	b, err := readBody(r, p.o.MaxBody)
	if err != nil {
		return nil, err
	}
	x.api = apiOf(r.URL.Path)
	if x.api == trace.APIResponses && b.whole {
		b.readResponses() // the Responses API streams its usage unasked: nothing to inject
	} else if p.o.InjectUsage {
		b.injectUsage(r)
	}
	x.body = b
	group := sessionGroup(r, b)
	var from *convHash
	if prev := b.resp.PreviousResponseID; prev != "" {
		if g, h, ok := p.chains.get(prev); ok {
			group, from = g, h
		}
	}
	x.keys, x.conv = b.keys(from)
	x.toolsB = b.toolsBytes()
	x.promptB = x.conv.bytes + x.toolsB
	p.awaitFirstAttempt(x, group)
	x.asg = p.sessions.assign(group, x.keys, b.toolResults(), x.sendS)
	if n := len(x.keys); n > 0 {
		x.keys = []key{x.keys[n-1]} // the reply extends the last
	}
	b.forget(p.o.Content != nil)
	if a := x.asg.answered; a != nil {
		p.out.resolve(x.asg.lane.name, a.seq, a.toolS)
	}
	p.mu.Lock()
	p.open[x.id] = x
	p.mu.Unlock()
	p.observe(func(o Observer) { o.Sent(x.seen()) })
	return x, nil
}

// awaitFirstAttempt makes x, when it repeats the whole messages of a request of its group
// still open and sent at least resendWait before it, wait until that one has ended (or
// resendWait has passed). A harness that gives
// up on a stream and re-sends it closes the first attempt's connection before the re-send
// arrives, but the proxy learns of the close on another goroutine: without the wait, the
// re-send could be placed while its first attempt looks in flight, as a concurrent sibling
// in a lane of its own, and neither the trace nor the watch would see the retry. It then
// registers x as its group's open request with those messages.
func (p *Proxy) awaitFirstAttempt(x *exchange, group string) {
	if len(x.keys) == 0 {
		return
	}
	tk := twinKey{group, x.keys[len(x.keys)-1]}
	x.endedC = make(chan struct{})
	p.mu.Lock()
	first := p.resending[tk]
	p.resending[tk] = x
	p.mu.Unlock()
	x.twin = tk
	wait := p.o.Clock.ToSim(resendWait)
	if first == nil || x.sendS-first.sendS < wait.Seconds() {
		return // none, or sent with it: a concurrent twin
	}
	t := p.o.Clock.NewTimer(wait)
	defer t.Stop()
	select {
	case <-first.endedC:
		// The first attempt had ended when x was sent; the proxy only noticed later. x
		// follows it, so it is placed as sent at that end (milliseconds later than it
		// arrived), not before the request it follows.
		if first.endS > x.sendS {
			x.sendS = first.endS
			x.lastByte.Store(math.Float64bits(x.sendS))
		}
	case <-t.C:
	case <-x.ctx.Done():
	}
}

// codexSessionHeader is the header Codex CLI names its session in.
const codexSessionHeader = "Session-Id"

// sessionGroup is the session the harness names: its session header, its agent header
// (wire.SessionIDHeader, wire.AgentIDHeader), Codex CLI's session-id, then a Responses
// request's prompt_cache_key (Codex sends the session's id), then the user field; "" when it
// names none.
func sessionGroup(r *http.Request, b *parsedBody) string {
	for _, h := range []string{wire.SessionIDHeader, wire.AgentIDHeader, codexSessionHeader} {
		if v := strings.TrimSpace(r.Header.Get(h)); v != "" {
			return v
		}
	}
	if k := strings.TrimSpace(b.resp.PromptCacheKey); k != "" {
		return k
	}
	return b.req.User
}

// end records the ended request.
func (p *Proxy) end(x *exchange) {
	if x.endS < x.sendS {
		x.endS = p.now()
	}
	x.complete(x.endS)
	p.mu.Lock()
	delete(p.open, x.id)
	p.mu.Unlock()
	req := x.request()
	class, _ := x.outcome()
	p.observe(func(o Observer) { o.Ended(x.seen(), x.endS, req, class, int(x.chunks.Load())) })
	p.out.add(finished{req: req, content: x.content(), awaits: x.awaits})
	if x.endedC != nil {
		p.mu.Lock()
		if p.resending[x.twin] == x {
			delete(p.resending, x.twin)
		}
		p.mu.Unlock()
		close(x.endedC)
	}
}

// rewrite points the outgoing request at the server.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	up := p.o.Upstream
	pr.Out.URL.Scheme, pr.Out.URL.Host = up.Scheme, up.Host
	if base := strings.TrimSuffix(up.Path, "/"); base != "" && !strings.HasPrefix(pr.Out.URL.Path, base+"/") {
		pr.Out.URL.Path = base + pr.Out.URL.Path
		pr.Out.URL.RawPath = ""
	}
	pr.Out.Host = ""
	if _, ok := pr.In.Context().Value(exchangeKey{}).(*exchange); ok {
		// The tee must read what the harness will read, so a recorded response is never
		// compressed: the harness's Accept-Encoding is dropped, which it cannot tell apart
		// from a server that does not compress.
		pr.Out.Header.Del("Accept-Encoding")
	}
}

// modifyResponse puts the tee on a recorded response's body.
func (p *Proxy) modifyResponse(resp *http.Response) error {
	x, ok := resp.Request.Context().Value(exchangeKey{}).(*exchange)
	if !ok {
		return nil
	}
	x.status, x.headersS = resp.StatusCode, p.now()
	x.lastByte.Store(math.Float64bits(x.headersS))
	x.body.releaseSent() // answered: never sent again
	p.observe(func(o Observer) { o.Headers(x.seen(), x.headersS, x.status) })
	sse := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	t := &tee{body: resp.Body, x: x, sse: sse, wantLen: resp.ContentLength}
	if b, ok := resp.Body.(*upBody); ok && x.hw != nil && b.canPump() {
		t.up, x.hw.body, x.hw.pumped, x.hw.deferHead = b, t, true, b.c.br.Buffered() > 0
	}
	resp.Body = t
	return nil
}

// errorHandler answers when the server could not be reached or failed before its headers:
// 502 with an OpenAI-style error body naming the cause — the one answer the proxy makes up,
// since the harness cannot reach the server's own failure through it.
func (p *Proxy) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	if x, ok := r.Context().Value(exchangeKey{}).(*exchange); ok {
		x.failure = redact.Text(err.Error())
		x.body.releaseSent()
	}
	if r.Context().Err() != nil {
		return // the harness went away: no one to answer
	}
	fmt.Fprintf(p.o.Log, "agentsim record: %s %s: %s\n", r.Method, r.URL.Path, redact.Text(err.Error()))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadGateway)
	msg := strings.ReplaceAll(redact.Text(err.Error()), `"`, `'`)
	fmt.Fprintf(w, `{"error":{"message":"agentsim record: the server could not be reached: %s","type":"upstream_unreachable","code":502}}`+"\n", msg)
}

// observe calls f with the observer, if any.
func (p *Proxy) observe(f func(Observer)) {
	if p.o.Observer != nil {
		f(p.o.Observer)
	}
}

// OpenRequest is a recorded request in flight at one instant.
type OpenRequest struct {
	Seen
	// LastByteS is when it last received a byte (headers or body), or its send time before
	// any; Chunks counts the reads that brought body bytes.
	LastByteS float64
	Chunks    int
}

// Open returns the recorded requests in flight, and the time of the snapshot in seconds.
func (p *Proxy) Open() ([]OpenRequest, float64) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	now := p.now()
	out := make([]OpenRequest, 0, len(p.open))
	for _, x := range p.open {
		out = append(out, OpenRequest{Seen: x.seen(), LastByteS: math.Float64frombits(x.lastByte.Load()), Chunks: int(x.chunks.Load())})
	}
	return out, now
}

// Now returns the time since the recording began, in seconds, as the trace measures it.
func (p *Proxy) Now() float64 { return p.now() }

// Close stops accepting requests, waits for those in flight to end, and writes the last
// trace lines. Call it after the server that serves the proxy has stopped (http.Server.Close
// ends the streams in flight: they are recorded as cancelled). It returns the first error
// writing the trace.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return p.out.err()
	}
	p.closed = true
	p.mu.Unlock()
	p.inFlight.Wait()
	if p.own != nil {
		p.own.CloseIdleConnections()
	}
	return p.out.close()
}

// Recorded returns the number of trace lines written so far.
func (p *Proxy) Recorded() int { return p.out.written() }
