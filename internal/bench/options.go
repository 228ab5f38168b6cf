// Package bench is agentsim's decisive batching test: N concurrent streaming chat completions
// with a short prompt and a forced output length (max_tokens with ignore_eos, as benchmark
// clients send them), while the server's /metrics gauges are sampled. Each test is a workload of
// N agents × 1 round run by the harness, so its events, samples and results come from the same
// recorder, sampler and results.Builder as any run; bench adds its own reports over them: the
// sampled time series in the incident's shape, one RESULT line per concurrency and, over several
// concurrencies, the throughput curve that shows whether decode batching scales. Every time it
// reports is simulated time, read from one *clock.Clock.
package bench

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/workloads"
)

// Defaults for Options, as the command line offers them.
const (
	DefaultConcurrency    = 16
	DefaultMaxTokens      = 128
	DefaultPromptTokens   = 200
	DefaultSampleInterval = workloads.DefaultSampleInterval
	DefaultTimeout        = 5 * time.Minute
	// MaxMaxTokens is the largest output length a request may ask for, in tokens: beyond
	// the longest context windows served.
	MaxMaxTokens = 1_000_000
)

// Options configures a benchmark against one server.
type Options struct {
	// Target is the server and how to reach it (requests go to Target.URL/v1/…).
	Target harness.Target
	// Model is the model name sent; "" takes the first model the server lists on /v1/models.
	// A model named here that the server does not list is a *harness.ModelError.
	Model string
	// Served is the server's answer to GET /v1/models when the caller has it already; nil:
	// Prepare asks.
	Served *harness.Served
	// Choice is the model the caller has already chosen, with the Served it chose from (by
	// Prepare, or compare's harness.Prepare for both its parts), overriding Model; nil: Run
	// prepares.
	Choice *harness.ModelChoice
	// Concurrency lists the concurrencies to run, one test each, in order; each test sends
	// that many requests at once. One element is the plain test.
	Concurrency []int
	// Sweep prints the throughput curve instead of each test's sample lines.
	Sweep bool
	// Open, when set, makes the run one open-loop test: requests sent at Open's rate,
	// whatever the server does with the earlier ones, instead of Concurrency at once; Run
	// sets Concurrency to the number of requests its schedule sends.
	Open *OpenLoop
	// MaxTokens is the output length of every request, in tokens, forced with ignore_eos.
	MaxTokens int
	// PromptTokens is the prompt length requested, in words of workloads.Text (one token each
	// on the simulator; the server-counted length is reported beside it).
	PromptTokens int
	// SampleInterval is the simulated time between two samples of the server's gauges.
	SampleInterval time.Duration
	// Timeout bounds each request in simulated time (0: none); a request that takes longer
	// fails.
	Timeout time.Duration
	// Seed makes the prompts; prompts differ per request and per test of a sweep, so the
	// server's prefix cache does not shorten their prefill.
	Seed int64
	// Clock is the single source of time; nil only for Prepare, which makes it.
	Clock *clock.Clock
	// HTTPClient carries requests and scrapes (nil: a client sized for the concurrency).
	HTTPClient *http.Client
	// Out receives the metrics line, the sample lines, the RESULT lines and the curve (nil:
	// nothing is printed).
	Out io.Writer
	// Dir is the run directory: a test's events.jsonl, samples.jsonl and config.yaml as it
	// runs (for a sweep, in one subdirectory per test, n<concurrency>), and results.json at
	// the end.
	Dir string
	// Metrics, when set, serves each test's harness metrics while it runs.
	Metrics *harness.MetricsEndpoint

	schedule []time.Duration // an open-loop test's send times (settle)
}

// settle derives what the options imply: an open-loop test's schedule, drawn from Seed, and
// its number of requests as the one concurrency. Invalid open-loop settings are left for
// Validate.
func (o *Options) settle() {
	if o.Open != nil && o.Open.Validate() == nil && o.schedule == nil {
		o.schedule = o.Open.Schedule(o.Seed)
		o.Concurrency = []int{len(o.schedule)}
	}
}

// Validate reports every option out of range at once, each naming the option, its value and
// what is allowed.
func (o *Options) Validate() error {
	var bad []error
	if len(o.Concurrency) == 0 {
		bad = append(bad, errors.New("concurrency: none given: want at least one whole number ≥ 1"))
	}
	for _, c := range o.Concurrency {
		if c < 1 {
			bad = append(bad, fmt.Errorf("concurrency %d is not allowed: want a whole number ≥ 1", c))
		}
	}
	if o.MaxTokens < 1 || o.MaxTokens > MaxMaxTokens {
		bad = append(bad, fmt.Errorf("max tokens %d is not allowed: want a whole number from 1 to %d", o.MaxTokens, MaxMaxTokens))
	}
	if o.PromptTokens < 1 {
		bad = append(bad, fmt.Errorf("prompt tokens %d is not allowed: want a whole number ≥ 1", o.PromptTokens))
	}
	if o.SampleInterval <= 0 {
		bad = append(bad, fmt.Errorf("sample interval %s is not allowed: want a duration > 0, e.g. 750ms", o.SampleInterval))
	}
	if o.Timeout < 0 {
		bad = append(bad, fmt.Errorf("timeout %s is not allowed: want a duration ≥ 0 (0: none)", o.Timeout))
	}
	if o.Open != nil {
		if err := o.Open.Validate(); err != nil {
			bad = append(bad, err)
		}
		if o.Sweep {
			bad = append(bad, errors.New("an open-loop test is one test: it cannot be a sweep"))
		}
	}
	if o.Clock == nil {
		bad = append(bad, errors.New("clock: none given"))
	}
	if o.Target.URL == "" {
		bad = append(bad, errors.New("server URL: none given"))
	}
	if o.Dir == "" {
		bad = append(bad, errors.New("run directory: none given"))
	}
	return errors.Join(bad...)
}

// maxConcurrency is the largest concurrency of the run.
func (o *Options) maxConcurrency() int {
	m := 0
	for _, c := range o.Concurrency {
		m = max(m, c)
	}
	return m
}
