package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentsim/agentsim/workloads"
)

// newWorkloadsCmd is `agentsim workloads` and `agentsim workloads show NAME`.
func newWorkloadsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "workloads",
		Short: "List the built-in workloads",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(c.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tAGENTS\tROUNDS\tREASONING\tOUTPUT TOKENS\tPACER")
			for _, name := range workloads.Names() {
				w, err := workloads.Load(workloads.LoadOptions{Workload: name})
				if err != nil {
					return err
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", name, w.Agents, w.Rounds,
					w.Request.ReasoningEffort, w.Request.OutputTokens, w.Pacer.Kind)
			}
			return tw.Flush()
		},
	}
	c.AddCommand(&cobra.Command{
		Use:   "show NAME|FILE",
		Short: "Print a workload, every key resolved, as YAML",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("workloads show takes one workload name or file, e.g. agentsim workloads show smoke; got %d arguments", len(args)))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			w, err := workloads.Load(workloads.LoadOptions{Workload: args[0]})
			if err != nil {
				return usageError(err)
			}
			b, err := w.YAML()
			if err != nil {
				return err
			}
			_, err = c.OutOrStdout().Write(b)
			return err
		},
	})
	return c
}
