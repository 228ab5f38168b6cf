package cli

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/internal/cli/console"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/replay"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// replayBase is the workload a replay starts from: the trace gives the agents, their rounds,
// prompts, output lengths and timing, and here the model and reasoning effort most of its
// requests named and the range of the output lengths it forces (each request its own); the
// keys left — pacer, timeouts, retry, watchdog, grace, seed — are these defaults, beneath
// --config, the environment and --set. A trace that names no model or effort keeps
// workloads' default model and effort none; one without a known output length keeps 256
// tokens, unforced, which no request samples (each sends its recorded max_tokens, else
// request.max_tokens).
func replayBase(p *replay.Plan) []byte {
	model, effort, output, force := "deepseek-v4-flash", "none", "256", false
	if p != nil && p.Model != "" {
		model = p.Model
	}
	if p != nil && p.ReasoningEffort != "" {
		effort = p.ReasoningEffort
	}
	if p != nil && p.Forced > 0 {
		output, force = strconv.Itoa(p.OutputMin), true
		if p.OutputMax > p.OutputMin {
			output = fmt.Sprintf("{dist: uniform, min: %d, max: %d}", p.OutputMin, p.OutputMax)
		}
	}
	return fmt.Appendf(nil, `name: replay
agents: 1
rounds: 1
duration: 0s
seed: 1
model: %s
context: {system_tokens: 0, initial_tokens: 1, read_tokens: 0, max_context_tokens: 1048576}
request: {stream: true, reasoning_effort: %s, max_tokens: 4096, output_tokens: %s, force_output_length: %t}
retry: {max: 0}
pacer: {kind: unlimited}
grace: 30s
`, strconv.Quote(model), strconv.Quote(effort), output, force)
}

// fromTrace says, one line per workload key, what w took from the trace of p: config.yaml's
// reproduce.replay.from_trace. A key the user set (--config, the environment, --set)
// to another value is not listed.
func fromTrace(p *replay.Plan, w *workloads.Workload) []string {
	others := func(n int) string {
		if n < p.Requests {
			return "; the others send their own"
		}
		return ""
	}
	out := []string{}
	if p.Model != "" && w.Model == p.Model {
		out = append(out, fmt.Sprintf("model: %s, named by %d of the %d requests replayed%s", p.Model, p.ModelRequests, p.Requests, others(p.ModelRequests)))
	}
	if p.ReasoningEffort != "" && w.Request.ReasoningEffort == p.ReasoningEffort {
		out = append(out, fmt.Sprintf("request.reasoning_effort: %s, asked by %d of the %d requests replayed%s", p.ReasoningEffort, p.EffortRequests, p.Requests, others(p.EffortRequests)))
	}
	if p.Forced > 0 {
		out = append(out, fmt.Sprintf("request.output_tokens: %d–%d tokens, the range of the %d recorded output lengths; each of those requests is forced to its own (max_tokens with ignore_eos)", p.OutputMin, p.OutputMax, p.Forced))
	}
	return out
}

// replayCmd is `agentsim replay FILE`: a trace against a server or the embedded simulator.
type replayCmd struct {
	env      []string
	args     []string
	settings *pflag.FlagSet
	v        *viper.Viper
	over     overrides
}

// replayConfig is replay's settings.
type replayConfig struct {
	Mode      string       `mapstructure:"mode"`
	Sessions  int          `mapstructure:"sessions"`
	TimeScale float64      `mapstructure:"time-scale"`
	FromS     float64      `mapstructure:"from-s"`
	ToS       float64      `mapstructure:"to-s"`
	Config    string       `mapstructure:"config"`
	Out       string       `mapstructure:"out"`
	Force     bool         `mapstructure:"force"`
	Metrics   string       `mapstructure:"metrics-addr"`
	Target    targetConfig `mapstructure:",squash"`
}

func (r *replayCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "replay FILE|-",
		Short: "Replay a trace (agentsim.trace/v1) against a server or the embedded simulator",
		Long: `Replay the requests of a trace: each session is an agent, each request one of its rounds, with a
prompt of the recorded length whose prefix structure reproduces the trace's extends and hash_ids
(so the server's prefix cache sees the same reuse), and the recorded output length forced
(max_tokens with ignore_eos). A trace with tool fields is replayed with its tool structure:
definitions of the recorded size (tools_tokens) on every request, the calls a reply recorded
with tool_calls asked for and answered by one tool message each (tool_call_id), and the
recorded tool time (tool_s) spent in tools before the next request.

  --mode sessions     (default when a session has more than one request) each session is a
                      closed loop behind the pacer: request k+1 is sent after_s after request k
                      ended.
  --mode timestamps   every request at its recorded t_s, whatever the server does (open loop);
                      each send's lateness is recorded (schedule_lag_s) and summarised.

--time-scale X multiplies the trace's times (0.5 replays twice as fast), --from-s/--to-s keep
a window of it, --sessions N its first N sessions. The run directory, events, samples,
results.json and verdict are run's; results.json's "replay" object compares the replay with
the original where the trace has outcomes (e2e and TTFT per request, concurrency over time).
The model and reasoning effort are those most of the trace's requests named (a request that
named another sends its own; --set model=… replaces the common one); config.yaml's
reproduce.replay says what the workload took from the trace. A request is counted with the
recorded token counts when its output matches and its prompt is within 2 % or 16 tokens; the
differences are in results.json (prompt_tokens_diff). The pacer, timeouts, retry and watchdog
keys come from --config and --set (default: pacer unlimited, no retries). See docs/trace.md.

Exit codes: 0 healthy or slow, 1 runtime failure, 2 usage error or invalid trace, 3 any other
verdict, 130 interrupted.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("replay takes one trace file (or - for standard input), e.g. agentsim replay trace.jsonl; got %d arguments", len(args)))
			}
			return nil
		},
		RunE: r.run,
	}
	f := pflag.NewFlagSet("replay", pflag.ContinueOnError)
	f.String("mode", "", "sessions (closed loop per session) or timestamps (open loop at t_s); default: sessions when a session has several requests")
	f.Int("sessions", 0, "replay only the first N sessions to start (0: all)")
	f.Float64("time-scale", 1, "multiply the trace's times by this (0.5: twice as fast)")
	f.Float64("from-s", 0, "replay the requests sent from this second of the trace on")
	f.Float64("to-s", 0, "replay the requests sent before this second of the trace (0: to the end)")
	f.String("config", "", "YAML file of workload keys (pacer, timeouts, retry, watchdog…) for the replay")
	f.String("out", "", "run directory (default runs/<UTC time>-replay)")
	addForceFlag(f)
	addServerFlags(f)
	addMetricsFlag(f)
	c.Flags().AddFlagSet(f)
	c.Flags().Var(&setFlag{&r.over}, "set", "override a workload key: key=value (repeatable), e.g. pacer.kind=slots")
	r.settings, r.v = f, newViper(f)
	return c
}

func (r *replayCmd) run(c *cobra.Command, args []string) error {
	var cfg replayConfig
	problems, env := loadSettings(r.settings, r.v, r.env, &cfg)
	problems = append(problems, unreported(cfg.Target.check(c.Flags()), problems)...)
	opts := replay.Options{Mode: replay.Mode(cfg.Mode), Sessions: cfg.Sessions, TimeScale: cfg.TimeScale, FromS: cfg.FromS, ToS: cfg.ToS}
	if !(cfg.TimeScale >= replay.MinTimeScale && cfg.TimeScale <= replay.MaxTimeScale) {
		return usageError(fmt.Errorf("--time-scale %v is not allowed: want a number from %v to %v (0.5 replays twice as fast)",
			cfg.TimeScale, replay.MinTimeScale, replay.MaxTimeScale))
	}
	if err := opts.Validate(); err != nil {
		return usageError(fmt.Errorf("replay: %w", err))
	}
	// The keys are checked before the trace is read, so a bad --set is named first; the
	// workload is then resolved again on the trace's base.
	if _, err := loadReplayWorkload(problems, nil, cfg.Config, env, &r.over); err != nil {
		return err
	}
	in, name, closeIn, err := openInput(c, args[0])
	if err != nil {
		return err
	}
	plan, err := replay.Load(in, name, opts)
	closeIn()
	var se *replay.SelectionError
	if errors.As(err, &se) {
		return usageError(fmt.Errorf("%w (--sessions, --from-s, --to-s)", err))
	}
	if err != nil {
		return usageError(err)
	}
	w, err := loadReplayWorkload(problems, plan, cfg.Config, env, &r.over)
	if err != nil {
		return err
	}
	w.Agents = len(plan.Scripts)
	if c.Context().Err() != nil {
		return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted before the replay started")}
	}
	if err := ensureOpenFiles(openFileLimit, "sessions", w.Agents, cfg.Target.Server != ""); err != nil {
		return err
	}
	st, err := openSite(c, r.env, cfg.Out, cfg.Force, w.Name, cfg.Metrics, cfg.Target)
	if err != nil {
		return err
	}
	defer st.close()
	dir, target := st.dir, st.target
	reproduce := newReproduction(r.args, r.env, w.Seed, cfg.Target, target.info.Kind == results.Embedded)
	reproduce.Replay = &results.ReplaySource{Trace: name, FromTrace: fromTrace(plan, w)}
	o := harness.Options{Scripts: plan.Scripts, Command: "replay", Workload: w, Dir: dir, Metrics: st.metrics,
		PinModel: modelPinned(&r.over, env), Reproduce: reproduce}
	p, err := target.prepare(c, &o)
	if err != nil {
		st.discard() // nothing ran
		return err
	}
	say(c.OutOrStdout(), p.Said())
	o.Observer = runConsole(c.OutOrStdout(), o.Clock)
	res, err := harness.Run(c.Context(), o)
	if err != nil {
		st.discard()
		return harnessError(err)
	}
	if res.Replay, err = replay.Compare(dir, plan); err != nil {
		return runtimeError(err)
	}
	res.Warnings = append(res.Warnings, diagnose.ReplayWarnings(res.Replay)...)
	if err := results.Write(dir, res); err != nil {
		return runtimeError(err)
	}
	console.PrintSummary(c.OutOrStdout(), res, dir)
	for i, l := range replay.Lines(res.Replay) {
		label := ""
		if i == 0 {
			label = "replay"
		}
		fmt.Fprintf(c.OutOrStdout(), "  %-13s %s\n", label, l)
	}
	return verdictExit(res)
}

// loadReplayWorkload resolves the replay's workload: replayBase of p (nil: of no trace)
// beneath --config, the environment and --set.
func loadReplayWorkload(problems []workloads.Problem, p *replay.Plan, configFile string, env []string, o *overrides) (*workloads.Workload, error) {
	return loadWith(problems, workloads.LoadOptions{Workload: "replay", Base: replayBase(p), ConfigFile: configFile, Env: env}, o)
}
