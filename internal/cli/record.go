package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/internal/record"
	"github.com/agentsim/agentsim/internal/redact"
	"github.com/agentsim/agentsim/workloads"
)

// recordCmd is `agentsim record`: the recording proxy between a real harness and its server.
type recordCmd struct {
	env      []string       // the process environment, as Execute read it
	settings *pflag.FlagSet // the flags bound to v
	v        *viper.Viper
	// listening, when set, is told the proxy's address once it listens (tests).
	listening func(addr string)
	// probe, when set, asks the upstream for its clock (tests); nil is http.DefaultClient.
	probe *http.Client
}

// recordConfig is record's settings, decoded once from its flags and the environment.
type recordConfig struct {
	Upstream       string        `mapstructure:"upstream"`
	Listen         string        `mapstructure:"listen"`
	Out            string        `mapstructure:"out"`
	KeepContent    bool          `mapstructure:"keep-content"`
	InjectUsage    bool          `mapstructure:"inject-usage"`
	MaxBody        int64         `mapstructure:"max-body"`
	Watch          bool          `mapstructure:"watch"`
	MetricsURL     string        `mapstructure:"metrics-url"`
	APIKey         string        `mapstructure:"api-key"`
	StallAfter     time.Duration `mapstructure:"stall-after"`
	HangAfter      time.Duration `mapstructure:"hang-after"`
	SlowAfter      time.Duration `mapstructure:"slow-after"`
	SampleInterval time.Duration `mapstructure:"sample-interval"`
}

func (r *recordCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "record --upstream URL --out trace.jsonl",
		Short: "Record a real harness's traffic as a trace, through a transparent proxy",
		Long: `Listen on --listen as an OpenAI-compatible server and forward every request to --upstream
unchanged, passing each byte of the answer back as it arrives (streams are never buffered).
Point the harness's base URL at the proxy (http://127.0.0.1:PORT/v1). Every chat or legacy
completion and every Responses API request (POST /v1/responses, as Codex CLI sends) is
written to --out (agentsim.trace/v1, docs/trace.md) when it ends, with the API it went
through, flushed line by line, so Ctrl-C or a kill loses only the requests in flight.

Sessions come from an X-Session-ID, X-Agent-ID or session-id header, else a Responses
request's prompt_cache_key, else the request's user field, else its previous_response_id,
else the conversation itself: a request whose messages (or input items) begin with an earlier
request's and its reply continues that session. Messages are hashed, never stored, unless --keep-content (then
their text goes to a .content.jsonl file beside the trace). Token counts come from the
server's usage; streams carry it only when the harness asks (stream_options.include_usage) or
--inject-usage asks for it — which changes the harness's traffic — else they are estimated and
marked tokens_estimated.

--watch judges the harness live, as run judges its agents: events.jsonl, samples.jsonl,
config.yaml and record.json are written beside the trace (agentsim diagnose DIR works on the
directory), and a line is printed whenever the verdict changes: slow, its open streams all
silent, or the harness itself stopped sending. --metrics-url adds the server's gauges; a
server started with an API key (llama-server --api-key) needs --api-key for its /metrics, sent
only when --metrics-url is on --upstream's scheme, host and port.

Exit codes: 0 stopped by Ctrl-C, 1 the proxy could not listen or write, 2 bad flags.`,
		Args: cobra.NoArgs,
		RunE: r.run,
	}
	f := pflag.NewFlagSet("record", pflag.ContinueOnError)
	f.String("upstream", "", "the server's base URL, e.g. http://10.0.0.5:30000 (required)")
	f.String("listen", "127.0.0.1:30001", "address the proxy listens on (host:port; port 0 picks a free one)")
	f.String("out", "", "the trace file to write, e.g. trace.jsonl (required; must not exist)")
	f.Bool("keep-content", false, "also write the messages' and replies' text, to <out>.content.jsonl")
	f.Bool("inject-usage", false, "ask the server for a stream's usage when the harness did not (changes the harness's traffic)")
	f.Int64("max-body", record.DefaultMaxBody, "largest request body parsed, in bytes; larger ones pass through unparsed")
	f.Bool("watch", false, "judge the harness live and write events.jsonl and samples.jsonl beside the trace")
	f.String("metrics-url", "", "with --watch: the server's Prometheus /metrics URL, for its gauges")
	f.String("api-key", "", "with --watch: bearer token for --metrics-url when it is on --upstream's host (or AGENTSIM_API_KEY); never printed or written")
	f.Duration("stall-after", workloads.DefaultStallAfter, "with --watch: silence after which streams or the harness count as stalled")
	f.Duration("hang-after", workloads.DefaultHangAfter, "with --watch: time without progress after which the harness counts as hung")
	f.Duration("slow-after", workloads.DefaultSlowAfter, "with --watch: mean request latency from which the harness counts as slow")
	f.Duration("sample-interval", workloads.DefaultSampleInterval, "with --watch: time between two samples")
	c.Flags().AddFlagSet(f)
	r.settings, r.v = f, newViper(f)
	return c
}

func (r *recordCmd) run(c *cobra.Command, _ []string) error {
	var cfg recordConfig
	problems, _ := loadSettings(r.settings, r.v, r.env, &cfg)
	if err := configError(problems); err != nil {
		return err
	}
	up, err := r.check(&cfg)
	if err != nil {
		return err
	}
	out, content, err := createTrace(cfg.Out, cfg.KeepContent)
	if err != nil {
		return runtimeError(err)
	}
	defer out.Close()
	if content != nil {
		defer content.Close()
	}
	clk := clock.Real()
	if cfg.Watch { // judging the harness on the server's clock, when it is an agentsim server
		probe := r.probe
		if probe == nil {
			probe = http.DefaultClient
		}
		if clk, err = awaitServerClock(c, probe, strings.TrimSuffix(strings.TrimRight(cfg.Upstream, "/"), "/v1"), cfg.APIKey); err != nil {
			return err
		}
	}
	// The proxy logs from every request's goroutine; the command's stderr may be any writer.
	errOut := &lockedWriter{w: c.ErrOrStderr()}
	opts := record.Options{Upstream: up, Trace: out, InjectUsage: cfg.InjectUsage, MaxBody: cfg.MaxBody,
		Clock: clk, Log: errOut}
	if content != nil {
		opts.Content = content
	}
	var w *record.Watcher
	if cfg.Watch {
		w, err = record.NewWatcher(record.WatchOptions{Dir: filepath.Dir(cfg.Out), Upstream: redact.URL(cfg.Upstream),
			TraceFile: filepath.Base(cfg.Out), MetricsURL: cfg.MetricsURL, APIKey: cfg.APIKey, Clock: clk, Out: c.OutOrStdout(),
			Watchdog:       workloads.Watchdog{StallAfter: cfg.StallAfter, HangAfter: cfg.HangAfter, SlowAfter: cfg.SlowAfter},
			SampleInterval: cfg.SampleInterval})
		if errors.Is(err, record.ErrDirHoldsRun) {
			return runtimeError(fmt.Errorf("record --watch: %w; choose an empty directory for --out", err))
		}
		if err != nil {
			return runtimeError(fmt.Errorf("record --watch: %w", err))
		}
		opts.Observer = w
	}
	p, err := record.New(opts)
	if err != nil {
		return usageError(err)
	}
	ln, err := listen("--listen", cfg.Listen)
	if err != nil {
		return err
	}
	return r.serve(c, errOut, p, w, ln, &cfg)
}

// serve proxies on ln until the command's context ends (Ctrl-C), then stops the proxy and
// says what was recorded on errOut, the proxy's log.
func (r *recordCmd) serve(c *cobra.Command, errOut io.Writer, p *record.Proxy, w *record.Watcher, ln net.Listener, cfg *recordConfig) error {
	addr := ln.Addr().String()
	fmt.Fprintf(errOut, "recording: http://%s → %s; trace %s (Ctrl-C to stop)\n", addr, redact.URL(cfg.Upstream), cfg.Out)
	if r.listening != nil {
		r.listening(addr)
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	ctx, stop := context.WithCancel(c.Context())
	defer stop()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if w != nil {
			w.Run(ctx, p)
		}
	}()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	stop()
	_ = srv.Close() // ends the streams in flight: they are recorded as cancelled
	if serveErr == nil {
		<-served
	}
	<-watched
	err := p.Close()
	fmt.Fprintf(errOut, "recorded %s to %s\n", plural.Of(p.Recorded(), "request"), cfg.Out)
	if w != nil {
		v := w.Verdict(p.Now())
		fmt.Fprintf(c.OutOrStdout(), "verdict: %s — %s\n", v.Kind, v.Summary)
		for _, e := range v.Evidence {
			fmt.Fprintf(c.OutOrStdout(), "  %s\n", e)
		}
		err = errors.Join(err, w.Close())
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(fmt.Errorf("record: serve: %w", serveErr), err)
	}
	if err != nil {
		return runtimeError(err)
	}
	return nil
}

// check validates the settings and returns the upstream URL.
func (r *recordCmd) check(cfg *recordConfig) (*url.URL, error) {
	var errs []string
	up, err := url.Parse(cfg.Upstream)
	switch {
	case cfg.Upstream == "":
		errs = append(errs, "--upstream is required: the server's base URL, e.g. --upstream http://127.0.0.1:30000")
	case err != nil || up.Host == "" || (up.Scheme != "http" && up.Scheme != "https"):
		errs = append(errs, fmt.Sprintf("--upstream %q: want an http or https URL with a host, e.g. http://127.0.0.1:30000", redact.URL(cfg.Upstream)))
	}
	if cfg.Out == "" {
		errs = append(errs, "--out is required: the trace file to write, e.g. --out trace.jsonl")
	}
	if cfg.MaxBody <= 0 {
		errs = append(errs, fmt.Sprintf("--max-body %d: want a number of bytes ≥ 1", cfg.MaxBody))
	}
	if !cfg.Watch && cfg.MetricsURL != "" {
		errs = append(errs, "--metrics-url is read only with --watch")
	}
	if cfg.Watch && cfg.HangAfter <= cfg.StallAfter {
		errs = append(errs, fmt.Sprintf("--hang-after %s: must be longer than --stall-after (%s)", cfg.HangAfter, cfg.StallAfter))
	}
	if cfg.Watch && (cfg.StallAfter <= 0 || cfg.SlowAfter <= 0 || cfg.SampleInterval <= 0) {
		errs = append(errs, "--stall-after, --slow-after and --sample-interval must be > 0")
	}
	if len(errs) > 0 {
		return nil, usageError(errors.New(strings.Join(errs, "; ")))
	}
	return up, nil
}

// createTrace creates the trace file, refusing to overwrite one, and the content file when
// asked: <out without .jsonl>.content.jsonl.
func createTrace(out string, keep bool) (*os.File, *os.File, error) {
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, nil, fmt.Errorf("record: %s exists; a recording never overwrites a trace: remove it or choose another --out", out)
		}
		return nil, nil, fmt.Errorf("record: %w", err)
	}
	if !keep {
		return f, nil, nil
	}
	name := strings.TrimSuffix(out, ".jsonl") + ".content.jsonl"
	cf, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("record: --keep-content: %w", err)
	}
	return f, cf, nil
}
