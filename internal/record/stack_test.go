package record_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/record"
)

// TestOpenStreamKeepsASmallStack: the goroutine that carries a recorded stream (the harness's
// connection's) never needs more than 8 KiB of stack, with and without the watch, so an open
// stream does not keep 16 (BenchmarkOpenStreamMemory, docs/speed.md). Writing the response's
// head took it past 8 KiB under httputil.ReverseProxy and the pump until the head went out on a
// goroutine of its own. A goroutine past the bound stops the test binary with "goroutine
// stack exceeds 8192-byte limit" and the stack that went past it. The first request of each
// proxy is sent before the bound: it fills encoding/json's and net/http's caches once, kilobytes
// deep.
func TestOpenStreamKeepsASmallStack(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes every frame larger")
	}
	up := heldServer()
	defer up.Close()
	u, err := url.Parse(up.URL)
	require.NoError(t, err)
	for _, watch := range []bool{false, true} {
		o := record.Options{Upstream: u, Trace: io.Discard}
		if watch {
			w, err := record.NewWatcher(record.WatchOptions{Dir: t.TempDir(), Upstream: up.URL})
			require.NoError(t, err)
			defer w.Close()
			o.Observer = w
		}
		p, err := record.New(o)
		require.NoError(t, err)
		px := httptest.NewServer(p)
		for _, body := range []string{
			`{"model":"m","stream":true,"messages":[{"role":"user","content":"warm"}]}`,
			`{"model":"m","stream":true,"messages":[{"role":"user","content":"bench"}]}`,
			`{"model":"m","stream":true,"messages":[{"role":"system","content":"` + strings.Repeat("page text ", 3<<10) + `"},{"role":"user","content":"bench"}]}`,
		} {
			func() {
				if !strings.Contains(body, "warm") {
					defer debug.SetMaxStack(debug.SetMaxStack(8 << 10))
				}
				req, err := http.NewRequest(http.MethodPost, px.URL+"/v1/chat/completions", strings.NewReader(body))
				require.NoError(t, err)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				first := make([]byte, 64)
				_, err = resp.Body.Read(first) // the head and the first frame: the stream is open
				require.NoError(t, err)
			}()
		}
		px.CloseClientConnections()
		px.Close()
		_ = p.Close()
	}
}
