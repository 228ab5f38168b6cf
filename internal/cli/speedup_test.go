package cli

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/fakeserver"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
)

// TestServerClock checks that a command against an agentsim server adopts its speedup and
// says so, and runs in real time against any other server.
func TestServerClock(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   float64
		said   string
	}{
		{"50", 50, "running at speedup 50: this run adopts it"},
		{"", 1, ""},
	} {
		srv := (&fakeserver.Server{Speedup: tc.header}).Start(t)
		c := &cobra.Command{}
		c.SetContext(context.Background())
		var stderr bytes.Buffer
		c.SetErr(&stderr)
		clk, err := serverClock(c, srv.URL, "")
		srv.Close()
		require.NoError(t, err)
		assert.Equal(t, tc.want, clk.Speedup(), "header %q", tc.header)
		if tc.said == "" {
			assert.Empty(t, stderr.String())
		} else {
			assert.Contains(t, stderr.String(), tc.said)
		}
	}
}

// TestRunAdoptsTheServersSpeedup checks that agentsim run against an agentsim server at
// speedup 50 runs at its speedup, says so, and records it.
func TestRunAdoptsTheServersSpeedup(t *testing.T) {
	clk, err := clock.New(50)
	require.NoError(t, err)
	sim := simtest.NewLoopbackServer(t, simserver.Options{Clock: clk})
	defer sim.Close()
	dir := filepath.Join(t.TempDir(), "run")
	args := append([]string{"run", "--server", sim.URL, "--out", dir}, quickSmoke...)
	code, out, stderr := execute(t, args...)
	require.Equal(t, ExitOK, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	assert.Contains(t, stderr, "is an agentsim server running at speedup 50: this run adopts it")
	res, err := results.Read(dir)
	require.NoError(t, err)
	assert.Equal(t, 50.0, res.Speedup, "results.json's speedup")
}

// failingFirst is a transport that fails its first n requests as an unreachable server does,
// then sends the rest through next.
type failingFirst struct {
	n    int
	next http.RoundTripper
}

func (f *failingFirst) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.n > 0 {
		f.n--
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	}
	return f.next.RoundTrip(r)
}

// TestAwaitServerClock checks that record --watch started before its agentsim server listens
// waits for it, asking every second and saying so once, and then adopts its speedup rather
// than wall time; and that Ctrl-C ends the wait as an interrupt.
func TestAwaitServerClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts, hc := (&fakeserver.Server{Speedup: "20"}).StartInMemory(t)
		probe := &http.Client{Transport: &failingFirst{n: 3, next: hc.Transport}}
		c := &cobra.Command{}
		c.SetContext(t.Context())
		var stderr bytes.Buffer
		c.SetErr(&stderr)
		start := time.Now()
		clk, err := awaitServerClock(c, probe, ts.URL, "")
		require.NoError(t, err)
		assert.Equal(t, 20.0, clk.Speedup(), "the server's speedup once it answers")
		assert.Equal(t, 3*time.Second, time.Since(start), "three failed asks, a second apart")
		assert.Equal(t, 1, strings.Count(stderr.String(), "does not answer yet (dial tcp: connection refused): waiting for it"), stderr.String())
		assert.Contains(t, stderr.String(), "running at speedup 20: this run adopts it")

		ctx, cancel := context.WithCancel(t.Context())
		c.SetContext(ctx)
		time.AfterFunc(1500*time.Millisecond, cancel)
		_, err = awaitServerClock(c, &http.Client{Transport: &failingFirst{n: 1 << 30}}, ts.URL, "")
		assert.Equal(t, ExitInterrupted, exitCode(err), "%v", err)
	})
}
