// Package author is a harness team's own repository: it keeps a regression test of its pacer
// design against agentsim's simulator, using only agentsim's public packages.
package author

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/harnesstest"
	"github.com/agentsim/agentsim/pacer"
	"github.com/agentsim/agentsim/results"
)

// Fair is the team's pacer: at most Slots requests in flight, and no agent holds more than one
// permit at a time ahead of the others — a request from an agent that already has one in
// flight waits.
type Fair struct {
	Slots int
}

// Admit admits req while a slot is free and its agent holds no permit.
func (f *Fair) Admit(_ time.Time, req pacer.Demand, held []pacer.Holding) (bool, time.Duration) {
	if len(held) >= f.Slots {
		return false, 0
	}
	for _, h := range held {
		if h.Agent == req.Agent {
			return false, 0
		}
	}
	return true, 0
}

// Released learns nothing.
func (*Fair) Released(time.Time, pacer.Holding, pacer.Outcome) {}

// Limit is the number of slots.
func (f *Fair) Limit() int { return f.Slots }

// String names the design.
func (f *Fair) String() string { return fmt.Sprintf("Fair{%d}", f.Slots) }

func fair(slots int) func(*clock.Clock) (pacer.Pacer, error) {
	return func(clk *clock.Clock) (pacer.Pacer, error) { return pacer.NewCustom(&Fair{Slots: slots}, clk) }
}

// On a healthy server the team's pacer lets every round complete.
func TestFairHealthy(t *testing.T) {
	res := harnesstest.Run(t, harnesstest.Config{Workload: "smoke", Pacer: fair(2)})
	if res.Verdict.Kind != results.Healthy {
		t.Fatalf("verdict %s, want %s: %s", res.Verdict.Kind, results.Healthy, res.Verdict.Summary)
	}
	if got, want := res.Results.Rounds.Completed, res.Results.Rounds.Planned; got != want {
		t.Errorf("%d of %d rounds completed", got, want)
	}
}

// Under the long-context wedge, with the idle timeout the team ships, no run hangs: every
// wedged stream times out and its agent goes on.
func TestFairSurvivesTheWedge(t *testing.T) {
	res := harnesstest.Run(t, harnesstest.Config{
		Workload: "ocbrowse",
		Set:      map[string]string{"request.idle_timeout": "60s", "rounds": "3"},
		Faults:   []string{"long-context-wedge"},
		Pacer:    fair(16),
		Seed:     3,
	})
	switch res.Verdict.Kind {
	case results.Deadlock, results.PacerStarvation:
		t.Fatalf("%s: %s", res.Verdict.Kind, res.Verdict.Summary)
	}
	rounds := res.Results.Rounds
	if rounds.Completed+rounds.Failed != rounds.Planned {
		t.Errorf("rounds %+v: want every planned round ended", rounds)
	}
	timeouts := 0
	for _, e := range res.Events {
		if e.Kind == "timeout" {
			timeouts++
		}
	}
	t.Logf("%s: %s (%d timeout events)", res.Verdict.Kind, res.Verdict.Summary, timeouts)
}
