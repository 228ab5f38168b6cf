package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/internal/bench"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/workloads"
)

// benchCmd is `agentsim bench`: the decisive batching test.
type benchCmd struct {
	env      []string       // the process environment, as Execute read it
	settings *pflag.FlagSet // the flags bound to v
	v        *viper.Viper
}

// benchConfig is bench's settings, decoded once from its flags and the environment.
type benchConfig struct {
	Shape   requestShape  `mapstructure:",squash"`
	Sweep   string        `mapstructure:"sweep"`
	Open    openFlags     `mapstructure:",squash"`
	Timeout time.Duration `mapstructure:"timeout"`
	Model   string        `mapstructure:"model"`
	Seed    int64         `mapstructure:"seed"`
	Out     string        `mapstructure:"out"`
	Force   bool          `mapstructure:"force"`
	Target  targetConfig  `mapstructure:",squash"`
}

// openFlags are bench's open-loop settings: see bench.OpenLoop.
type openFlags struct {
	Rate     float64       `mapstructure:"rate"`
	Arrivals string        `mapstructure:"arrivals"`
	Duration time.Duration `mapstructure:"duration"`
	Requests int           `mapstructure:"requests"`
}

// requestShape is the settings that shape the synthetic requests (bench and compare): see
// addBenchFlags.
type requestShape struct {
	Concurrency    int           `mapstructure:"concurrency"`
	MaxTokens      int           `mapstructure:"max-tokens"`
	PromptTokens   int           `mapstructure:"prompt-tokens"`
	SampleInterval time.Duration `mapstructure:"sample-interval"`
}

func (b *benchCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "bench",
		Short: "The decisive batching test: N concurrent fixed-length completions while sampling server metrics",
		Long: `Send --concurrency streaming chat completions at once, each with a ~--prompt-tokens prompt and
exactly --max-tokens output tokens (max_tokens with ignore_eos, as benchmark clients send them),
while sampling the server's /metrics every --sample-interval. Prints which gauges were found, one
line per sample ("t= 2.3s decode_running=16.0 prefill_inflight=16.0", plus queued and kv_usage
when the server has them) and the RESULT line:

  RESULT N=16 max_tokens=128 wall=5.4s ok=16/16 lat_min=3.9s lat_max=5.4s lat_mean=5.1s

Times are simulated seconds; a request's latency runs from send to its last byte. At a
--speedup other than 1 the line ends "speedup=20 wall_real=0.27s": the real time the test took.
Below it, TTFT, TPOT, ITL and end-to-end latency: mean, p50, p90, p99. --sweep runs the test at
each concurrency and prints the throughput curve: the aggregate output rate while at least 90%
of the peak number of streams were decoding at once, and the per-request rate.

--rate R is an open loop instead: requests sent at R per simulated second (--arrivals poisson
or constant) whatever the server does with the earlier ones, until --duration has passed or
--requests have been sent.

Exit codes: 0 every request completed, 1 server unreachable or runtime failure, 2 bad flags,
3 any request failed or returned fewer than --max-tokens output tokens, 130 interrupted.`,
		Args: cobra.NoArgs,
		RunE: b.run,
	}
	f := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	addBenchFlags(f)
	f.String("sweep", "", "run the test at each of these concurrencies and print the throughput curve, e.g. 1,16,64,96")
	f.Float64("rate", 0, "open loop: send requests at this rate, per simulated second, whatever the server does with the earlier ones (with --duration or --requests)")
	f.String("arrivals", string(bench.Poisson), "open loop: poisson (exponential gaps of mean 1/rate) or constant (one every 1/rate)")
	f.Duration("duration", 0, "open loop: send requests for this simulated time")
	f.Int("requests", 0, fmt.Sprintf("open loop: send this many requests (at most %d)", bench.MaxOpenRequests))
	f.Duration("timeout", bench.DefaultTimeout, "a request still running after this simulated time fails (0: no limit)")
	f.String("model", "", "model name to send (default: the first model the server lists on /v1/models)")
	f.Int64("seed", 1, "seed for the prompt text")
	f.String("out", "", "run directory (default runs/<UTC time>-bench)")
	addForceFlag(f)
	addServerFlags(f)
	c.Flags().AddFlagSet(f)
	b.settings, b.v = f, newViper(f)
	return c
}

// addBenchFlags adds the flags that shape the synthetic requests (bench and compare).
func addBenchFlags(f *pflag.FlagSet) {
	f.Int("concurrency", bench.DefaultConcurrency, "requests sent at once")
	f.Int("max-tokens", bench.DefaultMaxTokens, "output tokens per request, forced with ignore_eos")
	f.Int("prompt-tokens", bench.DefaultPromptTokens, "prompt length per request, in tokens (short words)")
	f.Duration("sample-interval", bench.DefaultSampleInterval, "simulated time between two samples of the server's gauges")
}

func (b *benchCmd) run(c *cobra.Command, _ []string) error {
	var cfg benchConfig
	problems, _ := loadSettings(b.settings, b.v, b.env, &cfg)
	o, err := benchOptions(c, problems, cfg.Shape, &cfg)
	if err != nil {
		return err
	}
	if err := ensureOpenFiles(openFileLimit, concurrencyFlag(o), maxOf(o.Concurrency), cfg.Target.Server != ""); err != nil {
		return err
	}
	st, err := openSite(c, b.env, cfg.Out, cfg.Force, "bench", "", cfg.Target)
	if err != nil {
		return err
	}
	defer st.close()
	dir, discard, t := st.dir, st.discard, st.target
	out := c.OutOrStdout()
	o.Target, o.Clock, o.HTTPClient, o.Out, o.Dir = t.info, t.clock, t.client, out, dir
	o.Model, o.Seed = cfg.Model, cfg.Seed
	o, p, err := bench.Prepare(c.Context(), o)
	if err != nil {
		discard() // nothing ran
		return harnessError(err)
	}
	t.adopt(c, p)
	fmt.Fprintln(out, benchHeader(o))
	if p.Model.Note != "" {
		fmt.Fprintln(out, p.Model.Note)
	}
	rep, err := bench.Run(c.Context(), o)
	if err != nil {
		discard()
		return harnessError(err)
	}
	fmt.Fprintf(out, "  files    %s\n", filepath.Join(dir, bench.Files(o)))
	return benchExit(rep)
}

// benchHeader says in one line what is about to run, against what.
func benchHeader(o bench.Options) string {
	what := fmt.Sprintf("%d requests at once", o.Concurrency[0])
	switch {
	case o.Sweep:
		what = "sweep over " + joinInts(o.Concurrency) + " requests at once"
	case o.Open != nil:
		what = "open loop, " + o.Open.String()
		if o.Open.Requests == 0 { // the schedule drawn for the duration says how many
			what += fmt.Sprintf(" (%s)", plural.Of(o.Concurrency[0], "request"))
		}
	}
	return fmt.Sprintf("agentsim bench: %s × %d output tokens, ~%d-token prompts, against %s, speedup %g",
		what, o.MaxTokens, o.PromptTokens, o.Target, o.Clock.Speedup())
}

// benchExit maps a finished benchmark to its exit: 130 interrupted, 3 when a request failed.
func benchExit(rep *bench.Report) error {
	switch {
	case rep.Interrupted:
		return &ExitError{Code: ExitInterrupted}
	case !rep.AllOK():
		return &ExitError{Code: ExitVerdict}
	}
	return nil
}

// benchOptions checks the request shape s (and, for bench, benchOnly's --timeout and --sweep),
// reporting every bad value at once with the problems found in the environment, each naming
// the flag, its value and what is allowed.
func benchOptions(c *cobra.Command, problems []workloads.Problem, s requestShape, benchOnly *benchConfig) (bench.Options, error) {
	var bad []error
	for _, p := range problems {
		bad = append(bad, errors.New(p.String()))
	}
	o := bench.Options{
		Concurrency:    []int{atLeastOne("concurrency", s.Concurrency, &bad)},
		MaxTokens:      maxTokens(s.MaxTokens, &bad),
		PromptTokens:   atLeastOne("prompt-tokens", s.PromptTokens, &bad),
		SampleInterval: duration("sample-interval", s.SampleInterval, false, &bad),
		Timeout:        bench.DefaultTimeout,
	}
	if benchOnly != nil {
		o.Timeout = duration("timeout", benchOnly.Timeout, true, &bad)
		if sw := strings.TrimSpace(benchOnly.Sweep); sw != "" {
			if c.Flags().Changed("concurrency") {
				bad = append(bad, errors.New("--sweep replaces --concurrency: give one of them"))
			}
			o.Concurrency, o.Sweep = parseSweep(sw, &bad), true
		}
		o.Open = openLoop(c, benchOnly.Open, &bad)
	}
	if len(bad) > 0 {
		return o, usageError(errors.Join(bad...))
	}
	return o, nil
}

// atLeastOne checks a whole-number flag that must be ≥ 1.
func atLeastOne(name string, n int, bad *[]error) int {
	if n < 1 {
		*bad = append(*bad, fmt.Errorf("--%s %d is not allowed: want a whole number ≥ 1", name, n))
	}
	return n
}

// maxTokens checks --max-tokens: 1 to bench.MaxMaxTokens. Beyond that no server returns the
// output asked for (context lengths stop well short of it) and the rates would be measured over
// requests that cannot complete.
func maxTokens(n int, bad *[]error) int {
	if n < 1 || n > bench.MaxMaxTokens {
		*bad = append(*bad, fmt.Errorf("--max-tokens %d is not allowed: want a whole number from 1 to %d", n, bench.MaxMaxTokens))
	}
	return n
}

// concurrencyFlag names the flag that set the largest concurrency of o, for messages.
func concurrencyFlag(o bench.Options) string {
	if o.Sweep {
		return "--sweep"
	}
	return "--concurrency"
}

// maxOf is the largest of xs (0 for none).
func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// duration checks a duration flag that must be > 0 (or ≥ 0 with zeroOK).
func duration(name string, d time.Duration, zeroOK bool, bad *[]error) time.Duration {
	if d < 0 || (d == 0 && !zeroOK) {
		want := "a duration > 0, e.g. 750ms"
		if zeroOK {
			want = "a duration ≥ 0 (0: no limit)"
		}
		*bad = append(*bad, fmt.Errorf("--%s %s is not allowed: want %s", name, d, want))
	}
	return d
}

// parseSweep parses --sweep: comma-separated whole numbers ≥ 1.
func parseSweep(s string, bad *[]error) []int {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			*bad = append(*bad, fmt.Errorf("--sweep %q: %q is not allowed: want comma-separated whole numbers ≥ 1, e.g. 1,16,64,96", s, strings.TrimSpace(part)))
			continue
		}
		out = append(out, n)
	}
	return out
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}

// openLoop checks the open-loop flags and returns their test, nil without --rate. --rate
// replaces --concurrency and --sweep; --duration and --requests bound it, and mean nothing
// without it.
func openLoop(c *cobra.Command, f openFlags, bad *[]error) *bench.OpenLoop {
	changed := c.Flags().Changed
	if !changed("rate") {
		for _, name := range []string{"arrivals", "duration", "requests"} {
			if changed(name) {
				*bad = append(*bad, fmt.Errorf("--%s applies to an open-loop test: give --rate too", name))
			}
		}
		return nil
	}
	for _, name := range []string{"concurrency", "sweep"} {
		if changed(name) {
			*bad = append(*bad, fmt.Errorf("--rate replaces --%s: give one of them", name))
		}
	}
	l := &bench.OpenLoop{Rate: f.Rate, Arrivals: bench.Arrivals(f.Arrivals), Duration: f.Duration, Requests: f.Requests}
	if !(l.Rate >= bench.MinRate && l.Rate <= bench.MaxRate) {
		*bad = append(*bad, fmt.Errorf("--rate %g is not allowed: want requests per second from %g to %g", l.Rate, bench.MinRate, bench.MaxRate))
	}
	if !slices.Contains(bench.ArrivalKinds, l.Arrivals) {
		*bad = append(*bad, fmt.Errorf("--arrivals %q is not allowed: want %s or %s", f.Arrivals, bench.Poisson, bench.Constant))
	}
	if changed("duration") {
		duration("duration", l.Duration, false, bad)
	}
	if changed("requests") && (l.Requests < 1 || l.Requests > bench.MaxOpenRequests) {
		*bad = append(*bad, fmt.Errorf("--requests %d is not allowed: want a whole number from 1 to %d", l.Requests, bench.MaxOpenRequests))
	}
	switch {
	case !changed("duration") && !changed("requests"):
		*bad = append(*bad, errors.New("--rate needs --duration or --requests to end the test: give one or both"))
	case len(*bad) == 0 && l.Validate() != nil:
		*bad = append(*bad, fmt.Errorf("--rate %g × --duration %s sends %.0f requests: want at most %d (a lower --rate, a shorter --duration, or --requests)",
			l.Rate, l.Duration, l.Rate*l.Duration.Seconds(), bench.MaxOpenRequests))
	}
	return l
}
