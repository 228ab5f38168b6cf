package record

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/trace"
)

// TestOutputToolTimeOrder: a row whose reply called tools is written once its tool time is
// known, whether the session's next request says it before the row's handler ends (a hair's
// race) or after, and the rows behind it keep their order.
func TestOutputToolTimeOrder(t *testing.T) {
	ts := 0.25
	row := func(seq int, calls int) finished {
		r := trace.Request{Session: "a", Seq: seq, TS: float64(seq), PromptTokens: 10, ToolCalls: calls}
		if seq > 0 {
			r.AfterS = ts
		}
		return finished{req: r, awaits: calls > 0}
	}
	for _, early := range []bool{false, true} {
		var buf bytes.Buffer
		o, err := newOutput(&buf, nil, trace.Header{Source: "test"}, io.Discard)
		require.NoError(t, err)
		if early {
			o.resolve("a", 0, &ts)
			o.add(row(0, 2))
		} else {
			o.add(row(0, 2))
			assert.Equal(t, 0, o.written(), "held until the next request arrives")
			o.resolve("a", 0, &ts)
		}
		o.add(row(1, 1))
		assert.Equal(t, 1, o.written(), "early %v: the row with calls is held", early)
		require.NoError(t, o.close())
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		require.Len(t, lines, 3, "early %v", early)
		assert.Contains(t, lines[1], `"tool_calls":2,"tool_s":0.25`, "early %v", early)
		assert.NotContains(t, lines[2], "tool_s", "early %v: written at the end, without a tool time", early)
	}
}
