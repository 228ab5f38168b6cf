// Package console is what a command that runs agents shows of a run while it runs and when it
// ends: the status line redrawn in place on a terminal, the progress log of whole lines where
// the output is not one (a CI log), the warnings the run gives as it goes, and the summary.
// The harness only runs; it tells an Observer what happens (harness.Observer), and this
// package says it.
package console

import (
	"fmt"
	"io"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

// Observer is the console of one run: it prints each warning the run gives, redraws the
// status line after each sample when the output is a terminal, and prints a progress line
// every ProgressEvery of wall time when it is not. It implements harness.Observer.
type Observer struct {
	out      io.Writer
	status   *statusLine
	progress *progressLog
	plan     Plan
	clk      *clock.Clock
}

// Plan is what a run is to do, for the live line's rounds done of planned and its estimate of
// the time left: Rounds planned (agents × rounds) and, when the run is bounded in time, its
// Duration (simulated). The zero Plan shows neither.
type Plan struct {
	Rounds   int
	Duration time.Duration
}

// NewObserver returns the console of a run printing to out on the run's clock clk: live says
// out is a terminal, which gets the status line; progress, on an out that is not one, asks for
// the progress log. The progress log's wall time counts from now.
func NewObserver(out io.Writer, clk *clock.Clock, live, progress bool) *Observer {
	return &Observer{out: out, status: newStatusLine(out, live, clk), progress: newProgressLog(out, progress && !live, clk), clk: clk}
}

// Planned sets what the run is to do, so that the live line shows the rounds ended of those
// planned and an estimate of the time left; it returns o.
func (o *Observer) Planned(p Plan) *Observer {
	o.plan = p
	return o
}

// Warned prints msg on a line of its own, clearing the status line first.
func (o *Observer) Warned(msg string) {
	o.status.clear()
	fmt.Fprintf(o.out, "%s\n", msg)
}

// Ticked shows the run after a sample: on the status line, or as a progress line when one is
// due. elapsedS is the simulated time since the run started; note, when not empty, is added
// at the end of the line.
func (o *Observer) Ticked(s events.Sample, elapsedS float64, note string) {
	if left := o.plan.left(s.RoundsEnded, elapsedS, o.clk.Speedup()); left != "" {
		note = joinNotes(left, note)
	}
	o.status.show(s, elapsedS, note)
	o.progress.show(s, elapsedS, note)
}

// joinNotes joins two parts of the line's note, either of which may be empty.
func joinNotes(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + " | " + b
}

// Stopped clears the status line: the run's sampling has ended.
func (o *Observer) Stopped() { o.status.clear() }
