package record_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/fakeserver"
	"github.com/agentsim/agentsim/internal/memnet"
	"github.com/agentsim/agentsim/internal/record"
)

// TestProxyResendsLostToKeepAlive checks that a request the server hangs up on as it arrives on
// the proxy's kept-alive connection — the server's keep-alive timeout racing the proxy's next
// request — is sent once more, so the harness gets its answer and the trace records one
// request that succeeded, not a failure: through net/http's Transport and through the
// proxy's own (record.Transport, its default).
func TestProxyResendsLostToKeepAlive(t *testing.T) {
	for _, own := range []bool{false, true} {
		t.Run(map[bool]string{false: "net-http", true: "own"}[own], func(t *testing.T) { proxyResendsLostToKeepAlive(t, own) })
	}
}

func proxyResendsLostToKeepAlive(t *testing.T, own bool) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeserver.Server{Tokens: 3, HangUpReused: true}
		ts, hc := f.StartInMemory(t)
		// One upstream connection at most: each request after the first reuses it.
		tr := hc.Transport.(*http.Transport)
		tr.MaxConnsPerHost = 1
		up, err := url.Parse(ts.URL)
		require.NoError(t, err)
		buf := &syncBuffer{}
		var rt http.RoundTripper = tr
		if own {
			rt = record.NewTransport(tr)
		}
		p, err := record.New(record.Options{Upstream: up, Trace: buf, Clock: clock.Real(), Transport: rt})
		require.NoError(t, err)
		ln := memnet.Listen()
		srv := &http.Server{Handler: p}
		done := make(chan struct{})
		go func() { _ = srv.Serve(ln); close(done) }()
		client := ln.Client()
		for i, msg := range []string{"one", "two", "three"} {
			body := `{"model":"m","stream":true,"max_tokens":3,"messages":[{"role":"user","content":"` + msg + `"}]}`
			resp, err := client.Post("http://proxy/v1/chat/completions", "application/json", bytes.NewReader([]byte(body)))
			require.NoError(t, err, "request %d", i)
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode, "request %d: %s", i, raw)
			assert.Contains(t, string(raw), "[DONE]", "request %d", i)
		}
		_ = srv.Close()
		<-done
		client.CloseIdleConnections()
		require.NoError(t, p.Close())
		assert.Equal(t, 2, f.HungUp(), "the second and third requests each met a hang-up upstream")
		_, reqs := readTrace(t, buf.String())
		require.Len(t, reqs, 3, "one line a request, its resend not among them")
		for i, r := range reqs {
			assert.Equal(t, 200, r.Status, "request %d", i)
			assert.Empty(t, r.Error, "request %d", i)
		}
	})
}
