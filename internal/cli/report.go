package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/internal/buildinfo"
	"github.com/agentsim/agentsim/internal/report"
)

// reportCmd is `agentsim report DIR…`: one self-contained HTML page of one or more runs.
type reportCmd struct {
	env      []string       // the process environment, as Execute read it
	settings *pflag.FlagSet // the flags bound to v
	v        *viper.Viper
}

// reportConfig is report's settings, decoded once from its flags and the environment.
type reportConfig struct {
	Out   string `mapstructure:"out"`
	Title string `mapstructure:"title"`
}

func (r *reportCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "report DIR [DIR…] -o report.html",
		Short: "Write one self-contained HTML report of one or more run directories",
		Long: `Read run directories (of run, bench, compare) and write one HTML file that opens offline and
fetches nothing: the verdict and its evidence first, a table of key figures, then timelines
(agents per state, open and silent streams, pacer holders and waiters, server gauges, output
tokens/s), a per-request Gantt chart (one lane per agent — pacer wait, tool calls, waiting for
the first byte, reasoning, content, silence, failures — with the run's stops marked; above 60 agents,
lanes of grouped agents show the share in each phase) and latency distributions. Several
directories overlay on the same axes (baseline against new); a compare directory stands for
its synthetic and agentic parts, a bench sweep for its tests.

Exit codes: 0 written, 1 the file cannot be written, 2 a DIR is missing or not a run directory.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError(errors.New("report takes one or more run directories, e.g. agentsim report runs/20261129T194516Z-ocbrowse -o report.html"))
			}
			return nil
		},
		RunE: r.run,
	}
	f := pflag.NewFlagSet("report", pflag.ContinueOnError)
	f.StringP("out", "o", "report.html", "the HTML file to write")
	f.String("title", "", `the page's title (default "agentsim report")`)
	c.Flags().AddFlagSet(f)
	r.settings, r.v = f, newViper(f)
	return c
}

func (r *reportCmd) run(c *cobra.Command, dirs []string) error {
	var cfg reportConfig
	problems, _ := loadSettings(r.settings, r.v, r.env, &cfg)
	if err := configError(problems); err != nil {
		return err
	}
	runs, err := report.Load(dirs...)
	if err != nil {
		return usageError(fmt.Errorf("report: %w", err))
	}
	var b bytes.Buffer
	if err := report.Render(&b, runs, report.Options{Title: cfg.Title, Version: buildinfo.Read().String(), Curves: report.Curves(dirs...)}); err != nil {
		return runtimeError(err)
	}
	if err := writeAtomic(cfg.Out, b.Bytes()); err != nil {
		return runtimeError(err)
	}
	fmt.Fprintf(c.OutOrStdout(), "report: %s (%d run%s, %d KiB)\n", cfg.Out, len(runs), map[bool]string{true: "s"}[len(runs) != 1], (b.Len()+1023)/1024)
	return nil
}

// writeAtomic writes data to path through a temporary file in the same directory, so a
// reader never sees half a report.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*.html")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
