package cli

import (
	"io"
	"os"

	"golang.org/x/term"

	"github.com/agentsim/agentsim/internal/redact"
)

// console is agentsim's stdout or stderr: every write passes through redact.Text, so that a
// server URL with credentials, whoever prints it (a command, the harness's status line and
// summary, an error), reaches the terminal masked. Each Write is redacted on its own: a URL
// split across two writes is not recognised, and every printer writes a line at a time.
type console struct{ w io.Writer }

// newConsole wraps w, once.
func newConsole(w io.Writer) io.Writer {
	if _, ok := w.(*console); ok {
		return w
	}
	return &console{w: w}
}

// Write writes p with its URLs redacted and reports all of p written.
func (c *console) Write(p []byte) (int, error) {
	if _, err := io.WriteString(c.w, redact.Text(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// isTerminal reports whether w, or the file a console writes to, is a terminal.
func isTerminal(w io.Writer) bool {
	if c, ok := w.(*console); ok {
		w = c.w
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
