package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/internal/calibrate"
	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/internal/keepalive"
	"github.com/agentsim/agentsim/simserver"
)

// calibrateCmd is `agentsim calibrate`: designed experiments against a server, fitted into a
// simulator profile, its digital twin.
type calibrateCmd struct {
	env      []string
	settings *pflag.FlagSet
	v        *viper.Viper
}

// calibrateConfig is calibrate's settings, decoded once from its flags and the environment.
type calibrateConfig struct {
	Server         string        `mapstructure:"server"`
	Out            string        `mapstructure:"out"`
	Base           string        `mapstructure:"base"`
	Model          string        `mapstructure:"model"`
	APIKey         string        `mapstructure:"api-key"`
	MaxConcurrency int           `mapstructure:"max-concurrency"`
	MaxPrompt      int           `mapstructure:"max-prompt"`
	ChunkTokens    int           `mapstructure:"chunk-tokens"`
	Repeats        int           `mapstructure:"repeats"`
	Budget         time.Duration `mapstructure:"budget"`
	Seed           int64         `mapstructure:"seed"`
	From           []string      `mapstructure:"from"`
}

func (k *calibrateCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "calibrate --server URL --out PROFILE.yaml",
		Short: "Fit a simulator profile to a server by designed experiments: its digital twin",
		Long: `Run designed experiments against an OpenAI-compatible server — the largest batch it runs,
a concurrency sweep at short prompts, fixed batches at growing context, prompt-length steps,
a repeated-prefix probe and, when a cache answers, its size, an interference probe (which
engine kind it is) and a KV probe —
each point with fresh prompts (so a prompt cache cannot answer) and --repeats times (the
server's own spread), within --budget (the plan and its expected time are printed before it
starts, then one line per point). The fit writes a profile YAML (--out) whose comments give the
source, every fitted value with its standard error, the keys kept from --base and why, the
engine kind's evidence and the fit's error per experiment (docs/calibrate.md). An experiment
the server refuses (a long prompt, a capped max_tokens, errors partway) is skipped with its
reason; the profile holds what could be fitted.

"agentsim calibrate check" compares the twin with the server on a workload the fit did not see.

Exit codes: 0 written, 1 the server answered no request, 2 bad flags.`,
		Args: cobra.NoArgs,
		RunE: k.run,
	}
	f := pflag.NewFlagSet("calibrate", pflag.ContinueOnError)
	f.String("server", "", "base URL of the server to calibrate against (required)")
	f.String("out", "", "the profile file to write (required)")
	f.String("base", engine.DefaultProfile, "built-in profile or file whose values the keys the experiments do not identify keep")
	f.String("model", "", "model name to send (default: the first the server lists)")
	f.String("api-key", "", "API key, sent as a bearer token")
	f.Int("max-concurrency", calibrate.DefaultMaxConcurrency, "most requests sent at once")
	f.Int("max-prompt", calibrate.DefaultMaxPrompt, "longest prompt sent, tokens of agentsim's estimate")
	f.Int("chunk-tokens", 0, "the server's prefill batch in tokens (llama.cpp --batch-size, 2048 by default; vLLM max_num_batched_tokens); 0: the base's prefill_chunk_tokens")
	f.Int("repeats", calibrate.DefaultRepeats, "times each point runs, to measure the server's own spread")
	f.Duration("budget", calibrate.DefaultBudget, "most time the experiments may take")
	f.Int64("seed", 0, seedHelp)
	f.StringSlice("from", nil, "fit from these recorded run directories (run, replay, record --watch) instead of experiments")
	c.Flags().AddFlagSet(f)
	k.settings, k.v = f, newViper(f)
	c.AddCommand((&calibrateCheckCmd{env: k.env}).command())
	return c
}

func (k *calibrateCmd) run(c *cobra.Command, _ []string) error {
	var cfg calibrateConfig
	problems, _ := loadSettings(k.settings, k.v, k.env, &cfg)
	if err := configError(problems); err != nil {
		return err
	}
	if (cfg.Server == "" && len(cfg.From) == 0) || cfg.Out == "" {
		return usageError(fmt.Errorf("calibrate: --server (or --from) and --out are required, e.g. agentsim calibrate --server http://127.0.0.1:8080 --out mine.yaml"))
	}
	base, err := engine.LoadProfile(cfg.Base)
	if err != nil {
		return usageError(fmt.Errorf("calibrate: --base: %w", err))
	}
	if len(cfg.From) > 0 {
		return k.fromRuns(c, cfg, base)
	}
	client, err := serverClient(c.Context(), cfg.Server, cfg.Model, cfg.APIKey, cfg.MaxConcurrency)
	if err != nil {
		return err
	}
	chunk := cfg.ChunkTokens
	if chunk == 0 {
		chunk = base.PrefillChunkTokens
	}
	out := c.OutOrStdout()
	o := calibrate.Options{Client: client, MaxConcurrency: cfg.MaxConcurrency, MaxPrompt: cfg.MaxPrompt,
		ChunkTokens: chunk, Repeats: cfg.Repeats, Budget: cfg.Budget, Seed: freshSeed(cfg.Seed), Out: out}
	if err := o.Validate(); err != nil {
		return usageError(fmt.Errorf("calibrate: %w", err))
	}
	fmt.Fprintf(out, "calibrating against %s, model %s, from profile %s, %s\n", cfg.Server, client.Model, base.Name, seedLine(o.Seed))
	d, err := calibrate.Run(c.Context(), o)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	fit := calibrate.FitData(d, base, chunk)
	fit.Profile.Model = client.Model
	return writeFit(c, cfg.Out, fit, d, base.Name)
}

// fromRuns is calibrate --from: the fit of recorded runs' traffic.
func (k *calibrateCmd) fromRuns(c *cobra.Command, cfg calibrateConfig, base *engine.Profile) error {
	reqs, err := calibrate.ReadRuns(cfg.From)
	if err != nil {
		return usageError(fmt.Errorf("calibrate --from: %w", err))
	}
	fit := calibrate.FitRuns(reqs, base)
	d := &calibrate.Data{URL: "recorded runs " + strings.Join(cfg.From, ", "), Model: base.Model, At: time.Now()}
	return writeFit(c, cfg.Out, fit, d, base.Name)
}

// writeFit names the fitted profile after its file, checks it and writes it with its comments.
func writeFit(c *cobra.Command, out string, fit *calibrate.Fit, d *calibrate.Data, base string) error {
	fit.Profile.Name = strings.TrimSuffix(baseName(out), ".yaml")
	fit.Profile.Description = "calibrated from " + d.URL + " at " + d.At.UTC().Format(time.RFC3339)
	if err := fit.Profile.Validate(); err != nil {
		return fmt.Errorf("calibrate: the fitted profile is invalid: %w", err)
	}
	y, err := fit.YAML(d, base)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	if err := os.WriteFile(out, y, 0o644); err != nil {
		return fmt.Errorf("calibrate: write %s: %w", out, err)
	}
	fmt.Fprint(c.OutOrStdout(), fit.Summary())
	fmt.Fprintf(c.OutOrStdout(), "wrote %s\n", out)
	return nil
}

// baseName is a path's last element.
func baseName(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}

// serverClient asks the server what it serves and returns a calibration client for it, on
// the clock the server advertises (an agentsim server's speedup) or the real one.
func serverClient(ctx context.Context, url, model, key string, conns int) (*calibrate.Client, error) {
	url = strings.TrimSuffix(strings.TrimSuffix(url, "/"), "/v1")
	// llama-server closes a connection idle for 5 s (cpp-httplib's keep-alive timeout), and a POST
	// sent on one it has just closed fails: idle connections are dropped sooner, and a request
	// lost that way all the same is sent again (internal/keepalive), as the agents do.
	hc := &http.Client{Transport: keepalive.Transport{Next: &http.Transport{MaxIdleConnsPerHost: conns + 2, IdleConnTimeout: 2 * time.Second}}}
	served, err := harness.AskServer(ctx, hc, url, key, 30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	if model == "" {
		ids := served.IDs()
		if len(ids) == 0 {
			return nil, usageError(fmt.Errorf("calibrate: %s lists no model: name one with --model", url))
		}
		model = ids[0]
	}
	clk := clock.Real()
	if served.Speedup > 1 {
		if clk, err = clock.New(served.Speedup); err != nil {
			return nil, fmt.Errorf("calibrate: %w", err)
		}
	}
	return &calibrate.Client{URL: url, Model: model, APIKey: key, HTTP: hc, Clock: clk}, nil
}

// calibrateCheckCmd is `agentsim calibrate check`: one workload against the server, twice,
// and against its twin, side by side.
type calibrateCheckCmd struct {
	env      []string
	settings *pflag.FlagSet
	v        *viper.Viper
}

// calibrateCheckConfig is calibrate check's settings.
type calibrateCheckConfig struct {
	Profile     string        `mapstructure:"profile"`
	Server      string        `mapstructure:"server"`
	Model       string        `mapstructure:"model"`
	APIKey      string        `mapstructure:"api-key"`
	Agents      []int         `mapstructure:"agents"`
	Rounds      int           `mapstructure:"rounds"`
	First       int           `mapstructure:"first-tokens"`
	Turn        int           `mapstructure:"turn-tokens"`
	Output      int           `mapstructure:"output-tokens"`
	TwinSpeedup float64       `mapstructure:"twin-speedup"`
	Timeout     time.Duration `mapstructure:"timeout"`
	Workload    string        `mapstructure:"workload"`
	Out         string        `mapstructure:"out"`
	Seed        int64         `mapstructure:"seed"`
}

func (k *calibrateCheckCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "check --profile PROFILE --server URL",
		Short: "Run one workload against a server (twice) and its twin, side by side",
		Long: `Run a multi-agent workload with growing contexts (--agents conversations at once, each of
--rounds requests whose context grows by the reply and a new user turn) against the server
twice, for its own spread, and against the embedded simulator with --profile, its twin; then
print TTFT, ITL, TPOT and e2e p50/p90 and the output throughput per concurrency side by side,
each with the twin's error against the server's mean, its direction, the server's own spread
(|run 1 − run 2| / mean) and whether the error is inside it.

With --workload FILE (a workload YAML, or a built-in's name) the workload is the user's own:
it runs as "agentsim run --workload FILE" twice against the server and once against the
embedded simulator with --profile, each into a run directory under --out (default: a
temporary one, removed), and the table compares their requests (ITL is then each request's
mean gap between chunks).`,
		Args: cobra.NoArgs,
		RunE: k.run,
	}
	w := calibrate.DefaultWorkload
	f := pflag.NewFlagSet("calibrate check", pflag.ContinueOnError)
	f.String("profile", "", "the twin's profile, built-in or file (required)")
	f.String("server", "", "base URL of the server (required)")
	f.String("model", "", "model name to send (default: the first the server lists)")
	f.String("api-key", "", "API key, sent as a bearer token")
	f.IntSlice("agents", w.Agents, "concurrencies to run, one run each")
	f.Int("rounds", w.Rounds, "requests per agent")
	f.Int("first-tokens", w.First, "first user message, tokens of agentsim's estimate")
	f.Int("turn-tokens", w.Turn, "each later user message, tokens of agentsim's estimate")
	f.Int("output-tokens", w.Output, "each reply, forced with ignore_eos")
	f.Float64("twin-speedup", 10, "how much faster than the wall clock the twin's simulated time runs")
	f.Duration("timeout", 30*time.Minute, "most time the whole check may take")
	f.String("workload", "", "run this workload (a YAML file or a built-in's name) instead of the growing-context one")
	f.String("out", "", "with --workload: the directory that keeps the three runs (default: a temporary one, removed)")
	f.Int64("seed", 0, seedHelp)
	c.Flags().AddFlagSet(f)
	k.settings, k.v = f, newViper(f)
	return c
}

func (k *calibrateCheckCmd) run(c *cobra.Command, _ []string) error {
	var cfg calibrateCheckConfig
	problems, _ := loadSettings(k.settings, k.v, k.env, &cfg)
	if err := configError(problems); err != nil {
		return err
	}
	if cfg.Profile == "" || cfg.Server == "" {
		return usageError(fmt.Errorf("calibrate check: --profile and --server are required"))
	}
	p, err := engine.LoadProfile(cfg.Profile)
	if err != nil {
		return usageError(fmt.Errorf("calibrate check: --profile: %w", err))
	}
	ctx, cancel := context.WithTimeout(c.Context(), cfg.Timeout)
	defer cancel()
	server, err := serverClient(ctx, cfg.Server, cfg.Model, cfg.APIKey, 64)
	if err != nil {
		return err
	}
	twinClk, err := clock.New(cfg.TwinSpeedup)
	if err != nil {
		return usageError(fmt.Errorf("calibrate check: --twin-speedup: %w", err))
	}
	sim, err := simserver.New(simserver.Options{Profile: p, Clock: twinClk})
	if err != nil {
		return fmt.Errorf("calibrate check: %w", err)
	}
	local, err := sim.ServeLocal()
	if err != nil {
		return fmt.Errorf("calibrate check: %w", err)
	}
	defer local.Close()
	if cfg.Workload != "" {
		return k.workloadRuns(c, ctx, cfg, server, min(max(p.MaxRunning, 1), calibrate.MaxFlush))
	}
	twin := &calibrate.Client{URL: simserver.LocalURL, Model: p.Model, HTTP: local.Client(), Clock: twinClk}
	w := calibrate.Workload{Agents: cfg.Agents, Rounds: cfg.Rounds, First: cfg.First, Turn: cfg.Turn, Output: cfg.Output, Seed: freshSeed(cfg.Seed)}
	out := c.OutOrStdout()
	fmt.Fprintf(out, "checking %s against %s, %s\n", cfg.Profile, cfg.Server, seedLine(w.Seed))
	var rows []calibrate.Row
	var refs [2][]calibrate.Obs             // the reference requests: the server's, the twin's
	fastest := time.Duration(math.MaxInt64) // the twin's shortest TTFT p50
	for _, n := range w.Agents {
		var got [3]calibrate.Figures
		var ref [3]calibrate.Obs
		for i, who := range []*calibrate.Client{server, server, twin} {
			name := [3]string{"server run 1", "server run 2", "twin"}[i]
			fmt.Fprintf(out, "%s, %d agents × %d rounds ...\n", name, n, w.Rounds)
			fresh := w.Fresh(n, i%2)
			slots := min(max(p.MaxRunning, n), calibrate.MaxFlush)
			calibrate.Flush(ctx, who, slots, fresh.Seed+int64(i)+500)
			ref[i] = calibrate.Reference(ctx, who, fresh.Seed+int64(i)+500)
			refs[i/2] = append(refs[i/2], ref[i])
			calibrate.Flush(ctx, who, slots, fresh.Seed+int64(i))
			got[i] = calibrate.RunWorkload(ctx, who, fresh, n)
			if line := got[i].FailureLine(name); line != "" {
				fmt.Fprintln(out, line)
			}
		}
		rows = append(rows, calibrate.Compare(got[0], got[1], got[2])...)
		rows = append(rows, calibrate.ReferenceRows(n, ref[0], ref[1], ref[2])...)
		fastest = min(fastest, got[2].TTFT[0])
	}
	calibrate.PrintRows(out, rows)
	fmt.Fprintln(out, calibrate.ReferenceLine(refs[0], refs[1]))
	fmt.Fprintln(out, twinLagLine(sim.Engine().Lag().Stats(), fastest, cfg.TwinSpeedup))
	return nil
}

// twinLagLine says how late the twin's simulator delivered its tokens after its model made
// them: lag the machine adds to the twin's figures, magnified by its speedup in simulated
// time. When its p99 passes 5 % of the twin's shortest TTFT p50 it advises a lower speedup.
func twinLagLine(l clock.LagStats, ttft time.Duration, speedup float64) string {
	line := fmt.Sprintf("twin's own lag (its tokens' delivery after its model made them, simulated, at --twin-speedup %g): p50 %s, p99 %s, max %s",
		speedup, l.P50.Round(time.Microsecond), l.P99.Round(time.Microsecond), l.Max.Round(time.Microsecond))
	if ttft > 0 && l.P99 > ttft/20 && speedup > 1 {
		line += fmt.Sprintf("; beside its TTFT p50 of %s this lag is in the figures: check again with a lower --twin-speedup (1 runs the twin in real time)", ttft.Round(time.Microsecond))
	}
	return line
}

// workloadRuns is calibrate check --workload: the user's workload run twice against the server
// and once against the twin, each by agentsim run into a directory of its own, compared from
// their events.
//
// Each server run starts with a flush of slots requests (calibrate.Flush), as the default
// workload's do; the twin's run starts a simulator of its own, with nothing left in it.
func (k *calibrateCheckCmd) workloadRuns(c *cobra.Command, ctx context.Context, cfg calibrateCheckConfig, server *calibrate.Client, slots int) error {
	dir := cfg.Out
	if dir == "" {
		tmp, err := os.MkdirTemp("", "agentsim-check-")
		if err != nil {
			return fmt.Errorf("calibrate check: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("calibrate check: --out: %w", err)
	}
	out := c.OutOrStdout()
	seed := freshSeed(cfg.Seed) // of the flushes' text; the workload's is its own
	fmt.Fprintf(out, "checking %s against %s with workload %s, flushes' %s\n", cfg.Profile, cfg.Server, cfg.Workload, seedLine(seed))
	speedup := strconv.FormatFloat(cfg.TwinSpeedup, 'g', -1, 64)
	runs := []struct {
		name, sub string
		target    []string
	}{
		{"server run 1", "server-1", []string{"--server", cfg.Server}},
		{"server run 2", "server-2", []string{"--server", cfg.Server}},
		{"twin", "twin", []string{"--sim-profile", cfg.Profile, "--speedup", speedup}},
	}
	var got [3]calibrate.Figures
	for i, r := range runs {
		at := filepath.Join(dir, r.sub)
		args := append([]string{"run", "--workload", cfg.Workload, "--out", at, "--force"}, r.target...)
		if cfg.APIKey != "" && i < 2 {
			args = append(args, "--api-key", cfg.APIKey)
		}
		if cfg.Model != "" && i < 2 {
			args = append(args, "--model", cfg.Model)
		}
		fmt.Fprintf(out, "%s: agentsim %s ...\n", r.name, strings.Join(redactKey(args), " "))
		if i < 2 {
			calibrate.Flush(ctx, server, slots, seed+int64(1000+i))
		}
		root := newRoot(io.Discard, c.ErrOrStderr(), k.env, args)
		root.SetArgs(args)
		if code := exitCode(root.ExecuteContext(ctx)); code != ExitOK && code != ExitVerdict && code != ExitUnreliable {
			return &ExitError{Code: ExitRuntime, Err: fmt.Errorf("calibrate check: %s: agentsim run exited %d", r.name, code)}
		}
		f, err := calibrate.FiguresOfRun(at)
		if err != nil {
			return fmt.Errorf("calibrate check: %s: %w", r.name, err)
		}
		if line := f.FailureLine(r.name); line != "" {
			fmt.Fprintln(out, line)
		}
		got[i] = f
	}
	calibrate.PrintRows(out, calibrate.Compare(got[0], got[1], got[2]))
	if cfg.Out != "" {
		fmt.Fprintf(out, "runs kept in %s\n", dir)
	}
	return nil
}

// redactKey is a command line with the value of --api-key masked, for printing.
func redactKey(args []string) []string {
	shown := slices.Clone(args)
	for i := range shown {
		if i > 0 && shown[i-1] == "--api-key" {
			shown[i] = "***"
		}
	}
	return shown
}

// seedHelp describes calibrate's and calibrate check's --seed.
const seedHelp = "seed of the prompts' text; 0: a new one each invocation, printed (the same seed sends the same prompts again, which a server's prompt cache answers)"

// freshSeed is seed, or a new one when it is 0. Every prompt calibrate and calibrate check send
// is text no earlier request had, so that a prompt cache cannot answer it (docs/calibrate.md
// §1); a seed fixed across invocations would send a long-running server the text it cached
// the last time (a second check's reference request took 12 ms where the first's took 70).
func freshSeed(seed int64) int64 {
	for seed == 0 {
		seed = rand.Int64N(1 << 40)
	}
	return seed
}

// seedLine says which seed a run's prompts came from and how to send them again.
func seedLine(seed int64) string {
	return fmt.Sprintf("prompts from seed %d (--seed %d sends the same again)", seed, seed)
}
