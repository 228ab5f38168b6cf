package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/internal/bench"
)

// starter starts the server a command talks to; commands use startTarget, tests an in-memory
// simulator.
type starter func(*cobra.Command, *viper.Viper) (*target, error)

// benchCmd is `agentsim bench`: the decisive batching test.
type benchCmd struct {
	v     *viper.Viper
	start starter // nil: startTarget
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

Times are simulated seconds; a request's latency runs from send to its last byte. --sweep runs
the test at each concurrency and prints the throughput curve: the aggregate output rate while
at least 90% of the peak number of streams were decoding at once, and the per-request rate.

Exit codes: 0 every request completed, 1 server unreachable or runtime failure, 2 bad flags,
3 any request failed, 130 interrupted.`,
		Args: cobra.NoArgs,
		RunE: b.run,
	}
	f := c.Flags()
	addBenchFlags(f)
	f.String("sweep", "", "run the test at each of these concurrencies and print the throughput curve, e.g. 1,16,64,96")
	f.Duration("timeout", bench.DefaultTimeout, "a request still running after this simulated time fails (0: no limit)")
	f.String("model", "", "model name to send (default: the first model the server lists on /v1/models)")
	f.Int64("seed", 1, "seed for the prompt text")
	f.String("out", "", "run directory (default runs/<UTC time>-bench)")
	addServerFlags(f)
	b.v = newViper(f)
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
	o, err := benchOptions(c, b.v, true)
	if err != nil {
		return err
	}
	t, err := startWith(b.start, c, b.v)
	if err != nil {
		return err
	}
	defer t.stop()
	dir := runDir(b.v, "bench")
	out := c.OutOrStdout()
	o.Server, o.Clock, o.HTTPClient, o.Out, o.Dir = t.info, t.clock, t.client, out, dir
	o.APIKey, o.MetricsURLs, o.Model = b.v.GetString("api-key"), b.v.GetStringSlice("metrics-url"), b.v.GetString("model")
	o.Seed = b.v.GetInt64("seed")
	fmt.Fprintln(out, benchHeader(o))
	rep, err := bench.Run(c.Context(), o)
	if err != nil {
		return runtimeError(err)
	}
	fmt.Fprintf(out, "  files    %s\n", filepath.Join(dir, bench.Files(o)))
	return benchExit(rep)
}

// startWith starts the target with s, or with startTarget when s is nil.
func startWith(s starter, c *cobra.Command, v *viper.Viper) (*target, error) {
	if s == nil {
		s = startTarget
	}
	return s(c, v)
}

// benchHeader says in one line what is about to run, against what.
func benchHeader(o bench.Options) string {
	what := fmt.Sprintf("%d requests at once", o.Concurrency[0])
	if o.Sweep {
		what = "sweep over " + joinInts(o.Concurrency) + " requests at once"
	}
	return fmt.Sprintf("agentsim bench: %s × %d output tokens, ~%d-token prompts, against %s, speedup %g",
		what, o.MaxTokens, o.PromptTokens, o.Server, o.Clock.Speedup())
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

// benchOptions reads and checks the request-shape flags (and, with benchOnly, --timeout and
// --sweep), reporting every bad value at once, each naming the flag, its value and what is
// allowed.
func benchOptions(c *cobra.Command, v *viper.Viper, benchOnly bool) (bench.Options, error) {
	var bad []error
	o := bench.Options{
		Concurrency:    []int{atLeastOne(v, "concurrency", &bad)},
		MaxTokens:      atLeastOne(v, "max-tokens", &bad),
		PromptTokens:   atLeastOne(v, "prompt-tokens", &bad),
		SampleInterval: duration(v, "sample-interval", false, &bad),
		Timeout:        bench.DefaultTimeout,
	}
	if benchOnly {
		o.Timeout = duration(v, "timeout", true, &bad)
		if s := strings.TrimSpace(v.GetString("sweep")); s != "" {
			if c.Flags().Changed("concurrency") {
				bad = append(bad, errors.New("--sweep replaces --concurrency: give one of them"))
			}
			o.Concurrency, o.Sweep = parseSweep(s, &bad), true
		}
	}
	if len(bad) > 0 {
		return o, usageError(errors.Join(bad...))
	}
	return o, nil
}

// atLeastOne reads a whole-number flag that must be ≥ 1.
func atLeastOne(v *viper.Viper, name string, bad *[]error) int {
	s := v.GetString(name)
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		*bad = append(*bad, fmt.Errorf("--%s %s is not allowed: want a whole number ≥ 1", name, s))
	}
	return n
}

// duration reads a duration flag that must be > 0 (or ≥ 0 with zeroOK).
func duration(v *viper.Viper, name string, zeroOK bool, bad *[]error) time.Duration {
	s := v.GetString(name)
	d, err := time.ParseDuration(strings.TrimSpace(s))
	switch {
	case err != nil:
		*bad = append(*bad, fmt.Errorf("--%s %q is not a duration: want a number with a unit, e.g. 750ms or 2s", name, s))
	case d < 0 || (d == 0 && !zeroOK):
		want := "a duration > 0, e.g. 750ms"
		if zeroOK {
			want = "a duration ≥ 0 (0: no limit)"
		}
		*bad = append(*bad, fmt.Errorf("--%s %s is not allowed: want %s", name, s, want))
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
