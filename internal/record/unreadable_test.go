package record_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/memnet"
	"github.com/agentsim/agentsim/internal/record"
)

// TestUnreadableStreamsFail sends through the proxy responses the agents' client cannot
// read: each passes through whole, and the trace records the request failed with the class
// the client gives it — a line past events.MaxStreamLineBytes (which the proxy keeps no more
// of), data lines that are not JSON chunks, a 2xx that is neither a stream nor a completion.
func TestUnreadableStreamsFail(t *testing.T) {
	long := "data: " + strings.Repeat("x", events.MaxStreamLineBytes+1) + "\n\ndata: [DONE]\n\n"
	bodies := map[string]struct{ contentType, body, class string }{
		"long":    {"text/event-stream", long, "line_too_long: "},
		"garbage": {"text/event-stream", "data: hello world\n\ndata: [DONE]\n\n", `malformed_sse: a data line is not a JSON chunk: "hello world"`},
		"text":    {"text/plain", "hello world", "malformed_sse: the response is neither an event stream nor a JSON completion"},
	}
	synctest.Test(t, func(t *testing.T) {
		up := memnet.Listen()
		upSrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			for model, resp := range bodies {
				if strings.Contains(string(b), `"model":"`+model+`"`) {
					w.Header().Set("Content-Type", resp.contentType)
					_, _ = io.WriteString(w, resp.body)
				}
			}
		})}
		go func() { _ = upSrv.Serve(up) }()
		defer upSrv.Close()
		u, _ := url.Parse("http://upstream")
		buf := &syncBuffer{}
		p, err := record.New(record.Options{Upstream: u, Trace: buf, Transport: ownTransport(up.Client().Transport)})
		require.NoError(t, err)
		ln := memnet.Listen()
		srv := &http.Server{Handler: p}
		go func() { _ = srv.Serve(ln) }()
		for _, model := range []string{"long", "garbage", "text"} {
			resp, err := ln.Client().Post("http://proxy/v1/chat/completions", "application/json",
				strings.NewReader(`{"model":"`+model+`","stream":true,"messages":[{"role":"user","content":"x"}]}`))
			require.NoError(t, err)
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, len(bodies[model].body), len(got), "%s: the response passes through whole", model)
		}
		_ = srv.Close()
		require.NoError(t, p.Close())
		_, reqs := readTrace(t, buf.String())
		require.Len(t, reqs, 3)
		for i, model := range []string{"long", "garbage", "text"} {
			assert.True(t, strings.HasPrefix(reqs[i].Error, bodies[model].class), "%s: error %q; want %q", model, reqs[i].Error, bodies[model].class)
		}
	})
}
