package simserver_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestServeCancelLeavesNoGoroutine serves on a real loopback socket, holds a streaming and a
// non-streaming request open (both pinned in prefill), cancels Serve's context, and checks
// that Serve returns, both clients see their responses cut, and no goroutine is left.
func TestServeCancelLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t)
	clk, err := clock.New(1000)
	require.NoError(t, err)
	faults, err := engine.ParseFaults([]string{"prefill-pin"}, []string{"fraction=1"}, 1)
	require.NoError(t, err)
	srv, err := simserver.New(simserver.Options{Clock: clk, Faults: faults, Profile: admissionProfile()})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	url := "http://" + ln.Addr().String() + "/v1/chat/completions"
	resp, err := client.Post(url, "application/json", strings.NewReader(streamBody("")))
	require.NoError(t, err)
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, line, `"role":"assistant"`, "the stream is open")
	nonStream := make(chan error, 1)
	go func() {
		r, err := client.Post(url, "application/json", strings.NewReader(`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"x"}]}`))
		if err == nil {
			r.Body.Close()
		}
		nonStream <- err
	}()
	for srv.Engine().Stats().PrefillInflight < 2 {
		_ = clk.Sleep(context.Background(), 100*time.Millisecond)
	}

	cancel()
	guard := clk.NewTimer(time.Hour) // a hang guard, not a performance bound
	defer guard.Stop()
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-guard.C:
		t.Fatal("Serve did not return after its context was cancelled")
	}
	_, err = io.Copy(io.Discard, resp.Body)
	assert.Error(t, err, "the open stream is cut, not ended with [DONE]")
	assert.Error(t, <-nonStream, "the pending non-streaming request gets no response")
	_, err = client.Get("http://" + ln.Addr().String() + "/health")
	assert.Error(t, err, "the listener is closed")
	assert.Error(t, srv.Serve(context.Background(), ln), "Serve runs once")
}
