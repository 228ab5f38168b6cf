package harnesstest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/harnesstest"
	"github.com/agentsim/agentsim/pacer"
	"github.com/agentsim/agentsim/results"
)

// NaiveSlots is the pacer most harnesses start with: at most N requests in flight, first come
// first served, each permit held until its response ends. It is a pacer.Decider: it only
// decides, and pacer.NewCustom does the waiting and the bookkeeping.
type NaiveSlots struct {
	N int // requests in flight at most
}

// Admit lets a request go while fewer than N are in flight; only a release frees a slot.
func (s *NaiveSlots) Admit(_ time.Time, _ pacer.Demand, held []pacer.Holding) (bool, time.Duration) {
	return len(held) < s.N, 0
}

// Released learns nothing: the limit is fixed.
func (*NaiveSlots) Released(time.Time, pacer.Holding, pacer.Outcome) {}

// Limit is the number of slots, for the pacer's Stats.
func (s *NaiveSlots) Limit() int { return s.N }

// String names the design in the run's events.
func (s *NaiveSlots) String() string { return fmt.Sprintf("NaiveSlots{%d}", s.N) }

// naiveSlots is harnesstest.Config.Pacer for NaiveSlots{n}: a fresh pacer on the run's clock.
func naiveSlots(n int) func(*clock.Clock) (pacer.Pacer, error) {
	return func(clk *clock.Clock) (pacer.Pacer, error) { return pacer.NewCustom(&NaiveSlots{N: n}, clk) }
}

// naiveSlotsUnderWedge is a test: the incident's harness — ocbrowse, 30 agents, growing
// contexts, no timeouts — behind NaiveSlots{30}, against a simulator whose streams wedge once
// a context passes 32 k tokens. Every agent ends up inside a wedged stream and nothing ends
// one: a deadlock, which the watchdog calls after 600 s of simulated time without progress.
// It takes about a second.
func naiveSlotsUnderWedge(t *testing.T) {
	res := harnesstest.Run(t, harnesstest.Config{
		Workload: "ocbrowse",
		Faults:   []string{"long-context-wedge"},
		Pacer:    naiveSlots(30),
	})
	t.Logf("%s: %s", res.Verdict.Kind, res.Verdict.Summary)
	// deadlock: every running agent (30/30) waits on a request silent for ≥ 600 s and no
	// timeout is armed: nothing can wake the run
	if res.Verdict.Kind != results.Deadlock {
		t.Errorf("verdict %s, want %s", res.Verdict.Kind, results.Deadlock)
	}
}

// A naive slots pacer deadlocks under the long-context wedge. In a test file of your own,
// naiveSlotsUnderWedge is a test:
//
//	func TestNaiveSlotsUnderWedge(t *testing.T) { naiveSlotsUnderWedge(t) }
func Example_naiveSlotsDeadlock() {}
