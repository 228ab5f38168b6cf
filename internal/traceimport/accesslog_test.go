package traceimport

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/trace"
)

func accessLog(unit Unit) func(f *os.File, name string) (*Trace, error) {
	return func(f *os.File, name string) (*Trace, error) { return AccessLog(f, name, unit) }
}

// outcome is the part of a request an access log gives.
type outcome struct {
	Session string
	TS      float64
	Status  int
	E2ES    float64
}

func outcomes(reqs []trace.Request) []outcome {
	var out []outcome
	for _, r := range reqs {
		out = append(out, outcome{r.Session, r.TS, r.Status, r.E2ES})
	}
	return out
}

// TestAccessLogUnits: the unit of bare latencies is inferred from start and finish lines, or
// written in each value, and printed with its evidence.
func TestAccessLogUnits(t *testing.T) {
	cases := []struct {
		file  string
		notes []string
		reqs  []outcome
	}{
		{
			// the model gateway: integer µs, start and finish lines paired by request_id; the
			// GET /health pair is skipped
			"gateway.log",
			[]string{
				"latency unit: µs — 62690782 matches the 63 s between start (19:44:13) and finish (19:45:16); as ns it would be 0.06 s",
				"latency unit: 3 of 3 finish lines with a bare latency fit µs (start and finish lines paired by request_id)",
				"skipped 1 request line of other methods than POST (health checks, metrics, model lists)",
			},
			[]outcome{{"chatcmpl-a2", 0, 200, 44.920118}, {"chatcmpl-a1", 0.229336, 200, 62.690782}, {"chatcmpl-a3", 7.918868, 429, 0.00125}},
		},
		{
			// the old router: Rust Duration Debug strings carry their unit
			"router-debug.log",
			[]string{"latency unit: written in each value (line 2: latency=1.834512s)"},
			[]outcome{{"chatcmpl-x1", 0, 200, 1.834512}, {"chatcmpl-x2", 1.8337, 503, 0.0008124}},
		},
		{
			// the gateway's JSON format (tracing's flatten_event): span fields under "span"
			"gateway-json.log",
			[]string{
				"latency unit: µs — 62690782 matches the 63 s between start (19:44:13) and finish (19:45:16); as ns it would be 0.06 s",
				"latency unit: 1 of 1 finish lines with a bare latency fit µs (start and finish lines paired by request_id)",
			},
			[]outcome{{"chatcmpl-j1", 0, 200, 62.690782}},
		},
		{
			// no request ids: start lines paired by time under each unit; RFC 3339 timestamps
			"no-ids.log",
			[]string{
				"latency unit: µs — 11500020 matches the 12 s between start (19:44:13.900000) and finish (19:44:25.400000); as ns it would be 0.01 s",
				"latency unit: 2 of 2 finish lines with a bare latency fit µs (start and finish lines paired by time, per unit)",
			},
			[]outcome{{"line-3", 0, 200, 0.850012}, {"line-4", 0.649992, 200, 11.50002}},
		},
	}
	for _, c := range cases {
		tr, err := importFile(t, "testdata/"+c.file, accessLog(UnitUnknown))
		require.NoError(t, err, c.file)
		assert.Equal(t, c.notes, tr.Notes, c.file)
		assert.Equal(t, c.reqs, outcomes(tr.Requests), c.file)
		assert.Equal(t, "access-log:"+c.file, tr.Header.Source)
	}
}

// TestAccessLogRefuses: the import refuses to guess a unit the log does not show, and says why.
func TestAccessLogRefuses(t *testing.T) {
	cases := map[string]string{
		// the simulator's access log has finish lines only
		"finish-only.log": `finish-only.log: latency unit: cannot tell from this log: the log has no "started processing request" lines to pair with its finish lines, and a finish line alone does not show its unit (line 2: 62690782 is 0.06 s as ns, 63 s as µs, 17.4 h as ms, 726 days as s); give the unit`,
		// a log spanning a router upgrade
		"mixed.log": `mixed.log: latency unit: the log mixes units: line 2 fits only µs (62690782 matches the 63 s between start (19:44:13) and finish (19:45:16)); line 4 fits only ms (45112 matches the 45 s between start (20:10:00) and finish (20:10:45)); split the log where the router changed, or give the unit`,
		// requests shorter than the one-second timestamps
		"ambiguous.log":       `ambiguous.log: latency unit: cannot tell ns, µs and ms apart: every paired line fits each (the longest, line 2: 420, is 4.2e-07 s as ns, 0.00042 s as µs and 0.42 s as ms, all within the timestamps' resolution); give the unit`,
		"invalid-latency.log": `invalid-latency.log:1: latency = fast: must be a number, bare or with a unit (62690782, 62.690782s, 1.5ms)`,
		"invalid-time.log":    `invalid-time.log:1: a request line must begin with its time, like 2026-11-29 19:45:16; found "19:44:13"`,
	}
	for file, want := range cases {
		_, err := importFile(t, "testdata/"+file, accessLog(UnitUnknown))
		assert.EqualError(t, err, want, file)
		assert.Equal(t, strings.Contains(want, ": latency unit: "), errors.Is(err, ErrLatencyUnit), "%s: errors.Is(err, ErrLatencyUnit)", file)
	}
}

// TestAccessLogUnitFlag: --latency-unit overrides the inference, even where it would refuse.
func TestAccessLogUnitFlag(t *testing.T) {
	tr, err := importFile(t, "testdata/finish-only.log", accessLog(Microseconds))
	require.NoError(t, err)
	assert.Equal(t, []string{"latency unit: µs, as given by --latency-unit"}, tr.Notes)
	assert.Equal(t, []outcome{{"line-1", 0, 200, 57.012345}, {"line-2", 0.321563, 200, 62.690782}}, outcomes(tr.Requests))

	// A unit the log's own timestamps disprove is refused, saying what they show.
	_, err = importFile(t, "testdata/gateway-json.log", accessLog(Milliseconds))
	assert.ErrorIs(t, err, ErrLatencyUnitDisproved)
	assert.ErrorContains(t, err, "gateway-json.log: latency unit disproved: ms was given, but the log's own timestamps show µs: "+
		"latency unit: µs — 62690782 matches the 63 s between start (19:44:13) and finish (19:45:16)")

	// A status that is no HTTP status is refused on its line, not dropped.
	_, err = AccessLog(strings.NewReader(`2026-11-29 19:45:16 INFO smg::response: finished processing request method=POST uri=/v1/chat/completions status=999 latency=62.690782s`+"\n"), "bad.log", UnitUnknown)
	assert.EqualError(t, err, "bad.log:1: status = 999: must be an HTTP status (100…599)")

	tr, err = AccessLog(strings.NewReader("nothing here\n"), "empty.log", UnitUnknown)
	assert.Nil(t, tr)
	assert.ErrorContains(t, err, "empty.log: no request lines: an access log has lines like")
}

// TestParseUnit names what --latency-unit accepts.
func TestParseUnit(t *testing.T) {
	for in, want := range map[string]Unit{"ns": Nanoseconds, "us": Microseconds, "µs": Microseconds, "ms": Milliseconds, "s": Seconds} {
		u, err := ParseUnit(in)
		assert.NoError(t, err)
		assert.Equal(t, want, u, in)
	}
	_, err := ParseUnit("sec")
	assert.EqualError(t, err, `latency unit "sec": must be ns, us, ms or s`)
}
