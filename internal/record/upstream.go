package record

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"sync"
	"syscall"
	"time"
)

// Transport is the proxy's way to the server (Options.Transport's default): a recorded
// request to a plain-HTTP server goes over a connection of Transport's own, written and read
// by the goroutine that forwards the stream; anything else — HTTPS, a server reached through
// a proxy from the environment, a request the trace does not record — goes through Std.
//
// http.Transport keeps two goroutines and a read and a write buffer for every connection,
// for as long as it is open: with thousands of streams open through the proxy, that was a
// third of what each cost. Here a connection is its socket and its read buffer; the request
// is written by a goroutine that ends when it is, and a connection goes back to the pool only
// once its response was read to its end, the request written whole, and neither side asked to
// close it.
type Transport struct {
	// Std carries what Transport does not, and dials Transport's connections (its
	// DialContext, or a net.Dialer when it has none).
	Std *http.Transport
	// MaxIdlePerHost bounds the idle connections kept per server; 0 keeps none.
	MaxIdlePerHost int

	mu     sync.Mutex
	idle   map[string][]*upConn // by host:port, the most recently used last
	closed bool
}

// NewTransport returns a Transport over std, keeping as many idle connections per server as
// std does (MaxIdleConnsPerHost, or http.DefaultMaxIdleConnsPerHost when 0).
func NewTransport(std *http.Transport) *Transport {
	n := std.MaxIdleConnsPerHost
	if n == 0 {
		n = http.DefaultMaxIdleConnsPerHost
	}
	return &Transport{Std: std, MaxIdlePerHost: n, idle: map[string][]*upConn{}}
}

// upConn is a connection of Transport's to the server, and its read buffer while it has
// one: a connection whose last response was pumped (upBody.pump) gave its buffer back, and
// is lent one again for the next response's head.
type upConn struct {
	net.Conn
	br  *bufio.Reader
	raw syscall.RawConn // the socket, when the connection has one: pump waits on it with no buffer
}

// headReaders lend the read buffers of connections whose responses are pumped.
var headReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, upstreamReadBuffer) }}

// headWriters lend the buffers requests are written through: a request's head is a few
// hundred bytes, and its body, larger than the buffer, is written past it.
var headWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, upstreamWriteBuffer) }}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.carries(req) {
		return t.Std.RoundTrip(req)
	}
	addr := req.URL.Host
	if req.URL.Port() == "" {
		addr = net.JoinHostPort(req.URL.Hostname(), "80")
	}
	c, reused, err := t.get(req.Context(), addr)
	if err != nil {
		return nil, err
	}
	if c.br == nil {
		c.br = headReaders.Get().(*bufio.Reader)
		c.br.Reset(c.Conn)
	}
	// A client trace is told what net/http's Transport tells it of the connection and the
	// answer's first byte: internal/keepalive resends a request lost on a reused connection
	// by them.
	trace := httptrace.ContextClientTrace(req.Context())
	if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: c.Conn, Reused: reused})
	}
	// The harness going away closes the connection, which ends a read or write in progress.
	stop := context.AfterFunc(req.Context(), func() { c.Close() })
	written := make(chan error, 1)
	if req.ContentLength >= 0 && req.ContentLength <= inlineBody && req.GetBody != nil {
		// A body held whole and small enough for the socket's buffer: the write ends at once,
		// whether or not the server reads, and needs no goroutine of its own.
		written <- writeRequest(c, req)
	} else {
		go func() { written <- writeRequest(c, req) }() // beside the read: a server may answer before it has read the body
	}
	resp, err := readResponse(c.br, req, trace)
	if err != nil {
		stop()
		c.Close()
		<-written
		if cerr := req.Context().Err(); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	resp.Body = &upBody{body: resp.Body, resp: resp, t: t, c: c, addr: addr, stop: stop, written: written,
		keep: !resp.Close && !req.Close}
	return resp, nil
}

// inlineBody is the largest request body, in bytes, that RoundTrip writes before it reads
// the response, on its own goroutine: a write that size goes into the socket's send buffer
// (at least 16 KiB on Linux) without waiting for the server to read it.
const inlineBody = 8 << 10

// carries reports whether t carries req itself: a recorded request to a plain-HTTP server
// that the environment names no proxy for.
func (t *Transport) carries(req *http.Request) bool {
	if _, ok := req.Context().Value(exchangeKey{}).(*exchange); !ok || req.URL.Scheme != "http" {
		return false
	}
	if t.Std.Proxy != nil {
		if u, err := t.Std.Proxy(req); err != nil || u != nil {
			return false
		}
	}
	return true
}

// writeRequest writes req to c through a lent buffer.
func writeRequest(c *upConn, req *http.Request) error {
	bw := headWriters.Get().(*bufio.Writer)
	bw.Reset(c)
	err := req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	headWriters.Put(bw)
	return err
}

// readResponse reads req's response from br, past any informational (1xx) head, and tells
// trace, when it has GotFirstResponseByte, of the first byte.
func readResponse(br *bufio.Reader, req *http.Request, trace *httptrace.ClientTrace) (*http.Response, error) {
	if _, err := br.Peek(1); err != nil {
		return nil, err
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil || resp.StatusCode >= http.StatusOK || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, err
		}
	}
}

// get returns an idle connection to addr that is still open, and true, or a new one.
func (t *Transport) get(ctx context.Context, addr string) (*upConn, bool, error) {
	for {
		t.mu.Lock()
		l := t.idle[addr]
		if len(l) == 0 {
			t.mu.Unlock()
			break
		}
		c := l[len(l)-1]
		l[len(l)-1] = nil
		t.idle[addr] = l[:len(l)-1]
		t.mu.Unlock()
		if c.open() {
			return c, true, nil
		}
		c.Close()
	}
	dial := t.Std.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	nc, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	c := &upConn{Conn: nc, br: bufio.NewReaderSize(nc, upstreamReadBuffer)}
	if sc, ok := nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw = raw
		}
	}
	return c, false, nil
}

// longAgo is a read deadline already past: a read then returns at once.
var longAgo = time.Unix(1, 0)

// open reports whether an idle connection can carry another request: the server has neither
// closed it nor sent anything unasked since its last response. A read that can only time out
// tells, without waiting.
func (c *upConn) open() bool {
	if c.br != nil && c.br.Buffered() > 0 || c.SetReadDeadline(longAgo) != nil {
		return false
	}
	var err error
	if c.br != nil {
		_, err = c.br.Peek(1)
	} else {
		var one [1]byte
		if n, rerr := c.Conn.Read(one[:]); n == 0 {
			err = rerr
		}
	}
	if c.SetReadDeadline(time.Time{}) != nil {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// put keeps c for another request to addr, or closes it when the pool is full or closed.
func (t *Transport) put(addr string, c *upConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || len(t.idle[addr]) >= t.MaxIdlePerHost {
		c.Close()
		return
	}
	t.idle[addr] = append(t.idle[addr], c)
}

// CloseIdleConnections closes the idle connections, Std's too; Transport keeps none after.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle, t.closed = map[string][]*upConn{}, true
	t.mu.Unlock()
	for _, l := range idle {
		for _, c := range l {
			c.Close()
		}
	}
	t.Std.CloseIdleConnections()
}

// upBody is the body of a response Transport carried: at its end, or when it is closed, the
// connection goes back to the pool or is closed, once the request's write has ended.
type upBody struct {
	body    io.ReadCloser
	resp    *http.Response
	t       *Transport
	c       *upConn
	addr    string
	stop    func() bool // stops the close on the harness's going away; false once it ran
	written chan error  // the request's write, once it has ended
	keep    bool        // neither side asked to close the connection after this exchange
	done    bool
	read    bool // Read was called: the body is read through body
	pumped  bool // pump was called: body, and the connection's buffer, are not read
}

// Read implements io.Reader.
func (b *upBody) Read(p []byte) (int, error) {
	b.read = true
	n, err := b.body.Read(p)
	if err == io.EOF {
		b.release(true)
	}
	return n, err
}

// Close implements io.Closer. A body closed before its end closes the connection first, since
// the rest of the response (a stream the harness left) would otherwise be read to its end.
func (b *upBody) Close() error {
	b.release(false)
	if b.pumped {
		return nil // body would read the rest from a buffer the connection no longer has
	}
	return b.body.Close()
}

// release gives the connection back once the response was read whole (whole), the request
// written whole and the connection may carry another; it closes it otherwise. It waits for
// the request's write to end, up to writeGrace, and then closes the connection first (a
// server that answered without reading the whole body).
func (b *upBody) release(whole bool) {
	if b.done {
		return
	}
	b.done = true
	armed := b.stop()
	if whole && armed && b.keep {
		if ended, err := b.writeEnded(); ended {
			if err == nil {
				b.t.put(b.addr, b.c)
				return
			}
			b.c.Close()
			return
		}
	}
	b.c.Close()
	<-b.written
}

// writeEnded reports whether the request's write has ended, waiting up to writeGrace, and how.
func (b *upBody) writeEnded() (bool, error) {
	select {
	case err := <-b.written:
		return true, err
	default:
	}
	grace := time.NewTimer(writeGrace)
	defer grace.Stop()
	select {
	case err := <-b.written:
		return true, err
	case <-grace.C:
		return false, nil
	}
}

// writeGrace is how long a response read whole waits for its request's write to end before
// its connection is closed rather than reused. The server has answered, so the write has
// ended or is about to report it: the goroutine that wrote the body's last bytes may not have
// run since (a clean-clone CI run under -race saw three requests in turn take two
// connections, TestTransportReusesConnections). A write still going after it is a server
// that answered without reading the whole body (TestTransportEarlyAnswer), whose connection
// cannot carry another request.
const writeGrace = 10 * time.Millisecond

// canPump reports whether pump can carry the body: a chunked body no Read has begun.
func (b *upBody) canPump() bool {
	te := b.resp.TransferEncoding
	return !b.read && !b.pumped && !b.done && b.body != http.NoBody && len(te) == 1 && te[0] == "chunked"
}

// pumpBufferSize is the buffer a pumped read is made into, in bytes. It is lent for the
// read, the parse and the write to the harness, and held by no open stream: a read brings
// all that the server sent since the last, however many frames, in one system call, and it
// goes to the harness in one write.
const pumpBufferSize = 32 << 10

// pumpBuffers lend the buffers pumped reads are made into.
var pumpBuffers = sync.Pool{New: func() any { return new([pumpBufferSize]byte) }}

// pump reads the body to its end, straight from the connection, and hands each read's data,
// its chunked framing removed, to each; it returns io.EOF at the body's end (the connection
// then released, see release), or how reading it failed, or each's error. The response's
// trailer, if any, is in b.resp.Trailer at the end, as net/http's body leaves it.
//
// It replaces body's reads, for the responses the proxy records: net/http's chunked reader
// reads a chunk at a time through the connection's 2 KiB buffer, one frame a chunk, and a
// read of the connection brings at most that buffer's worth. Here a read waits for the
// socket with no buffer (upConn.readLent) and then takes what it holds, up to
// pumpBufferSize, so that the frames the server sent while the proxy was busy elsewhere cost
// one read and one write; and the connection's buffer goes back to a pool once the head is
// read, so an open stream holds no read buffer at all.
//
// headDone is called once what came with the head has been handed to each, before any wait;
// each is told whether its data ends the body (last).
func (b *upBody) pump(headDone func(), each func(p []byte, last bool) error) error {
	b.pumped = true
	c := b.c
	var d dechunker
	// What the head's read brought of the body comes first (the buffer is smaller than a
	// pump buffer), and the connection's buffer goes back to its pool.
	if n := c.br.Buffered(); n > 0 {
		buf := pumpBuffers.Get().(*[pumpBufferSize]byte)
		k, _ := c.br.Read(buf[:n])
		err := b.pumpRead(&d, buf[:k], each)
		pumpBuffers.Put(buf)
		if err != nil {
			headDone()
			return err
		}
	}
	headDone()
	c.br.Reset(nil)
	headReaders.Put(c.br)
	c.br = nil
	for !d.done() {
		buf, n, err := c.readLent()
		if n > 0 {
			perr := b.pumpRead(&d, buf[:n], each)
			pumpBuffers.Put(buf)
			if perr != nil {
				return perr
			}
		}
		if err != nil && !d.done() {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	tr, err := d.trailers()
	if err != nil {
		return err
	}
	for k, vv := range tr {
		if b.resp.Trailer == nil {
			b.resp.Trailer = http.Header{}
		}
		b.resp.Trailer[k] = vv
	}
	b.release(true)
	return io.EOF
}

// pumpRead decodes one read of the body and hands its data, if any, to each.
func (b *upBody) pumpRead(d *dechunker, p []byte, each func(p []byte, last bool) error) error {
	n, extra, err := d.decode(p)
	if extra > 0 {
		b.keep = false // the server sent more than its response: the connection is not reused
	}
	if n > 0 {
		// The last data, when no trailer follows it that could yet fail to parse.
		last := err == nil && d.done() && len(d.trailer) == 0
		if werr := each(p[:n], last); werr != nil {
			return werr
		}
	}
	return err
}

// readLent reads what the connection holds into a lent buffer, once there is something to
// read: the socket's readiness is waited for with no buffer, so an open stream between two
// reads holds none. It returns the buffer (nil when n is 0), which the caller gives back to
// pumpBuffers, and io.EOF when the server has closed the connection.
func (c *upConn) readLent() (*[pumpBufferSize]byte, int, error) {
	if c.raw == nil {
		buf := pumpBuffers.Get().(*[pumpBufferSize]byte)
		for {
			n, err := c.Conn.Read(buf[:])
			if n > 0 {
				return buf, n, nil // an error with bytes comes again on the next read
			}
			if err != nil {
				pumpBuffers.Put(buf)
				return nil, 0, err
			}
		}
	}
	var (
		buf  *[pumpBufferSize]byte
		n    int
		serr error
	)
	err := c.raw.Read(func(fd uintptr) bool {
		buf = pumpBuffers.Get().(*[pumpBufferSize]byte)
		for {
			n, serr = syscall.Read(int(fd), buf[:])
			if serr != syscall.EINTR {
				break
			}
		}
		if serr == syscall.EAGAIN {
			pumpBuffers.Put(buf)
			buf = nil
			return false // nothing yet: wait for the socket, holding no buffer
		}
		return true
	})
	if err == nil && serr != nil {
		err = os.NewSyscallError("read", serr)
	}
	if err != nil || n <= 0 {
		if buf != nil {
			pumpBuffers.Put(buf)
		}
		if err == nil {
			return nil, 0, io.EOF
		}
		return nil, 0, &net.OpError{Op: "read", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	return buf, n, nil
}
