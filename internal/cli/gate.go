package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentsim/agentsim/internal/cli/console"
	"github.com/agentsim/agentsim/internal/diff"
	"github.com/agentsim/agentsim/internal/gate"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// gateConfig is the settings of the regression gate, shared by run and diff.
type gateConfig struct {
	Thresholds string `mapstructure:"thresholds"`
	JUnit      string `mapstructure:"junit"`
	SummaryMD  string `mapstructure:"summary-md"`
}

// addGateFlags adds the flags that choose the thresholds and where their outcome is written.
func addGateFlags(f *pflag.FlagSet) {
	f.String("thresholds", "", "YAML file with a thresholds: section; its rules join the workload's, replacing those for the same figure (docs/gate.md)")
	f.String("junit", "", "write the thresholds' outcome as JUnit XML to this file (one test case per rule; an existing file only with --force)")
	f.String("summary-md", "", "write the thresholds' outcome as a Markdown table to this file (for a pull-request comment; an existing file only with --force)")
}

// thresholds returns the workload's thresholds with those of the --thresholds file added.
func (g gateConfig) thresholds(w *workloads.Workload) (gate.Thresholds, error) {
	if g.Thresholds == "" {
		return w.Thresholds, nil
	}
	data, err := workloads.ReadFile(g.Thresholds)
	if err != nil {
		return gate.Thresholds{}, usageError(fmt.Errorf("--thresholds %s: %w", g.Thresholds, err))
	}
	t, err := gate.ParseYAML(data)
	if err != nil {
		return gate.Thresholds{}, usageError(fmt.Errorf("--thresholds %s: %s", g.Thresholds, strings.ReplaceAll(err.Error(), "\n", "\n  ")))
	}
	return w.Thresholds.With(t), nil
}

// check refuses, before anything runs, output files that cannot be written: in a directory
// that does not exist, the same file twice, or as checkOutput refuses (not a regular file,
// one of inputs, or existing without force).
func (g gateConfig) check(inputs []string, force bool) error {
	if g.JUnit != "" && filepath.Clean(g.JUnit) == filepath.Clean(g.SummaryMD) {
		return usageError(fmt.Errorf("--junit and --summary-md name the same file %s: want two files", g.JUnit))
	}
	for _, f := range []struct{ flag, path string }{{"--junit", g.JUnit}, {"--summary-md", g.SummaryMD}} {
		if f.path == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Dir(f.path)); err != nil || !fi.IsDir() {
			return usageError(fmt.Errorf("%s %s: the directory %s does not exist: want a file in an existing directory", f.flag, f.path, filepath.Dir(f.path)))
		}
		if err := checkOutput(f.flag, f.path, inputs, force); err != nil {
			return err
		}
	}
	return nil
}

// apply evaluates t on new against the base run of cmp (nil: no baseline run), prints the
// outcome to w, writes the --junit and --summary-md files, and returns an exit-3 error naming
// every failed rule, figure, values and rule, or nil.
func (g gateConfig) apply(w io.Writer, t gate.Thresholds, cmp *gate.Comparison, new *gate.Measurement, title string) error {
	rep := gate.EvaluateWith(t, cmp, new)
	if t.Empty() {
		// Written anyway when asked for: a CI step that reads the file finds it, with no test.
		fmt.Fprintln(w, "thresholds: none (give them under thresholds: in the workload or with --thresholds FILE)")
	} else if err := rep.WriteText(w); err != nil {
		return runtimeError(err)
	}
	if err := writeFileWith(g.JUnit, func(f io.Writer) error { return rep.WriteJUnit(f, title) }); err != nil {
		return runtimeError(fmt.Errorf("--junit: %w", err))
	}
	if err := writeFileWith(g.SummaryMD, func(f io.Writer) error { return rep.WriteMarkdown(f, title) }); err != nil {
		return runtimeError(fmt.Errorf("--summary-md: %w", err))
	}
	failed := rep.Failed()
	if len(failed) == 0 {
		return nil
	}
	lines := make([]string, len(failed))
	for i, f := range failed {
		lines[i] = f.Why
	}
	if len(lines) == 1 {
		return &ExitError{Code: ExitVerdict, Err: errors.New("threshold failed: " + lines[0])}
	}
	return &ExitError{Code: ExitVerdict, Err: fmt.Errorf("%d thresholds failed:\n  %s", len(lines), strings.Join(lines, "\n  "))}
}

// writeFileWith writes path (nothing when empty) with write.
func writeFileWith(path string, write func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// measured is a finished run as the gate sees it: res and the observations of the events it
// wrote to dir.
func measured(res *results.Results, dir string) (*gate.Measurement, error) {
	evs, err := rundir.ReadEvents(dir)
	if err != nil {
		return nil, err
	}
	return &gate.Measurement{Results: res, Observations: results.ObservationsOf(evs)}, nil
}

// loadBaseline reads --baseline DIR and checks that the workload about to run can be compared
// with it.
func loadBaseline(dir string, w *workloads.Workload) (*diff.Run, error) {
	base, err := diff.Load(dir)
	if err != nil {
		return nil, usageError(fmt.Errorf("--baseline %w", err))
	}
	if err := diff.Comparable(base.Workload, w); err != nil {
		return nil, usageError(fmt.Errorf("--baseline %s: %w (agentsim diff --force BASE NEW compares such runs anyway)", dir, err))
	}
	return base, nil
}

// addRunGateFlags adds run's flags for the gate and for a summary machines read.
func addRunGateFlags(f *pflag.FlagSet) {
	f.String("baseline", "", "run directory to compare with: hold this run to the thresholds relative to it (docs/gate.md)")
	addGateFlags(f)
	f.Bool("json", false, "print the results object (results.json) on stdout instead of the human summary")
}

// runGate is what run does around the harness for --baseline, the thresholds and --json.
type runGate struct {
	cfg        runConfig
	base       *diff.Run // nil without --baseline
	thresholds gate.Thresholds
}

// newRunGate reads the baseline and the thresholds before the run starts, so that a bad one
// is a usage error found at once.
func newRunGate(cfg runConfig, w *workloads.Workload) (*runGate, error) {
	g := &runGate{cfg: cfg}
	inputs := given(cfg.Workload.Name, cfg.Workload.Config, cfg.Gate.Thresholds, cfg.Baseline)
	if err := cfg.Gate.check(inputs, cfg.Force); err != nil {
		return nil, err
	}
	t, err := cfg.Gate.thresholds(w)
	if err != nil {
		return nil, err
	}
	g.thresholds = t
	if cfg.Baseline != "" {
		if g.base, err = loadBaseline(cfg.Baseline, w); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// console is where the run's live status and warnings go: stdout, or stderr when stdout
// carries JSON.
func (g *runGate) console(c *cobra.Command) io.Writer {
	if g.cfg.JSON {
		return c.ErrOrStderr()
	}
	return c.OutOrStdout()
}

// report prints the finished run: the human summary, or with --json the results object.
func (g *runGate) report(c *cobra.Command, res *results.Results, dir string) error {
	if !g.cfg.JSON {
		console.PrintSummary(c.OutOrStdout(), res, dir)
		return nil
	}
	enc := json.NewEncoder(c.OutOrStdout())
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return runtimeError(fmt.Errorf("print results: %w", err))
	}
	return nil
}

// hold evaluates the thresholds on the finished run, when there are any or a baseline was
// given, printing the outcome after the summary (on stderr with --json).
func (g *runGate) hold(c *cobra.Command, res *results.Results, dir string) error {
	w := g.console(c)
	if g.thresholds.Empty() && g.cfg.Gate.JUnit == "" && g.cfg.Gate.SummaryMD == "" {
		if g.base != nil {
			fmt.Fprintf(w, "no thresholds to hold the run to; compare it with agentsim diff %s %s\n", g.cfg.Baseline, dir)
		}
		return nil
	}
	new, err := measured(res, dir)
	if err != nil {
		return runtimeError(fmt.Errorf("read the run back for its thresholds: %w", err))
	}
	var cmp *gate.Comparison
	title := "agentsim run " + dir
	if g.base != nil {
		cmp = gate.NewComparison(&g.base.Measurement, new)
		title += " against " + g.cfg.Baseline
	}
	fmt.Fprintln(w)
	return g.cfg.Gate.apply(w, g.thresholds, cmp, new, title)
}

// worstExit returns the error whose exit code ranks highest: interrupted, then a failed
// verdict or threshold (both exit 3), then none.
func worstExit(errs ...error) error {
	var worst error
	for _, err := range errs {
		if err == nil {
			continue
		}
		// Of two equal codes, the one that says why.
		if worst == nil || rank(exitCode(err)) > rank(exitCode(worst)) ||
			(rank(exitCode(err)) == rank(exitCode(worst)) && silent(worst)) {
			worst = err
		}
	}
	return worst
}

func rank(code int) int {
	switch code {
	case ExitOK:
		return 0
	case ExitVerdict:
		return 1
	case ExitInterrupted:
		return 3
	}
	return 2
}
