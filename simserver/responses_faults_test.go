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
