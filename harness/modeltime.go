package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/agentsim/agentsim/results"
)

// The workload's duration and grace period are simulated time, and on a machine that keeps up
// with the speedup the clock and the run's model of the workload agree. On one that does not,
// the clock runs ahead of what the run has done: the embedded simulator behind its model, the
// harness's waits firing late (docs/verdicts.md §3, "The machine cannot write the verdict").
// A stop on the clock alone would then cut requests the model had finished long before, and
// the verdict would read the machine's slowness as the server's. So both end when the run's
// model time reaches them: the clock's time since the start less how far behind its own
// schedule the run is (modelBehind). A run in which nothing has moved for hang_after — no byte,
// no request end, as when a simulator never reads a request and the model's time stands still
// — lets the clock decide.

// modelNow returns the run's model time since its start and how far behind the clock it is.
func (r *run) modelNow() (model, behind time.Duration) {
	behind = r.modelBehind()
	return r.o.Clock.Since(r.start) - behind, behind
}

// untilModel waits until the run's model time reaches at (since the run's start) and reports
// how far behind the clock the model was then; ok is false when ctx ended the wait first. It
// checks at most every sample interval, and waits for the model no longer once nothing has
// moved for hang_after.
func (r *run) untilModel(ctx context.Context, at time.Duration) (behind time.Duration, ok bool) {
	wait := at - r.o.Clock.Since(r.start)
	for {
		if wait > 0 && r.o.Clock.Sleep(ctx, wait) != nil {
			return behind, false
		}
		var model time.Duration
		model, behind = r.modelNow()
		if model >= at || r.stillFor() >= r.o.Workload.Watchdog.HangAfter {
			return behind, true
		}
		wait = max(at-model, r.o.Workload.SampleInterval)
	}
}

// stillFor returns how long nothing has moved in the run — no byte, no request end — as
// measured by the clock, lag and all.
func (r *run) stillFor() time.Duration {
	r.mu.Lock()
	last := r.watch.a.LastProgressS()
	r.mu.Unlock()
	return r.o.Clock.Since(r.start) - time.Duration(last*float64(time.Second))
}

// behindNote is what a stop's message adds when the run was behind its own schedule: "" when
// it was not.
func behindNote(behind time.Duration) string {
	if behind < time.Millisecond {
		return ""
	}
	return fmt.Sprintf(" (at the run's model time: the run was %s behind its own schedule)", results.Seconds(behind.Seconds()))
}
