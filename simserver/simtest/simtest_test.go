package simtest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// chat sends one short non-streaming request and returns its status and body.
func chat(t *testing.T, s *simtest.Server) (int, string) {
	t.Helper()
	resp, err := s.Client().Post(s.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"deepseek-v4-flash","max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestNewServerInBubble: inside a synctest bubble the server answers in virtual time (the
// prefill and KV transfer alone take over a simulated second) and leaves no goroutine behind.
func TestNewServerInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := simtest.NewServer(t, simserver.Options{})
		assert.Equal(t, simtest.MemoryURL, s.URL)
		start := s.Clock().Now()
		code, body := chat(t, s)
		assert.Equal(t, http.StatusOK, code, body)
		assert.Contains(t, body, `"completion_tokens":4`)
		assert.Greater(t, s.Clock().Since(start).Seconds(), 1.0, "simulated seconds for one request")
	})
}

// TestNewServerOutsideBubble: the in-memory server works without a bubble too, on a fast
// clock; Close twice is fine.
func TestNewServerOutsideBubble(t *testing.T) {
	s := simtest.NewServer(t, simserver.Options{Clock: fastClock(t)})
	code, body := chat(t, s)
	assert.Equal(t, http.StatusOK, code, body)
	s.Close()
	s.Close()
}

// TestNewLoopbackServer: on loopback the URL names a real address any client can dial.
func TestNewLoopbackServer(t *testing.T) {
	s := simtest.NewLoopbackServer(t, simserver.Options{Clock: fastClock(t)})
	assert.True(t, strings.HasPrefix(s.URL, "http://127.0.0.1:"), "URL = %q", s.URL)
	resp, err := http.Get(s.URL + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	code, body := chat(t, s)
	assert.Equal(t, http.StatusOK, code, body)
}

// fastClock runs simulated time 1000 times faster than wall time, for tests outside a bubble.
func fastClock(t *testing.T) *clock.Clock {
	t.Helper()
	clk, err := clock.New(1000)
	require.NoError(t, err)
	return clk
}
