package simserver_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/simserver"
)

// longCallBody asks for one call of the tool with long arguments.
var longCallBody = toolStreamBody(tools(longTool), `,"tool_choice":"required"`)

// TestStallMidArguments: a stall-stream fault pauses a tool-call stream in the middle of its
// arguments — the client holds a call begun and arguments that are not yet JSON — then the
// stream resumes and ends with the whole call.
func TestStallMidArguments(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := faultServer(t, "stall-stream", "fraction=1", "duration=30s")
		s := ts.openStream(longCallBody)
		ts.wait(10 * time.Second)
		frames, ended, _ := s.snapshot()
		require.False(t, ended, "the stream is paused")
		calls := readToolStream(t, frames).calls(t)
		require.Len(t, calls, 1, "the call has begun")
		assert.NotEmpty(t, calls[0].arguments, "some of the arguments came")
		assert.False(t, json.Valid([]byte(calls[0].arguments)), "not all of them: %s", calls[0].arguments)

		frames, err := ts.finish(s, 60*time.Second)
		require.NoError(t, err)
		r := readToolStream(t, frames)
		assert.Equal(t, "tool_calls", r.finish)
		checkArguments(t, "note", r.calls(t)[0].arguments)
	})
}

// TestWedgeMidArguments: the long-context wedge strikes a tool-call stream in the middle of
// its arguments: the stream stays open and silent and the client waits on a call that never
// ends.
func TestWedgeMidArguments(t *testing.T) {
	const system, user = "you are a coding agent", "find the bug"
	prompt := simserver.CountTokens(longTool) + 4 + simserver.CountTokens(system) + 4 + simserver.CountTokens(user) + 3
	bubble(t, func(t *testing.T) {
		// The sequence reaches the threshold with its sixth token: the name and five pieces
		// of the arguments.
		ts := faultServer(t, "long-context-wedge", "threshold_tokens="+strconv.Itoa(prompt+6), "probability=1")
		s := ts.openStream(longCallBody)
		ts.wait(20 * time.Second)
		frames, ended, _ := s.snapshot()
		require.False(t, ended, "the wedged stream stays open")
		assert.Equal(t, 1, ts.Engine().Stats().DecodeWedged)
		calls := readToolStream(t, frames).calls(t)
		require.Len(t, calls, 1)
		assert.Equal(t, 5, simserver.CountTokens(calls[0].arguments), "wedged mid-arguments: %s", calls[0].arguments)
		ts.wait(100 * time.Second)
		after, _, _ := s.snapshot()
		assert.Len(t, after, len(frames), "and stays silent")
		s.cancel()
	})
}
