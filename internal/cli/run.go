package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"golang.org/x/term"

	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// runCmd is `agentsim run`: a workload against a server or the embedded simulator.
type runCmd struct {
	v *viper.Viper
}

func (r *runCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "run",
		Short: "Run a multi-agent workload against a server or the embedded simulator",
		Long: `Run a workload (default ocbrowse: 30 agents, heavy reasoning, growing contexts) behind its
pacer. Without --server, agentsim starts its simulated inference server in-process on a loopback
port. The run directory gets events.jsonl, samples.jsonl, results.json and config.yaml.

Exit codes: 0 healthy or slow, 1 runtime failure, 2 usage or configuration error, 3 any other
verdict, 130 interrupted.`,
		Args: cobra.NoArgs,
		RunE: r.run,
	}
	f := c.Flags()
	addWorkloadFlags(f, "ocbrowse")
	addServerFlags(f)
	r.v = newViper(f)
	return c
}

// addWorkloadFlags adds the flags that select and override a workload.
func addWorkloadFlags(f *pflag.FlagSet, def string) {
	f.String("workload", def, fmt.Sprintf("built-in workload (%s) or a YAML file", strings.Join(workloads.Names(), ", ")))
	f.String("config", "", "YAML file of workload keys overriding the workload's own")
	f.Int("agents", 0, "number of agents (overrides the workload)")
	f.Int("rounds", 0, "rounds per agent (overrides the workload)")
	f.Duration("duration", 0, "end new rounds after this simulated time (overrides the workload)")
	f.Int64("seed", 0, "seed for text, lengths and timing (overrides the workload)")
	f.StringArray("set", nil, "override any workload key: key=value (repeatable), e.g. pacer.slots=16")
	f.String("out", "", "run directory (default runs/<UTC time>-<workload>)")
}

// addServerFlags adds the flags that pick the server: an external one or the embedded simulator.
func addServerFlags(f *pflag.FlagSet) {
	f.String("server", "", "base URL of an OpenAI-compatible server (default: the embedded simulator)")
	f.String("api-key", "", "bearer token for the server (or AGENTSIM_API_KEY); never printed or written")
	f.StringArray("metrics-url", nil, "Prometheus /metrics URL to sample (repeatable; default the server's /metrics)")
	f.String("sim-profile", "dsv4-pd", "embedded simulator: engine profile")
	f.StringSlice("sim-fault", nil, "embedded simulator: fault(s) to inject, as serve --fault")
	f.StringArray("sim-fault-param", nil, "embedded simulator: fault parameter, as serve --fault-param")
	f.Float64("speedup", 1, "embedded simulator only: simulated time runs this many times faster than wall time")
	f.Uint64("sim-seed", 1, "embedded simulator: seed for its random decisions")
}

func (r *runCmd) run(c *cobra.Command, _ []string) error {
	w, err := loadWorkload(c, r.v)
	if err != nil {
		return err
	}
	target, err := startTarget(c, r.v)
	if err != nil {
		return err
	}
	defer target.stop()
	dir := runDir(r.v, w.Name)
	res, err := harness.Run(c.Context(), harness.Options{
		Command: "run", Workload: w, Clock: target.clock, Target: target.info, Dir: dir,
		Out: c.OutOrStdout(), Live: isTerminal(c.OutOrStdout()), HTTPClient: target.client,
	})
	if err != nil {
		return runtimeError(err)
	}
	harness.PrintSummary(c.OutOrStdout(), res, dir)
	return verdictExit(res)
}

// loadWorkload resolves the workload: flags and --set > AGENTSIM_ environment > --config >
// the workload file > defaults.
func loadWorkload(c *cobra.Command, v *viper.Viper) (*workloads.Workload, error) {
	var over []workloads.Override
	for _, name := range []string{"agents", "rounds", "duration", "seed"} {
		if c.Flags().Changed(name) {
			over = append(over, workloads.Override{Key: name, Value: c.Flags().Lookup(name).Value.String(), Source: "--" + name})
		}
	}
	sets, _ := c.Flags().GetStringArray("set")
	for _, s := range sets {
		k, val, ok := strings.Cut(s, "=")
		if !ok {
			return nil, usageError(fmt.Errorf("--set %q: want key=value, e.g. pacer.slots=16", s))
		}
		over = append(over, workloads.Override{Key: strings.TrimSpace(k), Value: val, Source: "--set"})
	}
	w, err := workloads.Load(workloads.LoadOptions{
		Workload: v.GetString("workload"), ConfigFile: v.GetString("config"),
		Env: os.Environ(), IgnoreEnv: flagEnvNames(c.Flags()), Overrides: over,
	})
	if err != nil {
		return nil, usageError(configProblems(err))
	}
	return w, nil
}

// configProblems lists several configuration problems one per indented line under a header.
func configProblems(err error) error {
	var ce *workloads.ConfigError
	if !errors.As(err, &ce) || len(ce.Problems) < 2 {
		return err
	}
	lines := make([]string, len(ce.Problems))
	for i, p := range ce.Problems {
		lines[i] = "  " + p.String()
	}
	return fmt.Errorf("invalid configuration, %d problems:\n%s", len(lines), strings.Join(lines, "\n"))
}

// flagEnvNames lists the AGENTSIM_ variables that set command flags rather than workload keys.
func flagEnvNames(f *pflag.FlagSet) []string {
	var names []string
	f.VisitAll(func(fl *pflag.Flag) {
		names = append(names, "AGENTSIM_"+strings.ToUpper(strings.ReplaceAll(fl.Name, "-", "_")))
	})
	return names
}

// runDir is --out, or runs/<UTC timestamp>-<workload>.
func runDir(v *viper.Viper, workload string) string {
	if d := v.GetString("out"); d != "" {
		return d
	}
	return filepath.Join("runs", time.Now().UTC().Format("20060102T150405Z")+"-"+workload)
}

// verdictExit maps a finished run to its exit: 130 interrupted, 0 healthy or slow, 3 otherwise.
func verdictExit(res *results.Results) error {
	switch {
	case res.Interrupted:
		return &ExitError{Code: ExitInterrupted}
	case res.Verdict.Kind.Progressing():
		return nil
	}
	return &ExitError{Code: ExitVerdict}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
