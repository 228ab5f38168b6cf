package cli

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/internal/cli/console"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/workloads"
)

// runCmd is `agentsim run`: a workload against a server or the embedded simulator.
type runCmd struct {
	env      []string       // the process environment, as Execute read it
	args     []string       // the command line, without the program name
	settings *pflag.FlagSet // the flags bound to v
	v        *viper.Viper
	over     overrides
}

// runConfig is run's settings, decoded once from its flags and the environment.
type runConfig struct {
	Workload workloadConfig `mapstructure:",squash"`
	Force    bool           `mapstructure:"force"`
	Target   targetConfig   `mapstructure:",squash"`
	Metrics  string         `mapstructure:"metrics-addr"`
	Fit      fitConfig      `mapstructure:",squash"`
	Baseline string         `mapstructure:"baseline"`
	JSON     bool           `mapstructure:"json"`
	Gate     gateConfig     `mapstructure:",squash"`
}

func (r *runCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "run",
		Short: "Run a multi-agent workload against a server or the embedded simulator",
		Long: `Run a workload (default ocbrowse: 30 agents, heavy reasoning, growing contexts) behind its
pacer. Without --server, agentsim starts its simulated inference server in the same process and
reaches it without sockets. The run directory gets events.jsonl, samples.jsonl, results.json and config.yaml; it is
runs/<UTC time>-<workload> (with -2, -3… when a run started in the same second took it), or
--out, which must be new or empty (--force replaces the run it holds). config.yaml records how
to reproduce the run: agentsim's version, the command line, seeds and simulator settings.

Configuration: built-in defaults < the workload file < --config FILE < AGENTSIM_<KEY>
environment (AGENTSIM_PACER_SLOTS=16) < --set and the flags that stand for it (--agents N is
--set agents=N; of the two, the later on the command line wins). Every other flag may come
from AGENTSIM_<FLAG> as well (AGENTSIM_SERVER, AGENTSIM_SPEEDUP, AGENTSIM_API_KEY); the flag
wins.

Exit codes: 0 healthy or slow, 1 runtime failure, 2 usage or configuration error, 3 any other
verdict or a failed threshold (docs/gate.md), 130 interrupted.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError(fmt.Errorf("run takes no arguments, got %q: name the workload with --workload and set its keys with --set key=value", args))
			}
			return nil
		},
		RunE: r.run,
	}
	r.settings = pflag.NewFlagSet("run", pflag.ContinueOnError)
	addWorkloadFlags(r.settings, "ocbrowse")
	addForceFlag(r.settings)
	addServerFlags(r.settings)
	addMetricsFlag(r.settings)
	addFitFlag(r.settings)
	addRunGateFlags(r.settings)
	c.Flags().AddFlagSet(r.settings)
	r.over.addFlags(c.Flags())
	r.v = newViper(r.settings)
	return c
}

// workloadConfig is the settings that select a workload and where its run is written.
type workloadConfig struct {
	Name   string `mapstructure:"workload"`
	Config string `mapstructure:"config"`
	Out    string `mapstructure:"out"`
}

// addWorkloadFlags adds the settings that select a workload (its keys are overridden with
// --set and the shortcut flags: see overrides).
func addWorkloadFlags(f *pflag.FlagSet, def string) {
	f.String("workload", def, fmt.Sprintf("built-in workload (%s) or a YAML file", strings.Join(workloads.Names(), ", ")))
	f.String("config", "", "YAML file of workload keys overriding the workload's own")
	f.String("out", "", "run directory (default runs/<UTC time>-<workload>)")
}

// addServerFlags adds the flags that pick the server: an external one or the embedded simulator.
func addServerFlags(f *pflag.FlagSet) {
	f.String("server", "", "base URL of an OpenAI-compatible server (default: the embedded simulator)")
	f.String("api-key", "", "bearer token for the server (or AGENTSIM_API_KEY); never printed or written")
	f.StringArray("metrics-url", nil, "Prometheus /metrics URL to sample (repeatable; default the server's /metrics)")
	f.String("sim-profile", "dsv4-pd", "embedded simulator: engine profile, a built-in name or a profile YAML file")
	f.StringSlice("sim-fault", nil, "embedded simulator: fault(s) to inject, as serve --fault")
	f.StringArray("sim-fault-param", nil, "embedded simulator: fault parameter, as serve --fault-param")
	f.String("speedup", "1", "embedded simulator only: simulated time runs this many times faster than wall time; max: as fast as the machine keeps the run's lag within 1 % of stall_after (docs/speed.md)")
	f.Uint64("sim-seed", 1, "embedded simulator: seed for its random decisions")
}

func (r *runCmd) run(c *cobra.Command, _ []string) error {
	var cfg runConfig
	problems, env := loadSettings(r.settings, r.v, r.env, &cfg)
	problems = append(problems, unreported(cfg.Target.check(c.Flags()), problems)...)
	w, err := loadWorkload(problems, cfg.Workload.Name, cfg.Workload.Config, env, &r.over)
	if err != nil {
		return err
	}
	if c.Context().Err() != nil {
		return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted before the run started")}
	}
	if err := ensureOpenFiles(openFileLimit, "agents", w.Agents, cfg.Target.Server != ""); err != nil {
		return err
	}
	g, err := newRunGate(cfg, w)
	if err != nil {
		return err
	}
	// The directory first: a refused --out is a usage error, found before anything starts.
	st, err := openSite(c, r.env, cfg.Workload.Out, cfg.Force, w.Name, cfg.Metrics, cfg.Target)
	if err != nil {
		return err
	}
	defer st.close()
	dir, target := st.dir, st.target
	o := harness.Options{Command: "run", Workload: w, Dir: dir, Metrics: st.metrics,
		Reproduce: newReproduction(r.args, r.env, w.Seed, cfg.Target, target.info.Kind == results.Embedded),
		PinModel:  modelPinned(&r.over, env), FitContext: cfg.Fit.FitContext,
	}
	p, err := target.prepare(c, &o)
	if err != nil {
		st.discard() // nothing ran
		return err
	}
	say(g.console(c), p.Said())
	if target.info.Kind == results.Embedded {
		// The profile loaded before, when the simulator was built: it cannot fail now.
		if prof, err := simserver.LoadProfile(cmp.Or(target.info.Profile, simserver.DefaultProfile)); err == nil {
			if note := longRunNote(w, prof, o.Clock.Speedup()); note != "" {
				say(g.console(c), []string{note})
			}
		}
	}
	o.Observer = runConsole(g.console(c), o.Clock).Planned(console.Plan{Rounds: w.Agents * w.Rounds, Duration: w.Duration})
	res, err := harness.Run(c.Context(), o)
	if err != nil {
		st.discard()
		return harnessError(err)
	}
	if err := g.report(c, res, dir); err != nil {
		return err
	}
	return worstExit(verdictExit(res), g.hold(c, res, dir))
}

// verdictExit maps a finished run to its exit: 130 interrupted, 4 an unreliable verdict, 0
// healthy or slow, 3 otherwise.
func verdictExit(res *results.Results) error {
	switch {
	case res.Interrupted:
		return &ExitError{Code: ExitInterrupted}
	case res.Verdict.Unreliable != "":
		return &ExitError{Code: ExitUnreliable}
	case res.Verdict.Kind.Progressing():
		return nil
	}
	return &ExitError{Code: ExitVerdict}
}
