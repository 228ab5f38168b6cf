package harnesstest_test

import (
	"testing"
	"time"

	"github.com/agentsim/agentsim/harnesstest"
)

func TestQuick(t *testing.T) {
	start := time.Now()
	res := harnesstest.Run(t, harnesstest.Config{Faults: []string{"long-context-wedge"}})
	t.Logf("%s in %s wall, %.0f s sim, %d events: %s", res.Verdict.Kind, time.Since(start), res.Results.SimSeconds, len(res.Events), res.Verdict.Summary)
}
