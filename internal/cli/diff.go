package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/internal/diff"
)

// diffCmd is `agentsim diff BASE NEW`: two recorded runs side by side, each change with its
// uncertainty, and the thresholds held.
type diffCmd struct {
	env      []string       // the process environment, as Execute read it
	settings *pflag.FlagSet // the flags bound to v
	v        *viper.Viper
}

// diffConfig is diff's settings, decoded once from its flags and the environment.
type diffConfig struct {
	Force bool       `mapstructure:"force"`
	Gate  gateConfig `mapstructure:",squash"`
}

func (d *diffCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "diff BASE NEW",
		Short: "Compare two run directories figure by figure and hold the new run to thresholds",
		Long: `Compare two run directories (of run, bench, a compare part or replay) side by side: the
verdicts, rounds, requests, TTFT, TTFT-content, ITL, TPOT and end-to-end latency (p50, p90, p99),
output tokens per second and pacer wait. Each change of a latency statistic carries its 95 %
bootstrap confidence interval from the per-request samples of both runs; "no significant
change" where the interval includes zero.

Runs whose workloads differ in agents, rounds or model are refused (--force compares them
anyway). The thresholds of NEW's workload, and those of --thresholds FILE, are evaluated with
BASE as the baseline (docs/gate.md); --junit and --summary-md write their outcome.

Exit codes: 0 no threshold failed, 2 a directory is not a run, the runs are not comparable, or
a bad threshold, 3 a threshold failed.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageError(fmt.Errorf("diff takes two run directories, BASE and NEW, e.g. agentsim diff runs/20261129T194516Z-ocbrowse runs/20261130T101502Z-ocbrowse; got %d arguments", len(args)))
			}
			return nil
		},
		RunE: d.run,
	}
	f := pflag.NewFlagSet("diff", pflag.ContinueOnError)
	f.Bool("force", false, "compare runs whose workloads differ in agents, rounds or model, and replace existing --junit and --summary-md files")
	addGateFlags(f)
	c.Flags().AddFlagSet(f)
	d.settings, d.v = f, newViper(f)
	return c
}

func (d *diffCmd) run(c *cobra.Command, args []string) error {
	var cfg diffConfig
	problems, _ := loadSettings(d.settings, d.v, d.env, &cfg)
	if err := configError(problems); err != nil {
		return err
	}
	if err := cfg.Gate.check(given(args[0], args[1], cfg.Gate.Thresholds), cfg.Force); err != nil {
		return err
	}
	base, err := diff.Load(args[0])
	if err != nil {
		return usageError(fmt.Errorf("diff: base %w", err))
	}
	new, err := diff.Load(args[1])
	if err != nil {
		return usageError(fmt.Errorf("diff: new %w", err))
	}
	if err := diff.Comparable(base.Workload, new.Workload); err != nil {
		if !cfg.Force {
			return usageError(fmt.Errorf("diff %s %s: %w (add --force to compare them anyway)", args[0], args[1], err))
		}
		fmt.Fprintf(c.ErrOrStderr(), "agentsim: note: --force: %v\n", err)
	}
	t, err := cfg.Gate.thresholds(new.Workload)
	if err != nil {
		return err
	}
	out := c.OutOrStdout()
	table := diff.NewTable(base, new)
	if err := table.Write(out); err != nil {
		return runtimeError(err)
	}
	if t.Empty() && cfg.Gate.JUnit == "" && cfg.Gate.SummaryMD == "" {
		return nil
	}
	fmt.Fprintln(out)
	return cfg.Gate.apply(out, t, table.Comparison, &new.Measurement, "agentsim diff "+args[0]+" "+args[1])
}
