package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/internal/tracefit"
	"github.com/agentsim/agentsim/internal/traceimport"
	"github.com/agentsim/agentsim/internal/tracestats"
	"github.com/agentsim/agentsim/trace"
)

// newTraceCmd is `agentsim trace`: import other formats into agentsim.trace/v1, and show a
// trace's shape. env is the process environment, as Execute read it.
func newTraceCmd(env []string) *cobra.Command {
	c := &cobra.Command{
		Use:   "trace",
		Short: "Import real workloads as traces (agentsim.trace/v1), show their shape, fit a workload to them",
		Long: `A trace is a recorded or imported workload: one request a line, with its session, send time,
think time, token counts, context growth and, where known, its outcome. See docs/trace.md.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError(fmt.Errorf("unknown trace command %q: want import, show or fit", args[0]))
			}
			return c.Help()
		},
	}
	c.AddCommand((&traceImportCmd{env: env}).command(), (&traceShowCmd{env: env}).command(), (&traceFitCmd{env: env}).command())
	return c
}

// traceImportCmd is `agentsim trace import --from KIND FILE`.
type traceImportCmd struct {
	env      []string       // the process environment, as Execute read it
	settings *pflag.FlagSet // the flags bound to v
	v        *viper.Viper
}

// traceImportConfig is trace import's settings, decoded once from its flags and the
// environment.
type traceImportConfig struct {
	From        string `mapstructure:"from"`
	Output      string `mapstructure:"output"`
	LatencyUnit string `mapstructure:"latency-unit"`
	Force       bool   `mapstructure:"force"`
}

func (t *traceImportCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "import --from KIND FILE|-",
		Short: "Turn a Mooncake trace, a router access log or a run directory into an agentsim trace",
		Long: `Read FILE (or standard input for -) in the format --from names and write an agentsim trace to
standard output or -o FILE. What the import inferred — sessions, the latency unit and its
evidence — is printed on standard error.

  mooncake    JSON Lines of timestamp (ms), input_length, output_length, hash_ids (512-token
              blocks); sessions are inferred from chains of shared leading hash_ids beyond a
              system prompt. Mooncake has no end times: after_s counts from the previous send.
  access-log  SGLang router / model gateway request lines ("started processing request",
              "finished processing request"…) with method, uri, status and latency. A bare
              latency's unit is inferred from the log's own start and finish lines; when they
              cannot show it, the import refuses and asks for --latency-unit.
  run         an agentsim run directory (FILE is the directory): every request its agents
              sent, with its usage and outcome; each agent is a session.

The -o file must not be FILE or a file of it; an existing one is replaced only with --force.

Exit codes: 0 imported, 2 bad input (the message names the line) or bad flags.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("trace import takes one file (or - for standard input), e.g. agentsim trace import --from mooncake conv.jsonl; got %d arguments", len(args)))
			}
			return nil
		},
		RunE: t.run,
	}
	f := pflag.NewFlagSet("trace import", pflag.ContinueOnError)
	f.String("from", "", "the source format: "+strings.Join(traceimport.Kinds, " or "))
	f.StringP("output", "o", "", "write the trace to this file instead of standard output")
	f.Bool("force", false, "replace the -o file when it exists")
	f.String("latency-unit", "", "access-log only: the unit of bare latencies (ns, us, ms or s), instead of inferring it")
	c.Flags().AddFlagSet(f)
	t.settings, t.v = f, newViper(f)
	return c
}

func (t *traceImportCmd) run(c *cobra.Command, args []string) error {
	var cfg traceImportConfig
	problems, _ := loadSettings(t.settings, t.v, t.env, &cfg)
	if err := configError(problems); err != nil {
		return err
	}
	if out := cfg.Output; out != "" && out != "-" {
		if err := checkOutput("-o", out, args, cfg.Force); err != nil {
			return err
		}
	}
	from := cfg.From
	unit := traceimport.UnitUnknown
	if s := cfg.LatencyUnit; s != "" {
		u, err := traceimport.ParseUnit(s)
		if err != nil {
			return usageError(fmt.Errorf("--latency-unit: %w", err))
		}
		if from != "access-log" {
			return usageError(fmt.Errorf("--latency-unit %s: only --from access-log has latencies", s))
		}
		unit = u
	}
	if from == "run" {
		tr, err := traceimport.Run(args[0])
		if err != nil {
			return usageError(fmt.Errorf("trace import: %w", err))
		}
		return t.write(c, tr, cfg.Output)
	}
	in, name, closeIn, err := openInput(c, args[0])
	if err != nil {
		return err
	}
	defer closeIn()
	var tr *traceimport.Trace
	switch from {
	case "mooncake":
		tr, err = traceimport.Mooncake(in, name)
	case "access-log":
		tr, err = traceimport.AccessLog(in, name, unit)
	default:
		return usageError(fmt.Errorf("--from %q: must be %s", from, strings.Join(traceimport.Kinds, " or ")))
	}
	if errors.Is(err, traceimport.ErrLatencyUnitDisproved) {
		return usageError(fmt.Errorf("trace import: %w; leave out --latency-unit to take the unit the log shows", err))
	}
	if errors.Is(err, traceimport.ErrLatencyUnit) {
		return usageError(fmt.Errorf("trace import: %w: pass --latency-unit ns, us, ms or s", err))
	}
	if err != nil {
		return usageError(fmt.Errorf("trace import: %w", err))
	}
	return t.write(c, tr, cfg.Output)
}

// write stamps the trace, prints what the import inferred and writes the trace.
func (t *traceImportCmd) write(c *cobra.Command, tr *traceimport.Trace, out string) error {
	tr.Header.Created = clock.Real().Now().UTC().Format(time.RFC3339)
	for _, n := range tr.Notes {
		fmt.Fprintln(c.ErrOrStderr(), n)
	}
	return writeImported(c, tr, out)
}

// writeImported writes the trace to the file out, or standard output when out is "" or "-".
func writeImported(c *cobra.Command, tr *traceimport.Trace, out string) error {
	if out == "" || out == "-" {
		if err := tr.Write(c.OutOrStdout()); err != nil {
			return runtimeError(err)
		}
		return nil
	}
	f, err := os.Create(out)
	if err != nil {
		return runtimeError(fmt.Errorf("trace import: %w", err))
	}
	if err := errors.Join(tr.Write(f), f.Close()); err != nil {
		return runtimeError(fmt.Errorf("trace import: write %s: %w", out, err))
	}
	fmt.Fprintf(c.ErrOrStderr(), "wrote %s in %s to %s\n", plural.Of(tr.Header.Requests, "request"), plural.Of(tr.Header.Sessions, "session"), out)
	return nil
}

// openInput opens path, or standard input for "-"; a missing file is a usage error.
func openInput(c *cobra.Command, path string) (io.Reader, string, func(), error) {
	if path == "-" {
		return c.InOrStdin(), "-", func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", nil, usageError(fmt.Errorf("open %s: %w", path, unwrapPath(err)))
	}
	return f, path, func() { _ = f.Close() }, nil
}

// unwrapPath drops the path from an *fs.PathError (the message names the file already).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// traceShowCmd is `agentsim trace show FILE|-`.
type traceShowCmd struct {
	env      []string       // the process environment, as Execute read it
	settings *pflag.FlagSet // the flags bound to v
	v        *viper.Viper
}

// traceShowConfig is trace show's settings.
type traceShowConfig struct {
	JSON bool `mapstructure:"json"`
}

func (t *traceShowCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "show FILE|-",
		Short: "Show a trace's shape: sessions, context growth, tokens, think time, concurrency, prefix reuse",
		Long: `Read an agentsim trace (or standard input for -) one request at a time and print its sessions,
requests per session, context growth per session, token and think-time distributions
(p50/p90/max), concurrency over time (mean, max; needs the requests' e2e_s), duration and
prefix reuse. --json prints the same as one JSON object.

Exit codes: 0 shown, 2 not a valid trace (the message names the line).`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("trace show takes one trace file (or - for standard input), e.g. agentsim trace show trace.jsonl; got %d arguments", len(args)))
			}
			return nil
		},
		RunE: t.run,
	}
	f := pflag.NewFlagSet("trace show", pflag.ContinueOnError)
	f.Bool("json", false, "print the summary as one JSON object")
	c.Flags().AddFlagSet(f)
	t.settings, t.v = f, newViper(f)
	return c
}

func (t *traceShowCmd) run(c *cobra.Command, args []string) error {
	var cfg traceShowConfig
	problems, _ := loadSettings(t.settings, t.v, t.env, &cfg)
	if err := configError(problems); err != nil {
		return err
	}
	in, name, closeIn, err := openInput(c, args[0])
	if err != nil {
		return err
	}
	defer closeIn()
	rd, err := trace.NewReader(in, name)
	if err != nil {
		return usageError(err)
	}
	acc := tracestats.New(rd.Header())
	for {
		r, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return usageError(err)
		}
		acc.Add(r)
	}
	if cfg.JSON {
		err = tracestats.RenderJSON(c.OutOrStdout(), acc.Summary())
	} else {
		err = tracestats.Render(c.OutOrStdout(), acc.Summary())
	}
	if err != nil {
		return runtimeError(err)
	}
	return nil
}

// traceFitCmd is `agentsim trace fit FILE|-`.
type traceFitCmd struct {
	env      []string
	settings *pflag.FlagSet
	v        *viper.Viper
}

// traceFitConfig is trace fit's settings.
type traceFitConfig struct {
	Name   string `mapstructure:"name"`
	Agents int    `mapstructure:"agents"`
}

func (t *traceFitCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "fit FILE|-",
		Short: "Fit a parametric workload to a trace: YAML on standard output, the fit's quality on standard error",
		Long: `Read an agentsim trace (or standard input for -) and fit a workload to it: one agent per
session, rounds the mean requests per session, initial tokens the median first prompt, and
distributions for the read tokens (new_tokens of extending requests), output tokens and think
time (after_s), each chosen among const, uniform, normal, exp and lognormal by the smallest
Kolmogorov–Smirnov distance. The workload YAML goes to standard output, runnable with
agentsim run --workload FILE; the data's quantiles beside the fitted distributions', and every
kind's distance, go to standard error. --agents N scales the workload.

Exit codes: 0 fitted, 2 not a valid trace (the message names the line) or bad flags.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("trace fit takes one trace file (or - for standard input), e.g. agentsim trace fit trace.jsonl > workload.yaml; got %d arguments", len(args)))
			}
			return nil
		},
		RunE: t.run,
	}
	f := pflag.NewFlagSet("trace fit", pflag.ContinueOnError)
	f.String("name", "", "the workload's name (default: fit-<trace file name>)")
	f.Int("agents", 0, "agents of the workload instead of one per session (0: one per session)")
	c.Flags().AddFlagSet(f)
	t.settings, t.v = f, newViper(f)
	return c
}

func (t *traceFitCmd) run(c *cobra.Command, args []string) error {
	var cfg traceFitConfig
	problems, _ := loadSettings(t.settings, t.v, t.env, &cfg)
	if err := configError(problems); err != nil {
		return err
	}
	if cfg.Agents < 0 || cfg.Agents > 10000 {
		return usageError(fmt.Errorf("--agents %d: must be between 1 and 10000, or 0 for one per session", cfg.Agents))
	}
	in, name, closeIn, err := openInput(c, args[0])
	if err != nil {
		return err
	}
	defer closeIn()
	wname := cfg.Name
	if wname == "" {
		wname = "fit-" + strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	res, err := tracefit.FromTrace(in, name, tracefit.Options{Name: wname, Agents: cfg.Agents})
	if err != nil {
		return usageError(err)
	}
	if err := tracefit.Render(c.ErrOrStderr(), res); err != nil {
		return runtimeError(err)
	}
	b, err := res.Workload.YAML()
	if err != nil {
		return runtimeError(err)
	}
	if _, err := c.OutOrStdout().Write(b); err != nil {
		return runtimeError(err)
	}
	return nil
}
