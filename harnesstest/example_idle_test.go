package harnesstest_test

import (
	"testing"

	"github.com/agentsim/agentsim/harnesstest"
	"github.com/agentsim/agentsim/results"
)

// naiveSlotsWithIdleTimeout is a test: the same NaiveSlots{30} under the same wedge, with an
// idle timeout of 60 s (the longest silence allowed between two chunks of a stream). Each
// wedged stream now ends 60 s after its last byte: its round fails, its permit returns and
// the agent goes on. The run recovers — every planned round ends, none is cut by the
// watchdog — and its verdict counts the timeouts as errors instead of a hang.
func naiveSlotsWithIdleTimeout(t *testing.T) {
	res := harnesstest.Run(t, harnesstest.Config{
		Workload: "ocbrowse",
		Set:      map[string]string{"request.idle_timeout": "60s", "rounds": "4"},
		Faults:   []string{"long-context-wedge"},
		Pacer:    naiveSlots(30),
	})
	t.Logf("%s: %s", res.Verdict.Kind, res.Verdict.Summary)
	q, rounds := res.Results.Requests, res.Results.Rounds
	// errors: N of 120 finished requests failed, every one a timeout_idle
	if res.Verdict.Kind != results.Errors || q.Timeouts == 0 || q.Timeouts != q.Sent-q.OK {
		t.Errorf("verdict %s with requests %+v, want %s with every failure a timeout", res.Verdict.Kind, q, results.Errors)
	}
	if rounds.Completed+rounds.Failed != rounds.Planned {
		t.Errorf("rounds %+v: want every planned round ended", rounds)
	}
}

// The same naive slots pacer recovers from the wedge once an idle timeout is armed. In a test
// file of your own:
//
//	func TestNaiveSlotsWithIdleTimeout(t *testing.T) { naiveSlotsWithIdleTimeout(t) }
func Example_idleTimeoutRecovers() {}
