package cli

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/cli/console"
	"github.com/agentsim/agentsim/internal/redact"
)

// redacting is agentsim's stdout or stderr: every write passes through redact.Text, so that a
// server URL with credentials, whoever prints it (a command, the run's status line and
// summary, an error), reaches the terminal masked. Each Write is redacted on its own: a URL
// split across two writes is not recognised, and every printer writes a line at a time.
type redacting struct{ w io.Writer }

// newConsole wraps w, once.
func newConsole(w io.Writer) io.Writer {
	if _, ok := w.(*redacting); ok {
		return w
	}
	return &redacting{w: w}
}

// Write writes p with its URLs redacted and reports all of p written.
func (c *redacting) Write(p []byte) (int, error) {
	if _, err := io.WriteString(c.w, redact.Text(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// isTerminal reports whether w, or the file a redacting writer writes to, is a terminal.
func isTerminal(w io.Writer) bool {
	if c, ok := w.(*redacting); ok {
		w = c.w
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// runConsole is the console of a run printing to out on the run's clock clk: the status line
// when out is a terminal, else the progress log, and the run's notes and warnings either way.
func runConsole(out io.Writer, clk *clock.Clock) *console.Observer {
	return console.NewObserver(out, clk, isTerminal(out), true)
}

// say prints notes, one a line: what a run records before it starts (harness.Prepared).
func say(out io.Writer, notes []string) {
	for _, n := range notes {
		fmt.Fprintln(out, n)
	}
}
