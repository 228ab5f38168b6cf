package cli

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/internal/bench"
	"github.com/agentsim/agentsim/internal/cli/console"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// compareCmd is `agentsim compare`: bench and run against the same server, side by side.
type compareCmd struct {
	env      []string       // the process environment, as Execute read it
	settings *pflag.FlagSet // the flags bound to v
	v        *viper.Viper
	over     overrides
	target   targetConfig // the server's settings, once run has read them
	metrics  *harness.MetricsEndpoint
}

// compareConfig is compare's settings, decoded once from its flags and the environment.
type compareConfig struct {
	Workload workloadConfig `mapstructure:",squash"`
	Shape    requestShape   `mapstructure:",squash"`
	Target   targetConfig   `mapstructure:",squash"`
	Force    bool           `mapstructure:"force"`
	Metrics  string         `mapstructure:"metrics-addr"`
	Fit      fitConfig      `mapstructure:",squash"`
}

func (k *compareCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "compare",
		Short: "Run the synthetic bench, then an agentic workload, against the same server, side by side",
		Long: `Run the decisive batching test (as agentsim bench: --concurrency requests of --max-tokens
output tokens with ~--prompt-tokens prompts), then a workload (as agentsim run, default ocbrowse),
against the same server — one embedded simulator for both parts, or --server — and print them
side by side with one conclusion line. A short synthetic benchmark can pass while the agentic
workload, with its long and growing contexts, wedges: compare shows both at once.

The run directory holds synthetic/ and agentic/ with each part's files, and a results.json with
both parts (parts.synthetic, parts.agentic) and the conclusion.

Exit codes: 0 both parts healthy (the agentic one may be slow), 1 runtime failure, 2 usage or
configuration error, 3 the agentic verdict is neither healthy nor slow or a synthetic request
failed, 130 interrupted.`,
		Args: cobra.NoArgs,
		RunE: k.run,
	}
	f := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	addWorkloadFlags(f, "ocbrowse")
	addBenchFlags(f)
	addServerFlags(f)
	addForceFlag(f)
	addMetricsFlag(f)
	addFitFlag(f)
	c.Flags().AddFlagSet(f)
	k.over.addFlags(c.Flags())
	k.settings, k.v = f, newViper(f)
	return c
}

func (k *compareCmd) run(c *cobra.Command, _ []string) error {
	var cfg compareConfig
	problems, env := loadSettings(k.settings, k.v, k.env, &cfg)
	w, err := loadWorkload(problems, cfg.Workload.Name, cfg.Workload.Config, env, &k.over)
	if err != nil {
		return err
	}
	o, err := benchOptions(c, nil, cfg.Shape, nil)
	if err != nil {
		return err
	}
	if err := ensureOpenFiles(openFileLimit, "--concurrency", o.Concurrency[0], cfg.Target.Server != ""); err != nil {
		return err
	}
	if err := ensureOpenFiles(openFileLimit, "agents", w.Agents, cfg.Target.Server != ""); err != nil {
		return err
	}
	st, err := openSite(c, k.env, cfg.Workload.Out, cfg.Force, "compare", cfg.Metrics, cfg.Target)
	if err != nil {
		return err
	}
	defer st.close()
	dir, discard, t := st.dir, st.discard, st.target
	k.metrics = st.metrics
	k.target = cfg.Target
	// Both parts send what one preparation settled: the model, the clock, the agentic
	// workload fitted to the server's window.
	ho := harness.Options{Command: "run", Workload: w, Dir: filepath.Join(dir, rundir.Agentic), Metrics: k.metrics,
		PinModel: modelPinned(&k.over, env), FitContext: cfg.Fit.FitContext}
	p, err := t.prepare(c, &ho)
	if err != nil {
		discard() // nothing ran
		return err
	}
	out := c.OutOrStdout()
	start, wallFrom := t.clock.Now(), t.clock.WallNow()
	fmt.Fprintf(out, "agentsim compare: synthetic bench, then %s, against %s, speedup %g\n",
		w.Name, t.info, t.clock.Speedup())
	top := &results.Results{Command: "compare", Workload: w.Name, Server: t.info.Server(), Speedup: t.clock.Speedup(),
		Parts: map[string]*results.Results{}}
	if p.Model.Note != "" {
		fmt.Fprintln(out, p.Model.Note)
	}
	syn, err := k.synthetic(c, t, o, w, p, filepath.Join(dir, rundir.Synthetic))
	if err != nil {
		return harnessError(err)
	}
	top.Parts[rundir.Synthetic] = syn
	var ag *results.Results
	if !syn.Interrupted && c.Context().Err() == nil {
		if ag, err = k.agentic(c, w, ho); err != nil {
			return harnessError(err)
		}
		top.Parts[rundir.Agentic] = ag
	}
	top.SimSeconds, top.WallSeconds = t.clock.Since(start).Seconds(), t.clock.WallNow().Sub(wallFrom).Seconds()
	conclude(top, syn, ag)
	printComparison(out, top, syn, ag, dir)
	if err := results.Write(dir, top); err != nil {
		return runtimeError(err)
	}
	return verdictExit(top)
}

// synthetic runs the bench part with the model p chose and the workload's seed.
func (k *compareCmd) synthetic(c *cobra.Command, t *target, o bench.Options, w *workloads.Workload, p *harness.Prepared, dir string) (*results.Results, error) {
	out := c.OutOrStdout()
	fmt.Fprintf(out, "\n── synthetic: %d requests at once × %d output tokens, ~%d-token prompts ──\n", o.Concurrency[0], o.MaxTokens, o.PromptTokens)
	o.Target, o.Clock, o.HTTPClient, o.Out, o.Dir = t.info, t.clock, t.client, out, dir
	o.Seed, o.Served, o.Choice, o.Metrics = w.Seed, p.Served, &p.Model, k.metrics
	rep, err := bench.Run(c.Context(), o)
	if err != nil {
		return nil, err
	}
	return rep.Results(), nil
}

// agentic runs the workload part as ho was prepared, saying its notes on the context window
// first, and prints its summary.
func (k *compareCmd) agentic(c *cobra.Command, w *workloads.Workload, ho harness.Options) (*results.Results, error) {
	out := c.OutOrStdout()
	fmt.Fprintf(out, "\n── agentic: %s, %s × %s ──\n", w.Name, plural.Of(w.Agents, "agent"), plural.Of(w.Rounds, "round"))
	say(out, ho.Prepared.Notes) // the model's was said before both parts
	ho.Observer = runConsole(out, ho.Clock)
	res, err := harness.Run(c.Context(), ho)
	if err != nil {
		return nil, err
	}
	console.PrintSummary(out, res, ho.Dir)
	return res, nil
}

// conclude sets the comparison's conclusion, verdict and interruption from its parts. The
// verdict is the agentic part's unless that one is fine and the synthetic part is not.
func conclude(top, syn, ag *results.Results) {
	var failed bench.RoundSpan
	if ag != nil {
		failed = bench.RoundSpan{Lo: ag.Rounds.FirstFailed, Hi: ag.Rounds.LastFailed}
	}
	top.Conclusion = bench.Conclusion(syn, ag, failed)
	top.Interrupted = syn.Interrupted || (ag != nil && ag.Interrupted)
	top.Verdict = syn.Verdict
	if ag != nil && (syn.Verdict.Kind == results.Healthy || !ag.Verdict.Kind.Progressing()) {
		top.Verdict = ag.Verdict
	}
	top.Verdict.Summary = top.Conclusion
	top.Verdict.Evidence = []string{"synthetic: " + syn.Verdict.Summary}
	if ag != nil {
		top.Verdict.Evidence = append(top.Verdict.Evidence, "agentic: "+ag.Verdict.Summary)
	}
}

// printComparison prints the side-by-side table and the conclusion.
func printComparison(out io.Writer, top, syn, ag *results.Results, dir string) {
	fmt.Fprintln(out, "\n── side by side ──")
	bench.PrintSideBySide(out, syn, ag)
	fmt.Fprintf(out, "conclusion: %s\n", top.Conclusion)
	fmt.Fprintf(out, "files: %s\n", filepath.Join(dir, "{"+rundir.Results+", "+rundir.Synthetic+"/, "+rundir.Agentic+"/}"))
}
