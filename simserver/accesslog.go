package simserver

import (
	"io"
	"strconv"
	"sync"
	"time"
)

// accessLogTimeLayout is the SGLang model gateway's timestamp layout, in UTC.
const accessLogTimeLayout = "2006-01-02 15:04:05"

// accessLog writes two lines per chat request in the SGLang model gateway's style: one when
// the request arrives (target smg::request) and one when its response ends (target
// smg::response, latency in integer microseconds), both carrying the request's id:
//
//	2026-11-29 19:44:13 INFO smg::request: started processing request request_id=9f2c… method=POST uri=/v1/chat/completions
//	2026-11-29 19:45:16 INFO smg::response: finished processing request request_id=9f2c… method=POST uri=/v1/chat/completions status=200 latency=62690782
//
// 4xx end lines are WARN "request failed with client error", 5xx lines ERROR "request failed
// with server error". Unlike the gateway (whose latency ends at the response head), the end
// line is written when the response ends and its latency runs from request arrival to that
// end. Timestamps and latencies are both simulated time, so they cross-check: an end line's
// timestamp minus its latency is its start line's timestamp (to the second the layout shows).
// Lines are written whole, under a mutex, so concurrent requests never interleave.
type accessLog struct {
	mu sync.Mutex
	w  io.Writer
}

// started writes the line of a request that arrived at now (simulated).
func (l *accessLog) started(now time.Time, id, method, uri string) {
	if l == nil || l.w == nil {
		return
	}
	var arr [256]byte
	b := now.UTC().AppendFormat(arr[:0], accessLogTimeLayout)
	b = append(b, " INFO smg::request: started processing request"...)
	b = appendRequest(b, id, method, uri)
	l.write(append(b, '\n'))
}

// record writes the line of a request that ended at now (simulated) after latency.
func (l *accessLog) record(now time.Time, id, method, uri string, status int, latency time.Duration) {
	if l == nil || l.w == nil {
		return
	}
	var arr [256]byte
	b := now.UTC().AppendFormat(arr[:0], accessLogTimeLayout)
	switch {
	case status >= 500:
		b = append(b, " ERROR smg::response: request failed with server error"...)
	case status >= 400:
		b = append(b, " WARN smg::response: request failed with client error"...)
	default:
		b = append(b, " INFO smg::response: finished processing request"...)
	}
	b = appendRequest(b, id, method, uri)
	b = append(b, " status="...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, " latency="...)
	b = strconv.AppendInt(b, latency.Microseconds(), 10)
	l.write(append(b, '\n'))
}

// appendRequest appends the fields that name a request.
func appendRequest(b []byte, id, method, uri string) []byte {
	b = append(b, " request_id="...)
	b = append(b, id...)
	b = append(b, " method="...)
	b = append(b, method...)
	b = append(b, " uri="...)
	return append(b, uri...)
}

func (l *accessLog) write(line []byte) {
	l.mu.Lock()
	_, _ = l.w.Write(line)
	l.mu.Unlock()
}

// maxRequestIDBytes bounds a client's x-request-id the log repeats.
const maxRequestIDBytes = 64

// requestID is the id the log gives a request: the client's x-request-id when it is a short
// token of letters, digits and ._:-, as the gateway takes it, or else one of the server's own,
// so a client cannot write arbitrary text (a newline, a fake line) into the log.
func (s *Server) requestID(header string) string {
	if n := len(header); n > 0 && n <= maxRequestIDBytes && safeToken(header) {
		return header
	}
	return strconv.FormatUint(mix64(^s.idSeed^s.requests.Add(1)), 16)
}

func safeToken(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}
