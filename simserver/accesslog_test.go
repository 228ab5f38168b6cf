package simserver_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/internal/wire"
	"github.com/agentsim/agentsim/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockedBuffer is an io.Writer safe for the server's concurrent handlers and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the end lines (smg::response) of the log.
func (l *lockedBuffer) lines() []string {
	return l.target("smg::response:")
}

// target returns the lines of the log whose target is t.
func (l *lockedBuffer) target(t string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(l.b.String(), "\n"), "\n") {
		if strings.Contains(line, " "+t+" ") {
			out = append(out, line)
		}
	}
	return out
}

var accessLine = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) (INFO|WARN|ERROR) smg::response: ` +
	`(finished processing request|request failed with client error|request failed with server error) ` +
	`request_id=([0-9A-Za-z._:-]+) method=POST uri=/v1/chat/completions status=(\d{3}) latency=(\d+)$`)

var startLine = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) INFO smg::request: started processing request ` +
	`request_id=([0-9A-Za-z._:-]+) method=POST uri=/v1/chat/completions$`)

type logLine struct {
	at      time.Time
	level   string
	message string
	id      string
	status  int
	latency time.Duration
}

// parseStartLine returns a start line's timestamp and request id.
func parseStartLine(t *testing.T, line string) (time.Time, string) {
	t.Helper()
	m := startLine.FindStringSubmatch(line)
	require.NotNil(t, m, "access log start line %q", line)
	at, err := time.Parse(simserver.AccessLogTimeLayout, m[1])
	require.NoError(t, err)
	return at, m[2]
}

func parseLogLine(t *testing.T, line string) logLine {
	t.Helper()
	m := accessLine.FindStringSubmatch(line)
	require.NotNil(t, m, "access log line %q", line)
	at, err := time.Parse(simserver.AccessLogTimeLayout, m[1])
	require.NoError(t, err)
	status, _ := strconv.Atoi(m[5])
	us, _ := strconv.ParseInt(m[6], 10, 64)
	return logLine{at: at, level: m[2], message: m[3], id: m[4], status: status, latency: time.Duration(us) * time.Microsecond}
}

// TestAccessLogLatencyIsSimulated runs the incident's decisive test (16 concurrent × 128
// tokens) at speedup 20 and checks that each line's latency is the request's simulated
// duration in integer microseconds — the slowest ≈ 5.4 s, i.e. latency≈5400000 — and its
// timestamp the simulated end time in UTC.
func TestAccessLogLatencyIsSimulated(t *testing.T) {
	bubble(t, func(t *testing.T) {
		clk, err := clock.New(20)
		require.NoError(t, err)
		var log lockedBuffer
		ts := startServer(t, simserver.Options{Clock: clk, AccessLog: &log})
		var wg sync.WaitGroup
		lat := make([]time.Duration, 16)
		for i := range lat {
			wg.Go(func() {
				start := clk.Now()
				resp := ts.post(context.Background(), `{"model":"deepseek-v4-flash","stream":true,"max_tokens":128,"ignore_eos":true,"messages":[{"role":"user","content":"`+
					strings.Repeat("word ", 190)+strconv.Itoa(i)+`"}]}`)
				defer resp.Body.Close()
				_, _ = io.Copy(io.Discard, resp.Body)
				lat[i] = clk.Since(start)
			})
		}
		wg.Wait()
		end := clk.Now()
		lines := log.lines()
		require.Len(t, lines, 16)
		var slowest time.Duration
		for i, line := range lines {
			l := parseLogLine(t, line)
			assert.Equal(t, "INFO", l.level)
			assert.Equal(t, "finished processing request", l.message)
			assert.Equal(t, http.StatusOK, l.status)
			assert.WithinDuration(t, end.UTC(), l.at, 6*time.Second, "line %d timestamp is simulated time", i)
			slowest = max(slowest, l.latency)
		}
		var clientSlowest time.Duration
		for _, d := range lat {
			clientSlowest = max(clientSlowest, d)
		}
		t.Logf("slowest request: %s simulated, logged latency=%d", clientSlowest, slowest.Microseconds())
		assert.InDelta(t, clientSlowest.Microseconds(), slowest.Microseconds(), 1000, "logged µs match the simulated duration")
		assert.InEpsilon(t, 5_400_000, slowest.Microseconds(), 0.1, "the decisive test's 5.4 s")
	})
}

// TestAccessLogLevels checks the WARN line of a 4xx, the ERROR line of a 5xx, and 499 for a
// client that left before any response.
func TestAccessLogLevels(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var log lockedBuffer
		faults, err := engine.ParseFaults([]string{"errors"}, []string{"rate=1", "kind=503"}, 1)
		require.NoError(t, err)
		ts := startServer(t, simserver.Options{AccessLog: &log, Faults: faults})
		resp := ts.post(context.Background(), `{"model":"deepseek-v4-flash"}`)
		resp.Body.Close()
		resp = ts.post(context.Background(), streamBody(""))
		resp.Body.Close()
		lines := log.lines()
		require.Len(t, lines, 2)
		l := parseLogLine(t, lines[0])
		assert.Equal(t, []any{"WARN", "request failed with client error", 400}, []any{l.level, l.message, l.status})
		l = parseLogLine(t, lines[1])
		assert.Equal(t, []any{"ERROR", "request failed with server error", 503}, []any{l.level, l.message, l.status})
	})
	bubble(t, func(t *testing.T) {
		var log lockedBuffer
		ts := startServer(t, simserver.Options{AccessLog: &log})
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			_ = ts.clk.Sleep(context.Background(), 2*time.Second)
			cancel()
		}()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.url+"/v1/chat/completions",
			strings.NewReader(`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"x"}],"max_tokens":1000,"ignore_eos":true}`))
		require.NoError(t, err)
		_, err = ts.client.Do(req)
		require.Error(t, err)
		ts.wait(time.Second)
		lines := log.lines()
		require.Len(t, lines, 1)
		l := parseLogLine(t, lines[0])
		assert.Equal(t, simserver.StatusClientClosed, l.status)
		assert.Equal(t, 2*time.Second, l.latency)
	})
}

// TestAccessLogStartLines checks that every request has a start line before its end line,
// paired by request id, and that the two cross-check: the end timestamp minus the logged
// latency falls in the second the start line shows. A client's x-request-id is kept when it is
// a plain token and replaced when it could forge a line.
func TestAccessLogStartLines(t *testing.T) {
	bubble(t, func(t *testing.T) {
		clk, err := clock.New(10)
		require.NoError(t, err)
		var log lockedBuffer
		ts := startServer(t, simserver.Options{Clock: clk, AccessLog: &log})
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				resp := ts.post(context.Background(), `{"model":"deepseek-v4-flash","stream":true,"max_tokens":`+strconv.Itoa(50+100*i)+
					`,"ignore_eos":true,"messages":[{"role":"user","content":"q`+strconv.Itoa(i)+`"}]}`)
				defer resp.Body.Close()
				_, _ = io.Copy(io.Discard, resp.Body)
			})
		}
		wg.Wait()
		resp := ts.post(context.Background(), `{"model":"deepseek-v4-flash","max_tokens":2,"messages":[{"role":"user","content":"x"}]}`,
			wire.ClientRequestIDHeader, "client-req.42")
		resp.Body.Close()
		resp = ts.post(context.Background(), `{"model":"deepseek-v4-flash","max_tokens":2,"messages":[{"role":"user","content":"x"}]}`,
			wire.ClientRequestIDHeader, "a b status=200")
		resp.Body.Close()

		starts := map[string]time.Time{}
		for _, line := range log.target("smg::request:") {
			at, id := parseStartLine(t, line)
			require.NotContains(t, starts, id, "request ids are unique")
			starts[id] = at
		}
		ends := log.lines()
		require.Len(t, starts, 10)
		require.Len(t, ends, 10)
		for _, line := range ends {
			l := parseLogLine(t, line)
			start, ok := starts[l.id]
			require.True(t, ok, "end line %q has a start line", line)
			began := l.at.Add(-l.latency)
			assert.False(t, began.Before(start.Add(-time.Second)) || began.After(start.Add(time.Second)),
				"end %s − latency %s = %s; want within a second of start %s", l.at, l.latency, began, start)
		}
		assert.Contains(t, starts, "client-req.42", "a plain x-request-id is kept")
		assert.NotContains(t, log.target("smg::request:")[9], "status=200", "an x-request-id with spaces is replaced")
	})
}
