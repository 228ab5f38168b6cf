// Package console is what a command that runs agents shows of a run while it runs and when it
// ends: the status line redrawn in place on a terminal, the progress log of whole lines where
// the output is not one (a CI log), the warnings the run gives as it goes, and the summary.
// The harness only runs; it tells an Observer what happens (harness.Observer), and this
// package says it.
package console

import (
	"fmt"
	"io"

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
}

// NewObserver returns the console of a run printing to out on the run's clock clk: live says
// out is a terminal, which gets the status line; progress, on an out that is not one, asks for
// the progress log. The progress log's wall time counts from now.
func NewObserver(out io.Writer, clk *clock.Clock, live, progress bool) *Observer {
	return &Observer{out: out, status: newStatusLine(out, live, clk), progress: newProgressLog(out, progress && !live, clk)}
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
	o.status.show(s, elapsedS, note)
	o.progress.show(s, elapsedS, note)
}

// Stopped clears the status line: the run's sampling has ended.
func (o *Observer) Stopped() { o.status.clear() }
