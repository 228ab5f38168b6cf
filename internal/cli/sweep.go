package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/internal/procs"
	"github.com/agentsim/agentsim/internal/sweep"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// sweepCmd is `agentsim sweep`: a workload over a grid of workload keys, simulator faults and
// seeds, one run per completion index, then one table.
type sweepCmd struct {
	env      []string // the process environment, as Execute read it
	args     []string // the command line, without the program name
	settings *pflag.FlagSet
	v        *viper.Viper
	over     overrides
}

// sweepProcess returns how a local sweep starts agentsim for its per-index commands: the
// executable, the arguments before "sweep cell", and the environment. Tests point it at the
// test binary.
var sweepProcess = func() (exe string, args, env []string, err error) {
	exe, err = os.Executable()
	if err != nil {
		return "", nil, nil, fmt.Errorf("find the agentsim executable for the runs: %w", err)
	}
	return exe, nil, os.Environ(), nil
}

// sweepConfig is sweep's settings, decoded once from its flags and the environment.
type sweepConfig struct {
	Workload workloadConfig `mapstructure:",squash"`
	Target   targetConfig   `mapstructure:",squash"`
	Fit      fitConfig      `mapstructure:",squash"`
	Grid     []string       `mapstructure:"grid"`
	Seeds    string         `mapstructure:"seeds"`
	Parallel int            `mapstructure:"parallel"`
	Expect   []string       `mapstructure:"expect"`
	Emit     string         `mapstructure:"emit"`
	K8s      k8sConfig      `mapstructure:",squash"`
}

// k8sConfig is the settings of the Kubernetes Job --emit k8s writes.
type k8sConfig struct {
	Image  string `mapstructure:"image"`
	Claim  string `mapstructure:"k8s-claim"`
	Mount  string `mapstructure:"k8s-mount"`
	Sub    string `mapstructure:"k8s-subpath"`
	Secret string `mapstructure:"k8s-api-key-secret"`
}

func (s *sweepCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "sweep [flags] [-- CMD ARGS…]",
		Short: "Run a workload over a grid of designs × faults × seeds and tabulate the verdicts",
		Long: `Run a workload once per cell of a grid and per seed, each run as agentsim run makes it, in its
own directory under the sweep's, then print one table: per cell, the verdicts across seeds,
goodput (rounds completed per simulated hour), e2e p50 / p99, pacer wait p99 and the time to
the first stall, all in simulated time. The table is also written as summary.txt, summary.csv
and summary.json beside the plan, sweep.json, and summary.html shows it under a heatmap of the
verdicts per cell.

  agentsim sweep --grid pacer.kind=slots,aimd,gradient --sim-fault none,long-context-wedge \
      --seeds 1-3 --speedup 300

--grid key=v1,v2 (repeatable) takes any workload key; --sim-fault lists one fault value per
cell (faults one cell runs together joined with +: slow-decode+drop); --seeds gives each run
its workload seed and, unless --sim-seed is given, the simulator's. Every other flag of run
applies to every run. Invalid grids are reported all at once before anything runs.

Each run executes as its own process, agentsim sweep cell --plan DIR/sweep.json --index N, the
command a Kubernetes pod runs: --parallel N runs N at once (default: one per core, halved, and
the run made again, whenever a run's harness lag shows the machine was too busy to keep
time). Ctrl-C interrupts the runs in flight, keeps the finished ones and says which did not
run; the same command with the same --out resumes. --emit k8s writes the plan and a
Kubernetes Indexed Job (job.yaml) instead of running; agentsim sweep collect DIR builds the
table from the run directories wherever they ran.

With a command after --, every run is agentsim exec … -- CMD ARGS… instead of agentsim run:
N copies of a real harness (--agents) as the agents, with the same grid, faults, seeds and
--set, --config and server flags. exec has no --workload or --fit-context; the sweep refuses
them.

  agentsim sweep --sim-fault none,long-context-wedge --speedup 20 --agents 4 -- node harness.mjs

Exit codes: 0 done (and every cell within --expect), 1 a run failed, 2 usage or configuration
error, 3 a cell fell outside --expect, 130 interrupted.`,
		Args: func(c *cobra.Command, args []string) error {
			if at := c.ArgsLenAtDash(); (at < 0 && len(args) > 0) || at > 0 {
				return usageError(fmt.Errorf("sweep takes no arguments before --, got %q: give the grid with --grid key=v1,v2, and a harness command for exec cells after --", args))
			}
			if c.ArgsLenAtDash() == 0 && len(args) == 0 {
				return usageError(errors.New("sweep: -- is followed by no command: want the harness command of exec cells, e.g. -- node harness.mjs"))
			}
			return nil
		},
		RunE: s.run,
	}
	f := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	addWorkloadFlags(f, "ocbrowse")
	f.Lookup("out").Usage = "sweep directory (default sweeps/<UTC time>-<workload>); an existing sweep's directory resumes it"
	addServerFlags(f)
	f.Lookup("sim-fault").Usage = "embedded simulator: fault values, one cell each (none, long-context-wedge, slow-decode+drop)"
	f.Lookup("sim-fault-param").Usage = "embedded simulator: fault parameter name.key=value, for the cells running that fault"
	addFitFlag(f)
	f.StringArray("grid", nil, "grid dimension key=v1,v2,… over any workload key (repeatable)")
	f.String("seeds", "", "seeds: 1-5, 1,3,7 (default: the workload's seed)")
	f.Int("parallel", 0, "runs at once (default 0: one per core, lowered when the harness lag shows distortion)")
	f.StringSlice("expect", nil, "verdicts every run of every cell must have, e.g. healthy,slow: exit 3 otherwise")
	f.String("emit", "", "k8s: write the plan and a Kubernetes Indexed Job (job.yaml) instead of running")
	f.String("image", "agentsim:latest", "--emit k8s: the agentsim image every pod runs")
	f.String("k8s-claim", "agentsim-sweeps", "--emit k8s: PersistentVolumeClaim holding the sweep directory")
	f.String("k8s-mount", "/sweep", "--emit k8s: where the pods mount the sweep directory")
	f.String("k8s-subpath", "", "--emit k8s: the sweep directory within the volume (default: its root)")
	f.String("k8s-api-key-secret", "", "--emit k8s: Secret whose key api-key the pods get as AGENTSIM_API_KEY")
	c.Flags().AddFlagSet(f)
	s.over.addFlags(c.Flags())
	s.settings, s.v = f, newViper(f)
	c.AddCommand((&sweepCellCmd{env: s.env}).command(), (&sweepCollectCmd{env: s.env}).command())
	return c
}

// sweepSpec is a checked sweep: its plan and how to run it.
type sweepSpec struct {
	plan   *sweep.Plan
	inputs map[string]string // copy under the sweep directory → the file given
	expect []results.VerdictKind
	cfg    sweepConfig
}

func (s *sweepCmd) run(c *cobra.Command, args []string) error {
	var harness []string // the command after --: exec cells
	if len(args) > 0 {
		harness = args
	}
	spec, err := s.check(c, harness)
	if err != nil {
		return err
	}
	if c.Context().Err() != nil {
		return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted before the sweep started")}
	}
	dir, err := s.sweepDir(spec)
	if err != nil {
		return err
	}
	if spec.cfg.Emit == "k8s" {
		return s.emit(c, spec, dir)
	}
	return s.runLocal(c, spec, dir)
}

// check reads every setting and returns the sweep's plan, or every problem at once. harness
// is the command of exec cells, nil for run cells.
func (s *sweepCmd) check(c *cobra.Command, harness []string) (*sweepSpec, error) {
	var cfg sweepConfig
	problems, env := loadSettings(s.settings, s.v, s.env, &cfg)
	problems = slices.Concat(problems, s.over.problems)
	t := cfg.Target
	t.SimFaults, t.SimFaultParams = nil, nil // the fault axis is checked as such below
	problems = append(problems, unreported(t.check(c.Flags()), problems)...)
	problems = append(problems, s.checkSettings(c, cfg)...)
	if harness != nil {
		problems = append(problems, s.checkExec(c, harness, cfg.Emit == "")...)
	}
	grid, ps := parseGrid(cfg.Grid)
	problems = append(problems, ps...)
	faults, ps := parseSweepFaults(cfg.Target.SimFaults)
	problems = append(problems, ps...)
	if len(ps) == 0 && cfg.Target.Server == "" {
		problems = append(problems, checkSweepFaults(faults, cfg.Target.SimFaultParams)...)
	}
	expect, ps := parseExpect(cfg.Expect)
	problems = append(problems, ps...)
	base := workloads.LoadOptions{Workload: cfg.Workload.Name, ConfigFile: cfg.Workload.Config, ConfigSource: configSource(cfg.Workload.Config),
		Env: env, Overrides: s.over.list}
	if harness != nil {
		base.Workload, base.Base = "exec", []byte(execBase) // as exec loads it
	}
	w, err := workloads.Load(base)
	var ce *workloads.ConfigError
	seeds, ps := s.seeds(cfg, w)
	problems = append(problems, ps...)
	// The size comes from the axes' lengths: a grid past the cap is never built, nor its
	// cells checked.
	tooBig := sweep.Count(grid, faults, seeds) > sweep.MaxRuns
	if tooBig {
		problems = append(problems, workloads.Problem{Message: fmt.Sprintf("the sweep has %s runs: want at most %d (fewer grid values, faults or seeds)",
			runCount(grid, faults, seeds), sweep.MaxRuns)})
	}
	switch {
	case errors.As(err, &ce):
		problems = append(problems, ce.Problems...)
	case err != nil:
		problems = append(problems, workloads.Problem{Message: err.Error()})
	case !tooBig:
		problems = append(problems, checkGrid(base, grid)...)
	}
	if err := configError(problems); err != nil {
		return nil, err
	}
	spec := &sweepSpec{expect: expect, cfg: cfg, inputs: map[string]string{}}
	b := s.base(c, cfg, w, env, spec.inputs)
	if harness != nil {
		b.Exec, b.Workload = harness, ""
	}
	spec.plan = sweep.NewPlan(commandLine(s.args), b, grid, faults, seeds)
	return spec, nil
}

// runCount writes the product of the axes' lengths, "4 × 3 × 1000000 = 12000000" (as a
// float past int64, which the product of lengths never exceeds in practice).
func runCount(grid []sweep.Dimension, faults []string, seeds []int64) string {
	parts := []string{}
	n := float64(len(faults) * len(seeds))
	for _, d := range grid {
		parts = append(parts, strconv.Itoa(len(d.Values)))
		n *= float64(len(d.Values))
	}
	parts = append(parts, plural.Of(len(faults), "fault"), plural.Of(len(seeds), "seed"))
	return fmt.Sprintf("%.0f (%s)", n, strings.Join(parts, " × "))
}

// checkSettings returns the problems of the sweep's own settings and of run's settings that a
// plan cannot carry.
func (s *sweepCmd) checkSettings(c *cobra.Command, cfg sweepConfig) []workloads.Problem {
	var problems []workloads.Problem
	add := func(key, msg string) { problems = append(problems, workloads.Problem{Key: key, Message: msg}) }
	if cfg.Parallel < 0 {
		add("parallel", fmt.Sprintf("--parallel: %d is not allowed: want a number of runs ≥ 1, or 0 for one per core", cfg.Parallel))
	}
	if cfg.Emit != "" && cfg.Emit != "k8s" {
		add("emit", fmt.Sprintf("--emit: %q is not allowed: want k8s", cfg.Emit))
	}
	if cfg.Target.Server != "" {
		for _, name := range simFlags {
			if c.Flags().Changed(name) {
				add(name, fmt.Sprintf("--%s configures the embedded simulator and cannot be used with --server", name))
			}
		}
	}
	urls := map[string][]string{"server": {cfg.Target.Server}, "metrics-url": cfg.Target.MetricsURLs}
	for _, name := range []string{"server", "metrics-url"} {
		for _, u := range urls[name] {
			if pu, err := url.Parse(u); err == nil && pu.User != nil {
				add(name, fmt.Sprintf("--%s %s: credentials in a URL would be written to the sweep plan: give the key with AGENTSIM_API_KEY instead", name, shownURL(u)))
			}
		}
	}
	if cfg.Emit == "k8s" && cfg.K8s.Image == "" {
		add("image", "--image: empty: want the agentsim image the pods run")
	}
	return problems
}

// checkExec returns the problems of exec cells: the settings of run that exec has not
// (--workload, --fit-context), given on the command line or in the environment, and, for a
// sweep run here (local), a harness program that is not found. A pod finds it in its image.
func (s *sweepCmd) checkExec(c *cobra.Command, harness []string, local bool) []workloads.Problem {
	var problems []workloads.Problem
	for _, name := range []string{"workload", "fit-context"} {
		if c.Flags().Changed(name) || slices.ContainsFunc(s.env, func(kv string) bool { return strings.HasPrefix(kv, workloads.EnvName(name)+"=") }) {
			problems = append(problems, workloads.Problem{Key: name, Message: fmt.Sprintf(
				"%s: exec cells (a command after --) run agentsim exec, which has no --%s: drop it, or drop the command to sweep agentsim run",
				settingSource(c.Flags(), name), name)})
		}
	}
	if err := (procs.Spec{Command: harness, Agents: 1}).Validate(); err != nil && local {
		problems = append(problems, workloads.Problem{Message: "the harness command after --: " + err.Error()})
	}
	return problems
}

// seeds returns the sweep's seeds: --seeds, or the workload's own seed.
func (s *sweepCmd) seeds(cfg sweepConfig, w *workloads.Workload) ([]int64, []workloads.Problem) {
	if cfg.Seeds == "" {
		if w == nil {
			return nil, nil
		}
		return []int64{w.Seed}, nil
	}
	if slices.ContainsFunc(s.over.list, func(o workloads.Override) bool { return strings.EqualFold(o.Key, "seed") }) {
		return nil, []workloads.Problem{{Key: "seeds", Message: "--seeds and --seed (or --set seed=…) both give the seed: want one of them"}}
	}
	seeds, err := parseSeeds(cfg.Seeds)
	if err != nil {
		return nil, []workloads.Problem{{Key: "seeds", Message: err.Error()}}
	}
	return seeds, nil
}

// parseExpect parses --expect into verdict kinds.
func parseExpect(list []string) ([]results.VerdictKind, []workloads.Problem) {
	var kinds []results.VerdictKind
	var problems []workloads.Problem
	for _, k := range list {
		kind := results.VerdictKind(strings.TrimSpace(k))
		if !slices.Contains(results.VerdictKinds, kind) {
			names := make([]string, len(results.VerdictKinds))
			for i, d := range results.VerdictKinds {
				names[i] = string(d)
			}
			problems = append(problems, workloads.Problem{Key: "expect",
				Message: fmt.Sprintf("--expect: %q is not allowed: want verdicts among %s", k, strings.Join(names, ", "))})
			continue
		}
		kinds = append(kinds, kind)
	}
	return kinds, problems
}

// base resolves the run settings every run shares. Files the workload chain reads are copied
// into the sweep directory (inputs records which), so that a run reads the same file
// wherever it executes.
func (s *sweepCmd) base(c *cobra.Command, cfg sweepConfig, w *workloads.Workload, env []string, inputs map[string]string) sweep.Base {
	b := sweep.Base{Workload: cfg.Workload.Name, Name: w.Name, Env: env, Server: cfg.Target.Server,
		MetricsURLs: cfg.Target.MetricsURLs, FitContext: cfg.Fit.FitContext}
	if b.Workload == "" {
		b.Workload = workloads.DefaultWorkload
	}
	if _, builtin := workloads.Builtin(b.Workload); !builtin {
		b.Workload = sweep.InputsDir + "/workload" + filepath.Ext(cfg.Workload.Name)
		inputs[b.Workload] = cfg.Workload.Name
	}
	if cfg.Workload.Config != "" {
		b.Config = sweep.InputsDir + "/config" + filepath.Ext(cfg.Workload.Config)
		inputs[b.Config] = cfg.Workload.Config
	}
	for _, o := range s.over.list {
		b.Set = append(b.Set, sweep.Set{Key: o.Key, Value: o.Value})
	}
	if b.Embedded() {
		sim := cfg.Target.sim()
		b.SimProfile, b.Speedup, b.SpeedupMax, b.FaultParams = cfg.Target.SimProfile, sim.Speedup, sim.SpeedupMax, cfg.Target.SimFaultParams
		if c.Flags().Changed("sim-seed") || slices.ContainsFunc(s.env, func(kv string) bool {
			return strings.HasPrefix(kv, workloads.EnvName("sim-seed")+"=")
		}) {
			seed := cfg.Target.SimSeed
			b.SimSeed = &seed
		}
	}
	return b
}

// sweepDir creates the sweep directory, or takes the existing one of the same plan to resume
// it, and writes the plan and its input files there.
func (s *sweepCmd) sweepDir(spec *sweepSpec) (string, error) {
	out := spec.cfg.Workload.Out
	if out == "" {
		dir, err := createDefaultRunDir(filepath.Join("sweeps", time.Now().UTC().Format("20060102T150405Z")+"-"+spec.plan.Base.Name))
		if err != nil {
			return "", err
		}
		return dir, writePlan(dir, spec)
	}
	old, _, err := sweep.ReadPlan(out)
	switch {
	case err == nil:
		if !old.Same(spec.plan) {
			return "", usageError(fmt.Errorf("--out %s holds a sweep planned otherwise (%s): to resume it, give the same grid, seeds and flags; for a new sweep, name a new directory", out, old.Command))
		}
		if err := sameInputs(out, spec.inputs); err != nil {
			return "", err
		}
		spec.plan.Command = old.Command
		return out, nil
	case !errors.Is(err, fs.ErrNotExist) && fileExists(filepath.Join(out, sweep.PlanFile)):
		return "", usageError(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", runtimeError(fmt.Errorf("create sweep directory: %w", err))
	}
	if empty, err := isEmptyDir(out); err != nil || !empty {
		return "", usageError(fmt.Errorf("--out %s is not empty and holds no sweep: want a new or empty directory, or a sweep's to resume it", out))
	}
	return out, writePlan(out, spec)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// writePlan writes the plan and copies its input files into dir.
func writePlan(dir string, spec *sweepSpec) error {
	for _, sub := range []string{sweep.RunsDir, sweep.LogsDir, sweep.InputsDir} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return runtimeError(fmt.Errorf("create sweep directory: %w", err))
		}
	}
	for copyPath, from := range spec.inputs {
		data, err := workloads.ReadFile(from)
		if err != nil {
			return runtimeError(fmt.Errorf("copy %s into the sweep: %w", from, err))
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(copyPath)), data, 0o644); err != nil {
			return runtimeError(fmt.Errorf("copy %s into the sweep: %w", from, err))
		}
	}
	if err := spec.plan.Write(dir); err != nil {
		return runtimeError(err)
	}
	return nil
}

// sameInputs refuses to resume a sweep whose workload or --config file changed since it was
// planned: its finished runs read the old one.
func sameInputs(dir string, inputs map[string]string) error {
	for copyPath, from := range inputs {
		now, err1 := workloads.ReadFile(from)
		then, err2 := os.ReadFile(filepath.Join(dir, filepath.FromSlash(copyPath)))
		if err1 != nil || err2 != nil || !bytes.Equal(now, then) {
			return usageError(fmt.Errorf("%s changed since the sweep in %s was planned: its finished runs read the old one; for a new sweep, name a new directory", from, dir))
		}
	}
	return nil
}

// emit writes the Kubernetes Job beside the plan and says how to run and collect it.
func (s *sweepCmd) emit(c *cobra.Command, spec *sweepSpec, dir string) error {
	k := spec.cfg.K8s
	parallel := spec.cfg.Parallel
	if parallel == 0 {
		parallel = len(spec.plan.Runs)
	}
	job := sweep.Job(spec.plan, sweep.JobOptions{Name: sweep.JobName(dir), Image: k.Image, Claim: k.Claim,
		MountPath: k.Mount, SubPath: k.Sub, Parallelism: parallel, APIKeySecret: k.Secret})
	data, err := sweep.JobYAML(job)
	if err != nil {
		return runtimeError(err)
	}
	path := filepath.Join(dir, sweep.JobFile)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return runtimeError(fmt.Errorf("write %s: %w", sweep.JobFile, err))
	}
	fmt.Fprintf(c.OutOrStdout(), `agentsim sweep: %d runs planned in %s; Kubernetes Indexed Job written to %s
  1. put %s on the volume of PersistentVolumeClaim %s%s
  2. kubectl apply -f %s
  3. when the Job completes, bring the directory back and: agentsim sweep collect %s
`, len(spec.plan.Runs), dir, path, dir, k.Claim, subpathNote(k.Sub), path, dir)
	return nil
}

func subpathNote(sub string) string {
	if sub == "" {
		return " (its root)"
	}
	return " at " + sub
}

// runLocal runs the plan's unfinished runs here, then writes and prints the table.
func (s *sweepCmd) runLocal(c *cobra.Command, spec *sweepSpec, dir string) error {
	out := c.OutOrStdout()
	var pending []int
	for _, r := range spec.plan.Runs {
		if !sweep.Done(dir, r) {
			pending = append(pending, r.Index)
		}
	}
	parallel, auto := spec.cfg.Parallel, spec.cfg.Parallel == 0
	if auto {
		parallel = runtime.NumCPU()
	}
	fmt.Fprintf(out, "agentsim sweep: %s (%s × %s) in %s; %d to run, %d at once%s\n",
		plural.Of(len(spec.plan.Runs), "run"), plural.Of(len(spec.plan.Runs)/len(spec.plan.Seeds), "cell"), plural.Of(len(spec.plan.Seeds), "seed"),
		dir, len(pending), parallel, autoNote(auto))
	exe, exeArgs, env, err := sweepProcess()
	if err != nil {
		return runtimeError(err)
	}
	l := &sweep.Local{Plan: spec.plan, Dir: dir, Exe: exe, Args: exeArgs, Env: s.childEnv(env), Parallel: parallel, Auto: auto, Out: out}
	o := l.Run(c.Context(), pending)
	_, sum, err := sweep.Collect(dir)
	if err != nil {
		return runtimeError(err)
	}
	return s.report(c, sum, dir, spec.expect, o)
}

func autoNote(auto bool) string {
	if !auto {
		return ""
	}
	return " (one per core; halved whenever a run's harness lag shows the machine could not keep time)"
}

// childEnv is the per-index commands' environment: env with the --api-key flag's value as
// AGENTSIM_API_KEY (a key never goes on a command line or into the plan).
func (s *sweepCmd) childEnv(env []string) []string {
	if f := s.settings.Lookup("api-key"); f != nil && f.Changed {
		env = append(slices.Clone(env), workloads.EnvName("api-key")+"="+f.Value.String())
	}
	return env
}

// report writes the table files, prints the table and attaches the sweep's exit code.
func (s *sweepCmd) report(c *cobra.Command, sum *sweep.Summary, dir string, expect []results.VerdictKind, o *sweep.Outcome) error {
	out := c.OutOrStdout()
	var outside []string
	if len(expect) > 0 {
		outside = sum.Expect(expect)
	}
	if err := sweep.WriteFiles(dir, sum); err != nil {
		return runtimeError(err)
	}
	fmt.Fprintln(out)
	if err := sweep.WriteTable(out, sum); err != nil {
		return runtimeError(err)
	}
	fmt.Fprintf(out, "files: %s/{%s, %s, %s, %s}\n", dir, sweep.TableFile, sweep.CSVFile, sweep.JSONFile, sweep.HTMLFile)
	if o != nil && o.Lowered {
		fmt.Fprintf(out, "note: the harness lag lowered the runs at once to %d on this machine\n", o.Parallel)
	}
	switch {
	case c.Context().Err() != nil:
		fmt.Fprintf(c.ErrOrStderr(), "agentsim: sweep interrupted: %d runs did not finish; to resume: %s\n", len(sum.NotRun), resumeCommand(s.args, dir))
		return &ExitError{Code: ExitInterrupted}
	case o != nil && len(o.Failed) > 0:
		return runtimeError(fmt.Errorf("%d runs failed (their logs are in %s)", len(o.Failed), filepath.Join(dir, sweep.LogsDir)))
	case len(outside) > 0:
		fmt.Fprintf(out, "outside --expect %s:\n  %s\n", joinKinds(expect), strings.Join(outside, "\n  "))
		return &ExitError{Code: ExitVerdict}
	}
	return nil
}

func joinKinds(kinds []results.VerdictKind) string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ",")
}

// resumeCommand is the sweep's command line with --out naming dir, before the harness
// command of exec cells.
func resumeCommand(args []string, dir string) string {
	flags := args
	if at := slices.Index(args, "--"); at >= 0 {
		flags = args[:at]
	}
	for _, a := range flags {
		if a == "--out" || strings.HasPrefix(a, "--out=") {
			return commandLine(args)
		}
	}
	return commandLine(slices.Concat(flags, []string{"--out", dir}, args[len(flags):]))
}
