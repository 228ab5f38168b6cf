package bench

import (
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/rundir"
)

// TestSchedule checks the send times of open-loop tests: constant gaps of 1/rate, Poisson gaps
// of mean 1/rate, each ended by its duration or its number of requests, whichever is first.
func TestSchedule(t *testing.T) {
	for _, tc := range []struct {
		load OpenLoop
		n    int // requests sent
	}{
		// 2/s for 10 s: at 0, 0.5 s, …, 9.5 s.
		{OpenLoop{Rate: 2, Arrivals: Constant, Duration: 10 * time.Second}, 20},
		// 7 requests, whatever the time they take.
		{OpenLoop{Rate: 2, Arrivals: Constant, Requests: 7}, 7},
		// Both: the duration comes first.
		{OpenLoop{Rate: 2, Arrivals: Constant, Duration: 2 * time.Second, Requests: 7}, 4},
		// Poisson: as many as asked.
		{OpenLoop{Rate: 50, Arrivals: Poisson, Requests: 5000}, 5000},
	} {
		at := tc.load.Schedule(1)
		require.Len(t, at, tc.n, "%s", &tc.load)
		assert.Zero(t, at[0], "%s: the first request at the start", &tc.load)
		assert.True(t, sort.SliceIsSorted(at, func(i, j int) bool { return at[i] < at[j] }), "%s: in order", &tc.load)
		if tc.load.Arrivals == Constant {
			for i := 1; i < len(at); i++ {
				assert.Equal(t, 500*time.Millisecond, at[i]-at[i-1], "%s: gap %d", &tc.load, i)
			}
			continue
		}
		mean := at[len(at)-1].Seconds() / float64(len(at)-1)
		assert.InDelta(t, 1/tc.load.Rate, mean, 0.05/tc.load.Rate, "%s: mean gap", &tc.load)
		assert.Equal(t, at, tc.load.Schedule(1), "%s: the same seed, the same schedule", &tc.load)
		assert.NotEqual(t, at, tc.load.Schedule(2), "%s: another seed, another schedule", &tc.load)
	}
}

// TestOpenLoopValidate checks that every field out of range is named, at once.
func TestOpenLoopValidate(t *testing.T) {
	for _, tc := range []struct {
		load OpenLoop
		want []string
	}{
		{OpenLoop{Rate: 0, Arrivals: "bursty"}, []string{"rate 0 is not allowed", `arrivals "bursty" is not allowed: want poisson or constant`,
			"needs a duration or a number of requests"}},
		{OpenLoop{Rate: 1e-300, Arrivals: Poisson, Requests: 10}, []string{"rate 1e-300 is not allowed: want requests per second from 0.001 to 1e+06"}},
		{OpenLoop{Rate: 0.5, Arrivals: Poisson, Requests: 10}, nil},
		{OpenLoop{Rate: 1000, Arrivals: Poisson, Duration: time.Minute}, []string{"is 60000 requests: want at most 10000"}},
		{OpenLoop{Rate: 1, Arrivals: Constant, Requests: 10001}, []string{"requests 10001 is not allowed"}},
	} {
		err := tc.load.Validate()
		if tc.want == nil {
			assert.NoError(t, err, "%+v", tc.load)
			continue
		}
		require.Error(t, err, "%+v", tc.load)
		for _, w := range tc.want {
			assert.Contains(t, err.Error(), w, "%+v", tc.load)
		}
	}
}

// TestOpenLoopRun runs an open-loop test against the simulator in a bubble: requests go out
// at the rate asked, each 0.5 s after the one before on the one clock, whatever the earlier
// ones are doing (they take seconds, so several are in flight at once), and the report prints
// the RESULT line with its load and the latency percentiles.
func TestOpenLoopRun(t *testing.T) {
	for _, speedup := range []float64{1, 20} {
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			rep, out := simRun(t, speedup, nil, Options{Open: &OpenLoop{Rate: 2, Arrivals: Constant, Requests: 8}, Dir: dir})
			require.Len(t, rep.Points, 1)
			p := rep.Points[0]
			require.Len(t, p.Calls, 8)
			sent := make([]time.Time, len(p.Calls))
			for i, c := range p.Calls {
				sent[i] = c.Sent
			}
			sort.Slice(sent, func(i, j int) bool { return sent[i].Before(sent[j]) })
			for i := 1; i < len(sent); i++ {
				assert.InDelta(t, 0.5, sent[i].Sub(sent[i-1]).Seconds(), 0.01, "speedup %g: gap %d", speedup, i)
			}
			assert.Greater(t, p.Results.Latency.E2E.Min, 0.5, "each request outlasts the gap, so the loop is open")
			assert.Equal(t, 8, p.OK())
			assert.Contains(t, out, "RESULT N=8 max_tokens=128 ")
			assert.Contains(t, out, " rate=2/s arrivals=constant")
			assert.Equal(t, speedup != 1, strings.Contains(out, " speedup=20 wall_real="), "speedup %g:\n%s", speedup, out)
			for _, row := range []string{"ttft", "tpot", "itl", "e2e"} {
				assert.Regexp(t, `(?m)^\s+`+row+`\s+[\d.]+ m?s\s+[\d.]+ m?s\s+[\d.]+ m?s\s+[\d.]+ m?s$`, out, "the %s row", row)
			}
			res := rep.Results()
			assert.Equal(t, 2.0, res.Bench.Rate)
			assert.Equal(t, "constant", res.Bench.Arrivals)
			evs, err := rundir.ReadEvents(dir)
			require.NoError(t, err)
			require.NotEmpty(t, evs)
			assert.Equal(t, events.RunStart, evs[0].Kind)
			assert.Contains(t, evs[0].Message, ": open loop: 2 requests/s, constant arrivals, 8 requests (8 requests, an agent each), pacer ",
				"run_start says what the test is, not a replay")
		})
	}
}
