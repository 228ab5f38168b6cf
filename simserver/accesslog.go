package simserver

import (
	"io"
	"strconv"
	"sync"
	"time"
)

// accessLogTimeLayout is the SGLang model gateway's timestamp layout, in UTC.
const accessLogTimeLayout = "2006-01-02 15:04:05"

// accessLog writes one line per chat request in the SGLang model gateway's style (target
// smg::response, latency in integer microseconds):
//
//	2026-11-29 19:45:16 INFO smg::response: finished processing request method=POST uri=/v1/chat/completions status=200 latency=62690782
//
// 4xx lines are WARN "request failed with client error", 5xx lines ERROR "request failed with
// server error". Unlike the gateway (whose latency ends at the response head), the line is
// written when the response ends and its latency runs from request arrival to that end, both
// in simulated time. Lines are written whole, under a mutex, so concurrent requests never
// interleave.
type accessLog struct {
	mu sync.Mutex
	w  io.Writer
}

// record writes the line of a request that ended at now (simulated) after latency.
func (l *accessLog) record(now time.Time, method, uri string, status int, latency time.Duration) {
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
	b = append(b, " method="...)
	b = append(b, method...)
	b = append(b, " uri="...)
	b = append(b, uri...)
	b = append(b, " status="...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, " latency="...)
	b = strconv.AppendInt(b, latency.Microseconds(), 10)
	b = append(b, '\n')
	l.mu.Lock()
	_, _ = l.w.Write(b)
	l.mu.Unlock()
}
