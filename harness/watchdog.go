package harness

import (
	"fmt"
	"sync/atomic"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// watchdog feeds the run's events and samples to the same diagnose.Analyzer that
// `agentsim diagnose` replays from the files, warns after stall_after without progress, and
// ends the run after hang_after without progress — never sooner: a silent stream that no
// timeout can end may still be resumed by the server. Its methods other than ended and live
// are serialised by run.mu.
type watchdog struct {
	a    *diagnose.Analyzer
	end  atomic.Bool
	note atomic.Pointer[string] // the status line's note on stalled streams, "" when none
}

func newWatchdog(w *workloads.Workload) *watchdog {
	return &watchdog{a: diagnose.New(diagnose.ConfigFrom(w))}
}

func (d *watchdog) event(e events.Event)   { d.a.Event(e) }
func (d *watchdog) sample(s events.Sample) { d.a.Sample(s) }

// check reads the run after a sample at nowS and returns the warning to give, if any; it
// marks the run for ending on a hang or when nothing can wake it.
func (d *watchdog) check(nowS float64) (warning string, ending bool) {
	st := d.a.Stall(nowS)
	note := ""
	if st.Stalled > 0 {
		note = fmt.Sprintf("stalled-streams: %d silent ≥ stall_after", st.Stalled)
	}
	d.note.Store(&note)
	switch {
	case st.Hang:
		if d.end.CompareAndSwap(false, true) {
			return "watchdog: ending the run: " + st.Message, true
		}
	case st.Warn:
		return "watchdog: " + st.Message, false
	}
	return "", false
}

// live returns the status line's note on stalled streams, "" when none.
func (d *watchdog) live() string {
	if p := d.note.Load(); p != nil {
		return *p
	}
	return ""
}

// ended reports whether the watchdog has decided to end the run.
func (d *watchdog) ended() bool { return d.end.Load() }

// fill writes the counts, statistics and verdict of the run into r, judged at the time of the
// latest record — exactly what diagnose.FromDir derives from the files.
func (d *watchdog) fill(r *results.Results) {
	d.a.Fill(r, d.a.LastS())
}
