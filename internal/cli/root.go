package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Main runs agentsim with args and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := interruptContext(stderr)
	defer stop()
	return Execute(ctx, args, stdout, stderr)
}

// Execute runs the command line in ctx (cancelled on the first Ctrl-C) and returns the exit
// code. Tests call it directly.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil && !silent(err) {
		fmt.Fprintf(stderr, "agentsim: %v\n", err)
	}
	return exitCode(err)
}

// silent reports whether err only carries an exit code (the command already said why).
func silent(err error) bool {
	var e *ExitError
	return errors.As(err, &e) && e.Err == nil
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
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
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	root.AddCommand((&runCmd{}).command(), (&benchCmd{}).command(), (&compareCmd{}).command(), newServeCmd().command(), newDiagnoseCmd().command(), newWorkloadsCmd(), newVersionCmd())
	for _, c := range root.Commands() {
		c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	}
	return root
}

// newViper returns a command's own viper: its flags bound to keys of the same name, and
// AGENTSIM_… environment variables beneath them (AGENTSIM_API_KEY for --api-key).
func newViper(flags *pflag.FlagSet) *viper.Viper {
	v := viper.New()
	v.SetEnvPrefix("AGENTSIM")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_", ".", "_"))
	v.AutomaticEnv()
	if err := v.BindPFlags(flags); err != nil {
		panic(err) // only on a programming error: a nil flag set
	}
	return v
}

// interruptContext returns a context cancelled by the first SIGINT or SIGTERM; a second one
// exits the process at once with code 130.
func interruptContext(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
			fmt.Fprintln(stderr, "agentsim: interrupted; stopping (Ctrl-C again to exit at once)")
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
