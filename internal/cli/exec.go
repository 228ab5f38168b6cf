package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/internal/procs"
	"github.com/agentsim/agentsim/workloads"
)

// execCmd is `agentsim exec`: N copies of a real harness as the agents, against the simulator
// or a server, through the watching proxy.
type execCmd struct {
	env      []string       // the process environment, as Execute read it
	settings *pflag.FlagSet // the flags bound to v
	v        *viper.Viper
	over     overrides
}

// execConfig is exec's settings, decoded once from its flags and the environment.
type execConfig struct {
	Config    string        `mapstructure:"config"`
	Out       string        `mapstructure:"out"`
	Force     bool          `mapstructure:"force"`
	Target    targetConfig  `mapstructure:",squash"`
	KillAfter time.Duration `mapstructure:"kill-after"`
}

// execBase is the workload exec starts from: the keys it reads are the agents (processes),
// duration, start_jitter, model, seed, the watchdog and the sample interval.
const execBase = `name: exec
agents: 4
rounds: 1
duration: 30m
start_jitter: 0s
grace: 5s
`

func (e *execCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "exec [--agents N] [flags] -- CMD ARGS…",
		Short: "Run N copies of a real harness as the agents, watched and judged",
		Long: `Start the embedded simulator on a loopback port (or use --server), put the watching
recording proxy in front of it, and run N copies of CMD (--agents, default 4) as the agents,
spread over start_jitter (--set start_jitter=10s). Each process gets

  OPENAI_BASE_URL  its own base URL, http://127.0.0.1:PORT/agents/<agent>/v1
  OPENAI_API_KEY   --api-key, else agentsim's own OPENAI_API_KEY, else a dummy
  AGENTSIM_URL     its root, http://127.0.0.1:PORT/agents/<agent>
  AGENTSIM_AGENT   its index, from 0
  AGENTSIM_MODEL   the model (the simulator's, or --model)

and {url}, {base_url}, {model} and {agent} are replaced in its arguments. The proxy tags each
request with the process that sent it (X-Agent-ID) from the path, since a harness adds no header
of its own. Each process works in DIR/procs/<agent>/ and writes DIR/procs/<agent>.out and .err.

The run ends when every process has exited, at duration, or at the watchdog's verdict
(watchdog.hang_after without progress); then every process group gets SIGTERM, and SIGKILL
after --kill-after. The run directory holds what run's does (events.jsonl, samples.jsonl,
results.json, config.yaml) and the proxy's trace.jsonl: diagnose, report, diff, trace import
--from run and replay work on it. The simulator runs at --speedup 1 unless told otherwise,
since the harness's own timeouts are wall-clock.

Exit codes: 0 healthy or slow, 1 runtime failure (also: every process failed before sending a
request), 2 usage error (also: CMD not found), 3 any other verdict, 130 interrupted.`,
		Args: func(c *cobra.Command, args []string) error {
			if c.ArgsLenAtDash() != 0 || len(args) == 0 {
				return usageError(errors.New("exec needs the harness's command after --, e.g. agentsim exec --agents 4 -- node harness.mjs"))
			}
			return nil
		},
		RunE: e.run,
	}
	f := pflag.NewFlagSet("exec", pflag.ContinueOnError)
	f.String("config", "", "YAML file of workload keys (agents, duration, start_jitter, watchdog.*)")
	f.String("out", "", "run directory (default runs/<UTC time>-exec)")
	addForceFlag(f)
	addServerFlags(f)
	f.Duration("kill-after", procs.DefaultGrace, "wall time a process may take to exit after SIGTERM before SIGKILL")
	c.Flags().AddFlagSet(f)
	e.over.addFlags(c.Flags())
	e.settings, e.v = f, newViper(f)
	return c
}

func (e *execCmd) run(c *cobra.Command, args []string) error {
	var cfg execConfig
	problems, env := loadSettings(e.settings, e.v, e.env, &cfg)
	problems = append(problems, unreported(cfg.Target.check(c.Flags()), problems)...)
	w, err := loadWith(problems, workloads.LoadOptions{Workload: "exec", Base: []byte(execBase), ConfigFile: cfg.Config, Env: env}, &e.over)
	if err != nil {
		return err
	}
	if cfg.KillAfter <= 0 {
		return usageError(fmt.Errorf("--kill-after %s: want a duration > 0, e.g. 5s", cfg.KillAfter))
	}
	spec := procs.Spec{Command: args, Agents: w.Agents, Env: e.env, Dir: ".", Grace: cfg.KillAfter}
	if err := spec.Validate(); err != nil {
		return usageError(fmt.Errorf("exec: %w", err))
	}
	if c.Context().Err() != nil {
		return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted before the run started")}
	}
	r := &execRun{c: c, cfg: &cfg, w: w, spec: spec, pinned: modelPinned(&e.over, env), env: e.env,
		errOut: &lockedWriter{w: c.ErrOrStderr()}}
	return r.run()
}

// apiKey is the key the processes get: --api-key, else OPENAI_API_KEY of env, else a dummy.
func apiKey(given string, env []string) string {
	if given != "" {
		return given
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OPENAI_API_KEY="); ok && v != "" {
			return v
		}
	}
	return "sk-agentsim-dummy"
}
