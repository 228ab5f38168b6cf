package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/cli/console"
	"github.com/agentsim/agentsim/internal/fakeserver"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// fakeRun is one run of the harness against a fakeserver.Server.
type fakeRun struct {
	res *results.Results
	err error
	dir string
	out string // what the run printed: the notes before it and the summary
	evs []events.Event
}

// runFake runs workload, with the overrides ("key=value"), against the server at url through
// hc, with the clock clk, after edit has adjusted the options: prepared as a command prepares
// it, its notes said before the run and its summary after.
func runFake(t *testing.T, url string, hc *http.Client, clk *clock.Clock, workload string, overrides []string, edit func(*Options)) fakeRun {
	t.Helper()
	var over []workloads.Override
	for _, kv := range overrides {
		k, v, _ := strings.Cut(kv, "=")
		over = append(over, workloads.Override{Key: k, Value: v, Source: "--set"})
	}
	w, err := workloads.Load(workloads.LoadOptions{Workload: workload, Overrides: over})
	require.NoError(t, err)
	var out bytes.Buffer
	dir := filepath.Join(t.TempDir(), "run")
	o := Options{Command: "run", Workload: w, Clock: clk, Dir: dir, Observer: console.NewObserver(&out, clk, false, false), HTTPClient: hc,
		Target: Target{URL: url, Kind: results.External}}
	if edit != nil {
		edit(&o)
	}
	r := fakeRun{dir: dir}
	if o.Prepared, r.err = Prepare(context.Background(), o); r.err == nil {
		for _, n := range o.Prepared.Said() { // as a console says them, before the run
			fmt.Fprintln(&out, n)
		}
		r.res, r.err = Run(context.Background(), o)
	}
	if r.res != nil {
		console.PrintSummary(&out, r.res, dir)
		r.evs, err = events.ReadFile[events.Event](filepath.Join(dir, "events.jsonl"))
		require.NoError(t, err)
	}
	r.out = out.String()
	return r
}

// quick is smoke made quick on a real clock: one round per agent, no pauses.
var quick = []string{"rounds=1", "start_jitter=0s", "tool_time=0s", "think_time=0s"}

// TestRunSendsTheModelTheServerServes: a vLLM-shaped server that serves some other model
// answers 404 to the workload's model; the run asks /v1/models, sends the one model the server
// serves, says so before the run, and records it (an event and results.json's server).
func TestRunSendsTheModelTheServerServes(t *testing.T) {
	f := &fakeserver.Server{Models: []string{"some/model"}, Tokens: 16}
	ts := f.Start(t)
	r := runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, nil)
	require.NoError(t, r.err)
	assert.Equal(t, r.res.Requests.Sent, r.res.Requests.OK, "every request served: %+v", r.res.Requests)
	assert.Equal(t, results.Healthy, r.res.Verdict.Kind, "%+v", r.res.Verdict)
	assert.Equal(t, "some/model", r.res.Server.Model)
	assert.Equal(t, "server", r.res.Server.ModelSource)
	const note = "model: the server does not serve the workload's model deepseek-v4-flash; it serves one model, some/model: sending that (choose with --model)"
	assert.True(t, strings.HasPrefix(r.out, note+"\n"), "said before the run:\n%s", r.out)
	assert.Contains(t, r.res.Warnings, note)
	assert.Contains(t, r.out, "model         some/model (from the server)")
	recorded := false
	for _, e := range r.evs {
		recorded = recorded || (e.Kind == events.Warning && e.Message == note)
	}
	assert.True(t, recorded, "the choice is an event of events.jsonl")
	onDisk, err := results.Read(r.dir)
	require.NoError(t, err)
	assert.Equal(t, "some/model", onDisk.Server.Model)
	cfg, err := os.ReadFile(filepath.Join(r.dir, "config.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(cfg), "model: some/model")
}

// TestRunRefusesAnAmbiguousModel: the workload's model is not served and the server serves
// several, or the user named a model the server does not serve: the run does not start, and
// the error lists what the server serves.
func TestRunRefusesAnAmbiguousModel(t *testing.T) {
	for _, c := range []struct {
		name   string
		models []string
		pinned bool
		want   string
	}{
		// Two served, neither the workload's: which one is for the user to say.
		{"several served", []string{"a/one", "b/two"}, false,
			`model "deepseek-v4-flash" is not served by URL; it serves 2 models: a/one, b/two — choose one with the workload key model`},
		// The user named deepseek-v4-flash (--model): never silently replaced.
		{"named by the user", []string{"a/one"}, true,
			`model "deepseek-v4-flash" is not served by URL; it serves 1 model: a/one — choose one with the workload key model`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeserver.Server{Models: c.models, Tokens: 4}
			ts := f.Start(t)
			r := runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, func(o *Options) { o.PinModel = c.pinned })
			var me *ModelError
			require.True(t, errors.As(r.err, &me), "Run = %v; want a *ModelError", r.err)
			assert.Equal(t, strings.ReplaceAll(c.want, "URL", ts.URL), r.err.Error())
			assert.NoDirExists(t, r.dir, "nothing ran")
		})
	}
}

// TestServerWordsReachTheUser: a server that lists no model and answers 404 to the name sent;
// the summary, the verdict and results.json quote its words, not only "http_status 404".
func TestServerWordsReachTheUser(t *testing.T) {
	f := &fakeserver.Server{Models: []string{"other"}, Unlisted: true, Tokens: 4} // lists nothing, yet refuses any other name
	ts := f.Start(t)
	r := runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, nil)
	require.NoError(t, r.err)
	const words = "The model `deepseek-v4-flash` does not exist."
	require.Len(t, r.res.Failures, 1, "%+v", r.res.Failures)
	fl := r.res.Failures[0]
	assert.Equal(t, results.Failure{Class: "http_status", Status: 404, Count: r.res.Requests.Sent, FirstMessage: words, FirstS: fl.FirstS}, fl)
	assert.Equal(t, results.Errors, r.res.Verdict.Kind)
	assert.Regexp(t, "first http_status 404 at t=[0-9.]+ m?s: \""+regexp.QuoteMeta(words)+"\"", strings.Join(r.res.Verdict.Evidence, "\n"))
	assert.Contains(t, r.out, "failures      4 http_status 404, first at t=")
	assert.Contains(t, r.out, words)
	for _, e := range r.evs {
		if e.Kind == events.Error {
			assert.Equal(t, words, e.Message, "the terminal event records the server's words")
		}
	}
}

// TestContextWindowFromModels: a server whose max_model_len (512) is below the workload's
// requests is named before the run, with the offer of --fit-context; with it, the workload's
// context keys are scaled to fit and every request succeeds.
func TestContextWindowFromModels(t *testing.T) {
	f := &fakeserver.Server{Models: []string{"deepseek-v4-flash"}, MaxModelLen: 512, Window: 512, Tokens: 8}
	ts := f.Start(t)

	r := runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, nil)
	require.NoError(t, r.err)
	first, _, _ := strings.Cut(r.out, "\n")
	assert.Equal(t, "context: the server's context window is 512 tokens (max_model_len), below what the workload asks: "+
		"prompts up to ~1400 tokens (system 200 + initial 600 + 1 round × ≤ 600 read + 0 × ≤ 128 output) plus max_tokens 128 = 1528; "+
		"requests past 512 tokens will be refused — --fit-context scales the workload's context keys to fit", first)
	assert.Equal(t, 512, r.res.Server.ContextWindow)
	assert.Equal(t, r.res.Requests.Sent, r.res.Requests.Errors, "the server refuses every request: %+v", r.res.Requests)

	r = runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, func(o *Options) { o.FitContext = FitToServer })
	require.NoError(t, r.err)
	first, _, _ = strings.Cut(r.out, "\n")
	assert.Equal(t, "context: fitted to the server's window of 512 tokens (90% of it planned, ×0.301): "+
		"context.system_tokens 200→60, context.initial_tokens 600→180, context.read_tokens {dist: uniform, min: 200, max: 600}→{dist: uniform, min: 60, max: 180}, "+
		"context.max_context_tokens 8192→460, request.output_tokens {dist: uniform, min: 64, max: 128}→{dist: uniform, min: 19, max: 38}, request.max_tokens 256→77", first)
	assert.Equal(t, r.res.Requests.Sent, r.res.Requests.OK, "fitted, every request fits: %+v %+v", r.res.Requests, r.res.Failures)
	assert.Equal(t, results.Healthy, r.res.Verdict.Kind)
	cfg, err := os.ReadFile(filepath.Join(r.dir, "config.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(cfg), "system_tokens: 60", "config.yaml records the fitted workload")
}

// TestContextWindowFromARefusal: a server that lists no max_model_len refuses requests past its
// window with vLLM's 400; the run quotes it and offers --fit-context with the window it named.
func TestContextWindowFromARefusal(t *testing.T) {
	f := &fakeserver.Server{Models: []string{"deepseek-v4-flash"}, Window: 512, Tokens: 8}
	ts := f.Start(t)
	r := runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, nil)
	require.NoError(t, r.err)
	require.NotEmpty(t, r.res.Failures)
	assert.Contains(t, r.res.Failures[0].FirstMessage, "This model's maximum context length is 512 tokens. However, you requested")
	warn := strings.Join(r.res.Warnings, "\n")
	assert.Contains(t, warn, "context: 4 requests refused for their length (http_status 400: \"This model's maximum context length is 512 tokens.")
	assert.Contains(t, warn, "— rerun with --fit-context=512 to scale the workload's context keys to fit")
	assert.Contains(t, r.out, "rerun with --fit-context=512")

	r = runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, func(o *Options) { o.FitContext = 512 })
	require.NoError(t, r.err)
	assert.Equal(t, r.res.Requests.Sent, r.res.Requests.OK, "%+v %+v", r.res.Requests, r.res.Failures)
}

// TestOutputLengthsThatMissTheWorkload: a real model decides its own length unless
// force_output_length is set; outputs far from the workload's distribution are warned about
// with both figures.
func TestOutputLengthsThatMissTheWorkload(t *testing.T) {
	f := &fakeserver.Server{Models: []string{"deepseek-v4-flash"}, Tokens: 240}
	ts := f.Start(t)
	r := runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", append([]string{"request.force_output_length=false"}, quick...), nil)
	require.NoError(t, r.err)
	assert.Contains(t, r.res.Warnings,
		"output lengths: completed requests averaged 240 output tokens (n=4, reasoning included) against the workload's request.output_tokens {dist: uniform, min: 64, max: 128} (64–128 tokens): "+
			"the model decides its own length unless request.force_output_length is set, and later rounds' contexts grow by what it writes")

	r = runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", append([]string{"request.reasoning_effort=none"}, quick...), nil)
	require.NoError(t, r.err)
	assert.Empty(t, r.res.Warnings, "forced lengths match the workload")
}

// TestReasoningAskedButNoneCame: a server that streams content only (llama.cpp with a model
// that does not reason accepts any reasoning_effort) gets a warning when the workload asks for
// reasoning, none when it does not; the simulator, which reasons, gets none either.
func TestReasoningAskedButNoneCame(t *testing.T) {
	f := &fakeserver.Server{Models: []string{"deepseek-v4-flash"}}
	ts := f.Start(t)
	r := runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, nil)
	require.NoError(t, r.err)
	assert.Equal(t, []string{"reasoning: the workload asks for reasoning_effort low, but none of the 4 completed requests streamed any reasoning and the server counted no reasoning tokens: " +
		"the server ignores reasoning_effort or its model does not reason, so the run lacks the reasoning phases the workload models"}, r.res.Warnings)
	assert.Zero(t, r.res.Requests.Reasoned)

	r = runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", append([]string{"request.reasoning_effort=none"}, quick...), nil)
	require.NoError(t, r.err)
	assert.Empty(t, r.res.Warnings)

	synctest.Test(t, func(t *testing.T) {
		res, _ := runSim(t, t.Context(), simCase{workload: "smoke", speedup: 20, overrides: map[string]string{"rounds": "1"}})
		assert.Equal(t, res.Requests.OK, res.Requests.Reasoned, "every request reasoned")
		for _, w := range res.Warnings {
			assert.NotContains(t, w, "reasoning:")
		}
	})
}

// TestGaugesAreEvidence: vLLM's generation counter bumped only when a request ends reads ~0
// between spikes as a rate; the run's output rate stays the harness's own, and the gauge is
// flagged as contradicting it. The discovery line names the rate-based gauge found from the
// first scrape on.
func TestGaugesAreEvidence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeserver.Server{Models: []string{"deepseek-v4-flash"}, Tokens: 400, ITL: 25 * time.Millisecond, Metrics: fakeserver.VLLM}
		_, hc := f.StartInMemory(t)
		clk, err := clock.New(1)
		require.NoError(t, err)
		var lines []string
		r := runFake(t, "http://fake", hc, clk, "smoke", []string{"start_jitter=0s", "request.force_output_length=false",
			"request.output_tokens={dist: uniform, min: 300, max: 500}", "request.max_tokens=1000"}, func(o *Options) {
			o.Sampled = func(_ events.Sample, metrics string) { lines = append(lines, metrics) }
		})
		require.NoError(t, r.err)
		require.NotEmpty(t, lines)
		assert.Contains(t, lines[0], "gen_tok_s ← rate(vllm:generation_tokens_total)", "found at the first scrape")
		assert.NotContains(t, lines[0], "not found: kv_usage, gen_tok_s")
		own := r.res.Tokens.OutputPerSecond
		assert.InDelta(t, 4*400*2/r.res.SimSeconds, own, 1, "the harness's own rate")
		warn := strings.Join(r.res.Warnings, "\n")
		assert.Contains(t, warn, "server gauge gen_tok_s (rate(vllm:generation_tokens_total)) contradicts the harness: median 0 tok/s, 0–")
		assert.Contains(t, warn, "the run's rate is the harness's (tokens.output_per_second), the gauge is evidence only")
	})
}

// TestFrozenMetricsAreSaid: a server that freezes stops answering /metrics and streaming; the
// verdict says /metrics timed out, how often and for how long, and dates the gauges' last
// reading rather than carrying it forward as "= 4 for 60 s".
func TestFrozenMetricsAreSaid(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeserver.Server{Models: []string{"deepseek-v4-flash"}, Tokens: 100000, ITL: 50 * time.Millisecond, Metrics: fakeserver.VLLM}
		_, hc := f.StartInMemory(t)
		clk, err := clock.New(1)
		require.NoError(t, err)
		freeze := time.AfterFunc(10*time.Second, f.Freeze)
		defer freeze.Stop()
		r := runFake(t, "http://fake", hc, clk, "smoke", []string{"start_jitter=0s", "request.max_tokens=100000",
			"request.output_tokens=100000", "context.max_context_tokens=200000"}, nil)
		require.NoError(t, r.err)
		ev := strings.Join(r.res.Verdict.Evidence, "\n")
		assert.Regexp(t, `server /metrics timed out \d+ times in the last \d+ s: its gauges are unknown since t=1\d s \(last read at t=[\d.]+ s: decode_running = 4, queued = 0\)`, ev)
		assert.NotRegexp(t, `decode_running = 4 for`, ev)
	})
}

// TestContextRefusedAfterAFit: a run fitted to the server's window whose requests are refused
// for their length all the same does not offer the same --fit-context again: the server's
// tokenizer counts more than the harness estimated (here 3 tokens a word), and the warning
// gives both counts, their ratio and the window that allows for it, with which the run fits.
func TestContextRefusedAfterAFit(t *testing.T) {
	f := &fakeserver.Server{Models: []string{"deepseek-v4-flash"}, Window: 512, Tokens: 8, TokensPerWord: 3}
	ts := f.Start(t)
	r := runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, func(o *Options) { o.FitContext = 512 })
	require.NoError(t, r.err)
	require.Equal(t, r.res.Requests.Sent, r.res.Requests.Errors, "%+v", r.res.Requests)
	warn := strings.Join(r.res.Warnings, "\n")
	assert.NotContains(t, warn, "rerun with --fit-context=512")
	m := regexp.MustCompile(`although the workload was fitted to a window of 512 tokens: the server counted (\d+) prompt tokens where the harness estimated (\d+) \(×([0-9.]+)\): ` +
		`its tokenizer counts more tokens per word of agentsim's text than the harness assumes, and the harness learns the server's count only from requests that succeed \(none succeeded\) — ` +
		`rerun with --fit-context=(\d+) \(the window ÷ ([0-9.]+)\) to plan for the server's count`).FindStringSubmatch(warn)
	require.NotNil(t, m, warn)
	counted, _ := strconv.Atoi(m[1])
	est, _ := strconv.Atoi(m[2])
	window, _ := strconv.Atoi(m[4])
	assert.Greater(t, counted, 2*est, "3 tokens a word, less the harness's framing")
	assert.Equal(t, int(512*float64(est)/float64(counted)), window, "the window ÷ the ratio")
	planned, refused := map[string]int{}, ""
	for _, e := range r.evs {
		if e.Kind == events.RequestSent {
			planned[e.Request] = e.ContextTokens
		}
		if e.Kind == events.Error && refused == "" {
			refused = e.Request
		}
	}
	assert.Equal(t, planned[refused], est, "the estimate of the first request refused, %s", refused)

	r = runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", quick, func(o *Options) { o.FitContext = window })
	require.NoError(t, r.err)
	assert.Equal(t, r.res.Requests.Sent, r.res.Requests.OK, "fitted to the window offered, every request fits: %+v %+v", r.res.Requests, r.res.Failures)
}
