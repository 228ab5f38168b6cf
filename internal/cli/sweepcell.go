package cli

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/internal/sweep"
	"github.com/agentsim/agentsim/workloads"
)

// indexEnv is the variable a Kubernetes Indexed Job gives each pod its completion index in.
const indexEnv = "JOB_COMPLETION_INDEX"

// sweepCellCmd is `agentsim sweep cell`: one run of a sweep's plan, by completion index — what
// each pod of the Kubernetes Job and each subprocess of a local sweep runs.
type sweepCellCmd struct {
	env      []string
	settings *pflag.FlagSet
	v        *viper.Viper
}

// sweepCellConfig is sweep cell's settings.
type sweepCellConfig struct {
	Plan  string `mapstructure:"plan"`
	Index int    `mapstructure:"index"`
	Again bool   `mapstructure:"again"`
}

func (s *sweepCellCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "cell --plan DIR/sweep.json [--index N]",
		Short: "Run one run of a sweep's plan, by completion index (as a Kubernetes Indexed Job's pod does)",
		Long: `Run the run with completion index N of a sweep's plan, as agentsim run (or, for exec cells,
agentsim exec) makes it, into its directory under the sweep's. The index comes from --index or, in a Kubernetes Indexed Job, from
JOB_COMPLETION_INDEX. A run that already finished is left as it is (--again makes it anew). The
run gets the plan's settings and no AGENTSIM_ variable of this environment but AGENTSIM_API_KEY.

Exit codes: 0 the run finished, whatever its verdict (the sweep's table judges verdicts), 1 it
failed, 2 usage error, 130 interrupted.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError(fmt.Errorf("sweep cell takes no arguments, got %q: name the plan with --plan", args))
			}
			return nil
		},
		RunE: s.run,
	}
	f := pflag.NewFlagSet("sweep cell", pflag.ContinueOnError)
	f.String("plan", "", "the sweep's plan: DIR/sweep.json or DIR")
	f.Int("index", -1, "completion index of the run (default: $"+indexEnv+")")
	f.Bool("again", false, "run it again even if it finished")
	c.Flags().AddFlagSet(f)
	s.settings, s.v = f, newViper(f)
	return c
}

func (s *sweepCellCmd) run(c *cobra.Command, _ []string) error {
	var cfg sweepCellConfig
	problems, _ := loadSettings(s.settings, s.v, s.env, &cfg)
	if cfg.Plan == "" {
		problems = append(problems, workloads.Problem{Key: "plan", Message: "--plan: missing: want the sweep's sweep.json"})
	}
	index, p := s.index(cfg)
	if p != nil {
		problems = append(problems, *p)
	}
	if err := configError(problems); err != nil {
		return err
	}
	plan, dir, err := sweep.ReadPlan(cfg.Plan)
	if err != nil {
		return usageError(err)
	}
	if index >= len(plan.Runs) {
		return usageError(fmt.Errorf("index %d is not allowed: the plan has runs 0 to %d", index, len(plan.Runs)-1))
	}
	r := plan.Runs[index]
	if !cfg.Again && sweep.Done(dir, r) {
		fmt.Fprintf(c.OutOrStdout(), "run %d (%s seed=%d) already finished: %s\n", index, plan.Cell(r), r.Seed, filepath.Join(dir, r.Dir))
		return nil
	}
	args := plan.RunArgs(r, dir)
	// The plan's AGENTSIM_ variables replace this environment's; the rest (PATH, HOME…)
	// stays, for the harness processes of exec cells.
	env := append([]string(nil), plan.Base.Env...)
	for _, kv := range s.env {
		if !strings.HasPrefix(kv, workloads.EnvPrefix) || strings.HasPrefix(kv, workloads.EnvName("api-key")+"=") {
			env = append(env, kv)
		}
	}
	fmt.Fprintf(c.OutOrStdout(), "run %d of %d: %s seed=%d\n%s\n", index, len(plan.Runs), plan.Cell(r), r.Seed, commandLine(args))
	root := newRoot(c.OutOrStdout(), c.ErrOrStderr(), env, args)
	root.SetArgs(args)
	err = root.ExecuteContext(c.Context())
	if code := exitCode(err); code == ExitVerdict || code == ExitUnreliable {
		return nil // a verdict, trusted or not, is the run's result, not the cell's failure
	}
	return err
}

// index is the run's completion index: --index, else JOB_COMPLETION_INDEX.
func (s *sweepCellCmd) index(cfg sweepCellConfig) (int, *workloads.Problem) {
	if cfg.Index >= 0 {
		return cfg.Index, nil
	}
	if s.settings.Lookup("index").Changed {
		return 0, &workloads.Problem{Key: "index", Message: fmt.Sprintf("--index: %d is not allowed: want a completion index ≥ 0", cfg.Index)}
	}
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, indexEnv+"="); ok {
			i, err := strconv.Atoi(v)
			if err != nil || i < 0 {
				return 0, &workloads.Problem{Key: "index", Message: fmt.Sprintf("%s: %q is not allowed: want a completion index ≥ 0", indexEnv, v)}
			}
			return i, nil
		}
	}
	return 0, &workloads.Problem{Key: "index", Message: "no completion index: give --index N, or run in a Kubernetes Indexed Job, which sets " + indexEnv}
}

// sweepCollectCmd is `agentsim sweep collect DIR`: the table, from the run directories
// wherever they ran.
type sweepCollectCmd struct {
	env      []string
	settings *pflag.FlagSet
	v        *viper.Viper
}

// sweepCollectConfig is sweep collect's settings.
type sweepCollectConfig struct {
	Expect []string `mapstructure:"expect"`
}

func (s *sweepCollectCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "collect DIR",
		Short: "Build a sweep's table from its run directories, wherever they ran",
		Long: `Read a sweep directory's plan (sweep.json) and the run directories under it — written by a
local sweep or by the pods of a Kubernetes Job — and write and print the table, as agentsim
sweep does at its end: summary.txt, summary.csv, summary.json and summary.html (the table
under a heatmap of the verdicts per cell).

Exit codes: 0 done (and every cell within --expect), 1 the summary files could not be written,
2 a bad flag or DIR holds no sweep, 3 a cell fell outside --expect.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("sweep collect takes one sweep directory, got %d arguments", len(args)))
			}
			return nil
		},
		RunE: s.run,
	}
	f := pflag.NewFlagSet("sweep collect", pflag.ContinueOnError)
	f.StringSlice("expect", nil, "verdicts every run of every cell must have, e.g. healthy,slow: exit 3 otherwise")
	c.Flags().AddFlagSet(f)
	s.settings, s.v = f, newViper(f)
	return c
}

func (s *sweepCollectCmd) run(c *cobra.Command, args []string) error {
	var cfg sweepCollectConfig
	problems, _ := loadSettings(s.settings, s.v, s.env, &cfg)
	expect, ps := parseExpect(cfg.Expect)
	if err := configError(append(problems, ps...)); err != nil {
		return err
	}
	_, sum, err := sweep.Collect(args[0])
	if err != nil {
		return usageError(err)
	}
	return (&sweepCmd{}).report(c, sum, args[0], expect, nil)
}
