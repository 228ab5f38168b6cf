package traceimport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentsim/agentsim/internal/shown"
)

// The messages of the SGLang router's request lines (sgl-router targets
// sglang_router_rs::request / ::response, the model gateway's smg::request / smg::response).
const (
	msgStarted     = "started processing request"
	msgFinished    = "finished processing request"
	msgClientError = "request failed with client error"
	msgServerError = "request failed with server error"
)

// logLine is one request line of a router access log.
type logLine struct {
	n       int       // line number, 1-based
	at      time.Time // the line's timestamp
	res     float64   // its resolution in seconds: 1 for "19:45:16", 1e-6 for "19:45:16.123456"
	clock   string    // its time of day as written, "19:45:16"
	started bool      // a "started processing request" line; otherwise a finish line
	method  string
	uri     string
	id      string // request_id, when the line has one
	status  int    // status_code or status; 0 when absent

	latRaw  string  // the latency as written, "" when absent
	lat     float64 // its number
	latUnit Unit    // its unit when written with one (Debug form, latency_ms); else UnitUnknown
}

// hasLatency reports whether the line carries a latency.
func (l *logLine) hasLatency() bool { return l.latRaw != "" }

// parseLogLine parses one line. It returns ok false for lines that are not request lines
// (other log messages), and an error for a request line it cannot read.
func parseLogLine(b []byte, n int) (logLine, bool, error) {
	if bytes.IndexByte(b, 0x1b) >= 0 {
		b = stripANSI(b)
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		return parseJSONLogLine(t, n)
	}
	s := string(b)
	started := strings.Contains(s, msgStarted)
	if !started && !strings.Contains(s, msgFinished) && !strings.Contains(s, msgClientError) && !strings.Contains(s, msgServerError) {
		return logLine{}, false, nil
	}
	l := logLine{n: n, started: started}
	var err error
	l.at, l.res, l.clock, err = parseLogTime(s)
	if err != nil {
		return logLine{}, false, err
	}
	fields(s, l.set)
	return l.finishParse()
}

// set takes one field of a request line.
func (l *logLine) set(k, v string) {
	switch k {
	case "method":
		l.method = v
	case "uri":
		l.uri = v
	case "request_id":
		l.id = v
	case "status_code", "status":
		l.status, _ = strconv.Atoi(v)
	case "latency", "latency_ms":
		l.latRaw = v
	}
	if k == "latency_ms" {
		l.latRaw = v + "ms"
	}
}

// finishParse reads the latency the fields gave.
func (l logLine) finishParse() (logLine, bool, error) {
	if l.hasLatency() {
		var ok bool
		l.lat, l.latUnit, ok = parseLatency(l.latRaw)
		if !ok {
			return logLine{}, false, fmt.Errorf("latency = %s: must be a number, bare or with a unit (62690782, 62.690782s, 1.5ms)", l.latRaw)
		}
	}
	return l, true, nil
}

// parseJSONLogLine parses a line of tracing's JSON format: {"timestamp":…,"level":…,
// "message":… or "fields":{"message":…}, "span":{…}, "spans":[{…}…]}, the span fields
// (method, uri, request_id, status_code, latency) in "span" and "spans".
func parseJSONLogLine(b []byte, n int) (logLine, bool, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return logLine{}, false, nil // not a JSON log line
	}
	fieldsOf := func(v any) map[string]any { o, _ := v.(map[string]any); return o }
	msg, _ := m["message"].(string)
	if msg == "" {
		msg, _ = fieldsOf(m["fields"])["message"].(string)
	}
	started := msg == msgStarted
	if !started && msg != msgFinished && msg != msgClientError && msg != msgServerError {
		return logLine{}, false, nil
	}
	l := logLine{n: n, started: started}
	ts, _ := m["timestamp"].(string)
	var err error
	if l.at, l.res, l.clock, err = parseLogTime(ts); err != nil {
		return logLine{}, false, fmt.Errorf("timestamp = %q: a JSON request line needs its time, like \"2026-11-29 19:45:16\" or RFC 3339", ts)
	}
	var sources []map[string]any
	if spans, ok := m["spans"].([]any); ok {
		for _, sp := range spans {
			sources = append(sources, fieldsOf(sp))
		}
	}
	sources = append(sources, fieldsOf(m["span"]), fieldsOf(m["fields"]), m)
	for _, src := range sources {
		for _, k := range slices.Sorted(maps.Keys(src)) { // sorted: the same line always reads the same
			switch v := src[k].(type) {
			case string:
				l.set(k, v)
			case json.Number:
				l.set(k, v.String())
			}
		}
	}
	return l.finishParse()
}

// parseLogTime reads the timestamp a line begins with: "2026-11-29 19:45:16" (the router's
// layout, UTC), or RFC 3339 ("2026-11-29T19:45:16.123456Z", tracing's default), with any
// number of fractional digits.
func parseLogTime(s string) (time.Time, float64, string, error) {
	end := strings.IndexAny(s, " \t")
	if end == 10 && len(s) > 11 { // a date, a space, then the time
		if e := strings.IndexAny(s[11:], " \t"); e >= 0 {
			end = 11 + e
		} else {
			end = len(s)
		}
	}
	if end < 0 {
		end = len(s)
	}
	stamp := s[:end]
	if len(stamp) < 19 {
		return time.Time{}, 0, "", fmt.Errorf("a request line must begin with its time, like 2026-11-29 19:45:16; found %q", shown.Elide(stamp))
	}
	layout := "2006-01-02 15:04:05"
	if stamp[10] == 'T' {
		layout = "2006-01-02T15:04:05"
	}
	rest := stamp[19:]
	digits := 0
	if strings.HasPrefix(rest, ".") {
		for digits+1 < len(rest) && rest[digits+1] >= '0' && rest[digits+1] <= '9' {
			digits++
		}
		layout += "." + strings.Repeat("9", digits)
		rest = rest[1+digits:]
	}
	if rest != "" { // "Z" or an offset
		layout += "Z07:00"
	}
	t, err := time.Parse(layout, stamp)
	if err != nil {
		return time.Time{}, 0, "", fmt.Errorf("a request line must begin with its time, like 2026-11-29 19:45:16; found %q", shown.Elide(stamp))
	}
	res := 1.0
	if digits > 0 {
		res = 1 / float64(pow10(digits))
	}
	clock := stamp[11:19]
	if digits > 0 {
		clock = stamp[11 : 20+digits]
	}
	return t.UTC(), res, clock, nil
}

func pow10(n int) int64 {
	p := int64(1)
	for ; n > 0 && p < 1e18; n-- {
		p *= 10
	}
	return p
}

// fields calls f for each key=value pair of a tracing line: span fields inside
// "http_request{…}" and event fields after the message alike. Values may be quoted.
func fields(s string, f func(k, v string)) {
	for i := 0; i < len(s); i++ {
		if s[i] != '=' || i == 0 {
			continue
		}
		k := i
		for k > 0 && isKeyByte(s[k-1]) {
			k--
		}
		if k == i || (k > 0 && s[k-1] != ' ' && s[k-1] != '{' && s[k-1] != ',' && s[k-1] != '\t') {
			continue
		}
		key := s[k:i]
		j := i + 1
		var val string
		if j < len(s) && s[j] == '"' {
			e := j + 1
			for e < len(s) && s[e] != '"' {
				if s[e] == '\\' {
					e++
				}
				e++
			}
			val = strings.ReplaceAll(s[j+1:min(e, len(s))], `\"`, `"`)
			j = e + 1
		} else {
			e := j
			for e < len(s) && s[e] != ' ' && s[e] != '}' && s[e] != '\t' {
				e++
			}
			val = s[j:e]
			j = e
		}
		f(key, val)
		i = j - 1
	}
}

func isKeyByte(c byte) bool {
	return c == '_' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// stripANSI removes terminal colour sequences (ESC [ … letter), which tracing writes when its
// output was a terminal.
func stripANSI(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '[' {
			j := i + 2
			for j < len(b) && !(b[j] >= '@' && b[j] <= '~') {
				j++
			}
			i = j
			continue
		}
		out = append(out, b[i])
	}
	return out
}
