// Package cli holds agentsim's command line: one small cobra command per file, each with its
// own viper instance, and the mapping from errors to process exit codes. Errors carry their
// exit code in an *ExitError, attached where the command knows what failed; Execute alone
// turns it into the process's exit code.
package cli

import (
	"errors"
	"fmt"
)

// Exit codes (docs/files.md §5).
const (
	ExitOK          = 0   // finished; verdict healthy or slow
	ExitRuntime     = 1   // runtime failure: server unreachable, disk full…
	ExitUsage       = 2   // usage or configuration error
	ExitVerdict     = 3   // finished with any other verdict
	ExitUnreliable  = 4   // finished with a verdict the run's own lag could explain
	ExitInterrupted = 130 // interrupted by Ctrl-C
)

// ExitError attaches a process exit code to an error. Only Main turns it into an exit.
type ExitError struct {
	// Code is the process exit code: one of the Exit constants.
	Code int
	// Err says what went wrong; nil when the command has already said it.
	Err error
}

// Error is Err's message, or "exit <code>" without one.
func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns Err.
func (e *ExitError) Unwrap() error { return e.Err }

// usageError marks err as a usage or configuration error (exit 2).
func usageError(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// runtimeError marks err as a runtime failure (exit 1).
func runtimeError(err error) error { return &ExitError{Code: ExitRuntime, Err: err} }

// exitCode returns the exit code err carries; errors without one are runtime failures.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *ExitError
	if errors.As(err, &e) {
		return e.Code
	}
	return ExitRuntime
}
