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

// Leased is a pacer design of one's own: Slots requests in flight at most, but a permit held
// longer than Lease stops counting against the limit — the server has probably lost that
// request, so it should not keep the other agents waiting.
type Leased struct {
	Slots int
	Lease time.Duration // simulated time after which a held permit no longer counts
}

// Admit counts the permits held for less than Lease. When they fill the slots, it asks to be
// asked again when the oldest of them expires.
func (l *Leased) Admit(now time.Time, _ pacer.Demand, held []pacer.Holding) (bool, time.Duration) {
	live := 0
	var firstExpiry time.Time
	for _, h := range held {
		if expiry := h.Since.Add(l.Lease); expiry.After(now) {
			if live == 0 {
				firstExpiry = expiry // held is oldest first
			}
			live++
		}
	}
	if live < l.Slots {
		return true, 0
	}
	return false, firstExpiry.Sub(now)
}

// Released learns nothing: the held list already tells Admit all it needs.
func (*Leased) Released(time.Time, pacer.Holding, pacer.Outcome) {}

// Limit is the number of slots, for the pacer's Stats.
func (l *Leased) Limit() int { return l.Slots }

// String names the design in the run's events.
func (l *Leased) String() string { return fmt.Sprintf("Leased{%d, lease %s}", l.Slots, l.Lease) }

// leasedUnderWedge is a test: ocbrowse under the wedge behind 16 slots. A plain slots pacer
// starves the 14 agents that find every permit held by a wedged stream (pacer-starvation);
// with leases of 120 s, they get their turn. The pacer no longer starves anyone, but it cannot
// end a wedged stream either: once every agent's context has grown past the wedge, all of
// them wait on silent requests and no timeout is armed — a deadlock, not a starvation.
func leasedUnderWedge(t *testing.T) {
	plain := harnesstest.Run(t, harnesstest.Config{
		Workload: "ocbrowse",
		Faults:   []string{"long-context-wedge"},
		Pacer:    naiveSlots(16),
	})
	t.Logf("NaiveSlots{16}: %s: %s", plain.Verdict.Kind, plain.Verdict.Summary)
	if plain.Verdict.Kind != results.PacerStarvation {
		t.Errorf("NaiveSlots{16}: verdict %s, want %s", plain.Verdict.Kind, results.PacerStarvation)
	}
	res := harnesstest.Run(t, harnesstest.Config{
		Workload: "ocbrowse",
		Faults:   []string{"long-context-wedge"},
		Pacer: func(clk *clock.Clock) (pacer.Pacer, error) {
			return pacer.NewCustom(&Leased{Slots: 16, Lease: 120 * time.Second}, clk)
		},
	})
	t.Logf("Leased{16, lease 120s}: %s: %s", res.Verdict.Kind, res.Verdict.Summary)
	if res.Verdict.Kind != results.Deadlock {
		t.Errorf("verdict %s, want %s", res.Verdict.Kind, results.Deadlock)
	}
}

// A custom pacer, written here: leases on permits. In a test file of your own:
//
//	func TestLeasedUnderWedge(t *testing.T) { leasedUnderWedge(t) }
func Example_customPacer() {}
