package harnesstest_test

import (
	"testing"

	"github.com/agentsim/agentsim/harnesstest"
	"github.com/agentsim/agentsim/results"
)

// inTest runs f as a test of its own and reports whether it passed: a benchmark has no
// *testing.T for synctest.Test to make a bubble with. Every name matches, whatever -run says.
func inTest(b *testing.B, f func(t *testing.T)) bool {
	b.Helper()
	matchAll := func(string, string) (bool, error) { return true, nil }
	return testing.RunTests(matchAll, []testing.InternalTest{{Name: b.Name(), F: f}})
}

// BenchmarkWedgeToVerdict measures the wall time of the incident's scenario — ocbrowse, 30
// agents behind 30 slots, long-context-wedge, no timeouts — from the start to its deadlock
// verdict, which the watchdog gives after hang_after (600 s) of simulated time without
// progress, about 1 230 simulated seconds into the run.
func BenchmarkWedgeToVerdict(b *testing.B) {
	for b.Loop() {
		ok := inTest(b, func(t *testing.T) {
			res := harnesstest.Run(t, harnesstest.Config{Workload: "ocbrowse", Faults: []string{"long-context-wedge"}})
			if res.Verdict.Kind != results.Deadlock {
				t.Errorf("verdict %s, want %s: %s", res.Verdict.Kind, results.Deadlock, res.Verdict.Summary)
			}
		})
		if !ok {
			b.Fatal("the run failed")
		}
	}
}
