package simserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
)

// respLongGen asks for a long message, for faults to strike in its middle.
const respLongGen = `"stream":true,` + respInput + `,"max_output_tokens":400`

// TestResponsesFaults: the faults strike Responses API streams as they strike chat streams,
// each ending as the API ends such a stream.
func TestResponsesFaults(t *testing.T) {
	for _, tc := range []struct {
		fault  string
		params []string
		check  func(t *testing.T, ts *testServer)
	}{
		// A failure mid-generation is response.failed, after the events so far.
		{"errors", []string{"rate=1", "kind=frame"}, func(t *testing.T, ts *testServer) {
			events := ts.postEvents(respBody(respLongGen))
			r := checkEventOrder(t, events, "response.failed")
			assert.Equal(t, "failed", r.Status)
		}},
		// A refusal is the HTTP error in the API's shape.
		{"errors", []string{"rate=1", "kind=429"}, func(t *testing.T, ts *testServer) {
			resp := ts.postTo(context.Background(), "/v1/responses", respBody(respLongGen))
			require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
			e := decodeResponsesError(t, resp)
			assert.Equal(t, "rate_limit_exceeded", e.Code)
		}},
		// A drop cuts the stream: no response.completed.
		{"drop", []string{"fraction=1"}, func(t *testing.T, ts *testServer) {
			events := ts.postEvents(respBody(respLongGen))
			require.NotEmpty(t, events)
			assert.Equal(t, "response.created", events[0].name)
			assert.NotEqual(t, "response.completed", events[len(events)-1].name)
		}},
		// A style fault shapes every event of a call: no-id leaves call_id out of the added
		// and done items, the deltas and the final object alike.
		{"tool-call-style", []string{"style=no-id"}, func(t *testing.T, ts *testServer) {
			events := ts.postEvents(respBody(`"stream":true,` + respTools(readTool) + `,"tool_choice":"required",` + respInput))
			checkEventOrder(t, events, "response.completed")
			added := 0
			for _, e := range events {
				if e.name == "response.output_item.added" && strings.Contains(e.raw, `"function_call"`) {
					added++
				}
				assert.NotContains(t, e.raw, `"call_id"`, "%s", e.name)
			}
			assert.Positive(t, added, "the reply called the tool")
		}},
		// The wedge leaves the stream open and silent mid-message.
		{"long-context-wedge", []string{"threshold_tokens=40", "probability=1"}, func(t *testing.T, ts *testServer) {
			s := ts.openStreamAt("/v1/responses", respBody(respLongGen))
			ts.wait(20 * time.Second)
			frames, ended, _ := s.snapshot()
			require.False(t, ended, "the wedged stream stays open")
			ts.wait(100 * time.Second)
			after, ended, _ := s.snapshot()
			assert.False(t, ended)
			assert.Len(t, after, len(frames), "and silent")
			assert.Equal(t, 1, ts.Engine().Stats().DecodeWedged)
			assert.True(t, strings.Contains(frames[len(frames)-1].data, "response.output_text.delta"))
		}},
	} {
		t.Run(tc.fault+"/"+strings.Join(tc.params, ","), func(t *testing.T) {
			bubble(t, func(t *testing.T) { tc.check(t, faultServer(t, tc.fault, tc.params...)) })
		})
	}
}

// TestResponsesAccessLogAndMetrics: Responses API requests are logged and counted as chat
// completions are.
func TestResponsesAccessLogAndMetrics(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var log lockedBuffer
		ts := startServer(t, simserver.Options{AccessLog: &log, Profile: engine.DSV4PD()})
		ts.postEvents(respBody(`"stream":true,` + respInput + `,"max_output_tokens":5`))
		lines := log.lines()
		require.Len(t, lines, 1)
		assert.Contains(t, lines[0], "/v1/responses")
		_, metrics := ts.get("/metrics")
		assert.Contains(t, metrics, `vllm:request_success_total{engine="0",finished_reason="length",model_name="deepseek-v4-flash"} 1`)
	})
}

// TestResponsesEngineAbort: a request the engine aborts (the default profile's 300 s waiting
// timeout, prefill slowed so that no KV reaches decode in time) ends its stream with the API's
// error event; without streaming it is a 500 in the API's shape.
func TestResponsesEngineAbort(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := engine.DSV4PD()
		p.PrefillPerToken = 30 * time.Second
		ts := startServer(t, simserver.Options{Profile: p})
		events := ts.postEvents(respBody(`"stream":true,` + respInput))
		require.NotEmpty(t, events)
		last := events[len(events)-1]
		assert.Equal(t, "error", last.name)
		assert.Equal(t, "server_error", last.str("code"))
		assert.Contains(t, last.str("message"), "timed out after 300.0s")

		resp := ts.postTo(context.Background(), "/v1/responses", respBody(respInput))
		require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
		e := decodeResponsesError(t, resp)
		assert.Equal(t, "server_error", e.Type)
		ts.wait(10 * time.Minute) // the prefill steps in progress end, and with them the requests
	})
}
