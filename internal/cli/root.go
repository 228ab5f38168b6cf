package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentsim/agentsim/internal/redact"
)

// Main runs agentsim with args and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := interruptContext(stderr)
	defer stop()
	return Execute(ctx, args, stdout, stderr)
}

// Execute runs the command line in ctx (cancelled on the first Ctrl-C) and returns the exit
// code. It is the one place agentsim reads its environment. Tests call it directly.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stdout, stderr = newConsole(stdout), newConsole(stderr)
	root := newRoot(stdout, stderr, os.Environ(), args)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	var e *ExitError
	if err != nil && !errors.As(err, &e) {
		// Every command's errors carry their exit code (see exitCodes); an error without one
		// is cobra's own, about the command line: an unknown command, a wrong number of
		// arguments.
		err = usageError(err)
	}
	if err != nil && !silent(err) {
		fmt.Fprintf(stderr, "agentsim: %s\n", redact.Text(err.Error()))
	}
	return exitCode(err)
}

// silent reports whether err only carries an exit code (the command already said why).
func silent(err error) bool {
	var e *ExitError
	return errors.As(err, &e) && e.Err == nil
}

// newRoot builds the command tree; env is the process environment, as os.Environ gives it,
// and args the command line without the program name, which a run records.
func newRoot(stdout, stderr io.Writer, env, args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "agentsim",
		Short: "Simulate a multi-agent LLM harness against an OpenAI-compatible server or a calibrated simulator",
		Long: `agentsim runs ~30 agents through multi-round workflows with growing contexts and heavy
reasoning budgets, behind a configurable pacer, against any OpenAI-compatible server or its own
embedded simulated inference server, and tells slow from stuck with evidence in explicit units.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	root.AddCommand((&runCmd{env: env, args: args}).command(), (&benchCmd{env: env}).command(), (&compareCmd{env: env}).command(),
		(&serveCmd{env: env}).command(), (&diagnoseCmd{env: env}).command(), (&diffCmd{env: env}).command(), newWorkloadsCmd(), newVersionCmd())
	root.AddCommand(newTraceCmd(env), (&replayCmd{env: env, args: args}).command())
	root.AddCommand((&reportCmd{env: env}).command())
	root.AddCommand((&recordCmd{env: env}).command())
	root.AddCommand((&sweepCmd{env: env, args: args}).command())
	root.AddCommand((&execCmd{env: env}).command())
	root.AddCommand((&calibrateCmd{env: env}).command())
	exitCodes(root)
	return root
}

// exitCodes makes every command in the tree report bad flags as usage errors and attach an
// exit code to whatever it returns: an error without one is a runtime failure. What then
// reaches Execute without a code comes from cobra's parsing of the command line.
func exitCodes(c *cobra.Command) {
	c.SetFlagErrorFunc(flagError)
	if run := c.RunE; run != nil {
		c.RunE = func(c *cobra.Command, args []string) error {
			err := run(c, args)
			var e *ExitError
			if err != nil && !errors.As(err, &e) {
				return runtimeError(err)
			}
			return err
		}
	}
	for _, sub := range c.Commands() {
		exitCodes(sub)
	}
}

// interruptContext returns a context cancelled by the first SIGINT or SIGTERM; a second one
// exits the process at once with code 130.
func interruptContext(stderr io.Writer) (context.Context, func()) {
	// A run's output pipes can close under it — its sweep died, and SIGTERM (Pdeathsig)
	// follows — and the run must still write its results: a write to a closed pipe fails,
	// it does not kill the process with SIGPIPE, whether it comes before the signal or after.
	signal.Ignore(syscall.SIGPIPE)
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			// A second Ctrl-C is something a person at the terminal can do; a SIGTERM comes
			// from a supervisor, which is told only what happens.
			if s == syscall.SIGTERM {
				fmt.Fprintln(stderr, "agentsim: terminated; stopping")
			} else {
				fmt.Fprintln(stderr, "agentsim: interrupted; stopping (Ctrl-C again to exit at once)")
			}
			cancel()
		case <-done:
			return
		}
		select {
		case <-sig:
			os.Exit(ExitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() { signal.Stop(sig); close(done); cancel() }
}
