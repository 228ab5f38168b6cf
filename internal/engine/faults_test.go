package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseFaultsDecodesParams: every parameter form reaches the fault's tagged field, over the
// fault's defaults.
func TestParseFaultsDecodesParams(t *testing.T) {
	for _, tc := range []struct {
		names, params []string
		want          string
	}{
		// Defaults, in registry order of the names given.
		{[]string{"drop,errors"}, nil, "drop{fraction=0.05},errors{rate=0.1 kind=mix retry_after=5s}"},
		// key=value names the only fault.
		{[]string{"stall-stream"}, []string{"fraction=1", "duration=90s"}, "stall-stream{fraction=1 duration=1m30s}"},
		// name.key=value with several faults; integers and strings.
		{[]string{"queue-limit", "errors"}, []string{"queue-limit.max_queued=3", "errors.kind=429"},
			"queue-limit{max_queued=3},errors{rate=0.1 kind=429 retry_after=5s}"},
		{[]string{"long-context-wedge"}, []string{"threshold_tokens=100", "probability=0.5"},
			"long-context-wedge{threshold_tokens=100 probability=0.5}"},
		{[]string{"slow-decode"}, []string{"factor=2.5"}, "slow-decode{factor=2.5}"},
		{[]string{"serialize"}, nil, "serialize{max_running=1}"},
		{nil, nil, "none"},
	} {
		f, err := ParseFaults(tc.names, tc.params, 1)
		require.NoError(t, err, "ParseFaults(%q, %q)", tc.names, tc.params)
		assert.Equal(t, tc.want, f.String(), "ParseFaults(%q, %q).String()", tc.names, tc.params)
	}
	f, err := ParseFaults([]string{"errors"}, []string{"retry_after=1500ms"}, 1)
	require.NoError(t, err)
	assert.Equal(t, 1500*time.Millisecond, f.list[0].(*Errors).RetryAfter)
}

// TestParseFaultsErrors: each bad value is refused with a message naming the parameter, the
// value and what is allowed; every problem is reported at once.
func TestParseFaultsErrors(t *testing.T) {
	for _, tc := range []struct {
		names, params []string
		want          string
	}{
		{[]string{"nope"}, nil, `fault "nope": unknown fault; want one of drop, errors, long-context-wedge, none, prefill-pin, queue-limit, retract-crash, serialize, slow-decode, stall-stream, tool-call-style`},
		{[]string{"drop"}, []string{"fraction"}, `fault parameter "fraction": want name.key=value`},
		{[]string{"drop", "errors"}, []string{"rate=1"}, `fault parameter "rate=1": name the fault (name.key=value) when 2 faults are set`},
		{[]string{"drop"}, []string{"errors.rate=1"}, `fault parameter "errors.rate=1": fault "errors" is not among the faults set`},
		{[]string{"drop"}, []string{"rate=1"}, `fault parameter "rate=1": unknown parameter "rate": fault drop takes fraction`},
		{[]string{"serialize"}, []string{"n=1"}, `fault parameter "n=1": unknown parameter "n": fault serialize takes none`},
		{[]string{"errors"}, []string{"bogus=1"}, `fault parameter "bogus=1": unknown parameter "bogus": fault errors takes rate, kind, retry_after`},
		{[]string{"drop"}, []string{"fraction=lots"}, `fault parameter "fraction=lots": fraction: "lots" is not allowed: want a number`},
		{[]string{"drop"}, []string{"fraction=1.5"}, `fault drop: fraction: 1.5 is not allowed: want a fraction from 0 to 1`},
		{[]string{"drop"}, []string{"fraction=NaN"}, `fault drop: fraction: NaN is not allowed: want a fraction from 0 to 1`},
		{[]string{"slow-decode"}, []string{"factor=+Inf"}, `fault slow-decode: factor: +Inf is not allowed: want a number from 1 to 1000`},
		{[]string{"slow-decode"}, []string{"factor=0.5"}, `fault slow-decode: factor: 0.5 is not allowed: want a number from 1 to 1000`},
		{[]string{"stall-stream"}, []string{"duration=60"}, `fault parameter "duration=60": duration: "60" is not allowed: want a duration in Go syntax, like 60s`},
		{[]string{"stall-stream"}, []string{"duration=0s"}, `fault stall-stream: duration: 0s is not allowed: want a duration > 0`},
		{[]string{"errors"}, []string{"retry_after=-1s"}, `fault errors: retry_after: -1s is not allowed: want a duration ≥ 0`},
		{[]string{"errors"}, []string{"kind=418"}, `fault errors: kind: "418" is not allowed: want 429, 503, frame, mix`},
		{[]string{"queue-limit"}, []string{"max_queued=2.5"}, `fault parameter "max_queued=2.5": max_queued: "2.5" is not allowed: want an integer`},
		{[]string{"queue-limit"}, []string{"max_queued=-1"}, `fault queue-limit: max_queued: -1 is not allowed: want an integer ≥ 0`},
		{[]string{"long-context-wedge"}, []string{"threshold_tokens=0"}, `fault long-context-wedge: threshold_tokens: 0 is not allowed: want an integer ≥ 1`},
		// Every problem at once, one per line.
		{[]string{"stall-stream"}, []string{"fraction=2", "duration=-1s"},
			"fault stall-stream: fraction: 2 is not allowed: want a fraction from 0 to 1\n" +
				"fault stall-stream: duration: -1s is not allowed: want a duration > 0"},
	} {
		_, err := ParseFaults(tc.names, tc.params, 1)
		require.Error(t, err, "ParseFaults(%q, %q)", tc.names, tc.params)
		assert.Equal(t, tc.want, err.Error(), "ParseFaults(%q, %q)", tc.names, tc.params)
	}
}
