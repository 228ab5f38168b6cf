package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/results"
)

// diagnoseCmd is `agentsim diagnose DIR`: the verdict of a recorded run, re-derived from its
// files.
type diagnoseCmd struct {
	env      []string       // the process environment, as Execute read it
	settings *pflag.FlagSet // the flags bound to v
	v        *viper.Viper
}

// diagnoseConfig is diagnose's settings, decoded once from its flags and the environment.
type diagnoseConfig struct {
	JSON bool `mapstructure:"json"`
}

func (d *diagnoseCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "diagnose DIR",
		Short: "Re-derive the verdict of a recorded run from its run directory",
		Long: `Read a run directory (events.jsonl, samples.jsonl, config.yaml) and judge the run as the live
watchdog did: healthy, slow, server-serialized, stalled-streams, pacer-starvation, deadlock or
errors (or, for a record --watch directory, harness-stopped), with evidence in simulated seconds, followed by the run's warnings as the run gave them
(those that need what the harness measured of the server take it from results.json). It works
on a run that was killed, too: its files hold every event up to its last second.

A directory that holds no run is refused (exit 2) saying what it is; for a compare directory,
diagnose its agentic/ part. An events.jsonl cut short of its samples.jsonl is judged up to its
last event, and the verdict says so.

Exit codes: 0 healthy or slow; 1 the verdict could not be written out; 2 a bad flag, or DIR
missing, not a run directory or with no event recorded; 3 any other verdict.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("diagnose takes one run directory, e.g. agentsim diagnose runs/20261129T194516Z-ocbrowse; got %d arguments", len(args)))
			}
			return nil
		},
		RunE: d.run,
	}
	f := pflag.NewFlagSet("diagnose", pflag.ContinueOnError)
	f.Bool("json", false, "print the verdict as JSON (the verdict object of results.json)")
	c.Flags().AddFlagSet(f)
	d.settings, d.v = f, newViper(f)
	return c
}

func (d *diagnoseCmd) run(c *cobra.Command, args []string) error {
	var cfg diagnoseConfig
	problems, _ := loadSettings(d.settings, d.v, d.env, &cfg)
	if err := configError(problems); err != nil {
		return err
	}
	dir := args[0]
	if err := isDir(dir); err != nil {
		return usageError(fmt.Errorf("diagnose %s: %w", dir, err))
	}
	v, res, err := diagnose.FromDir(dir)
	switch {
	case errors.Is(err, diagnose.ErrNotRunDir), errors.Is(err, diagnose.ErrNoEvents):
		return usageError(fmt.Errorf("diagnose %s: %w", dir, err)) // the error says what dir is
	case err != nil:
		return usageError(fmt.Errorf("diagnose %s: not a run directory: %w", dir, err))
	}
	if cfg.JSON {
		err = diagnose.RenderJSON(c.OutOrStdout(), v)
	} else if err = diagnose.Render(c.OutOrStdout(), v); err == nil {
		err = diagnose.RenderWarnings(c.OutOrStdout(), res)
	}
	if err != nil {
		return runtimeError(err)
	}
	if len(v.Evidence) > 0 && strings.HasPrefix(v.Evidence[0], diagnose.WarningPrefix) {
		fmt.Fprintf(c.ErrOrStderr(), "agentsim: %s\n", v.Evidence[0])
	}
	noteRecorded(c, dir, v)
	if v.Kind.Progressing() {
		return nil
	}
	return &ExitError{Code: ExitVerdict}
}

// noteRecorded says on stderr when the run's own results.json recorded another verdict (an
// older agentsim judged it, or the file was edited); a run killed before writing it has none.
func noteRecorded(c *cobra.Command, dir string, v results.Verdict) {
	r, err := results.Read(dir)
	if err != nil || (r.Verdict.Kind == v.Kind && r.Verdict.Summary == v.Summary) {
		return
	}
	fmt.Fprintf(c.ErrOrStderr(), "agentsim: note: the run recorded a different verdict in results.json: %s — %s\n",
		r.Verdict.Kind, r.Verdict.Summary)
}

// isDir returns why dir is not a directory, or nil.
func isDir(dir string) error {
	fi, err := os.Stat(dir)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("not a directory: want a run directory holding %s, %s and %s", rundir.Events, rundir.Samples, rundir.Config)
	}
	return nil
}
