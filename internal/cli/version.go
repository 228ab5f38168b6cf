package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/agentsim/agentsim/internal/buildinfo"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version and build info",
		Long: `Print the version (the release or module version, "devel" for a source build), the VCS
revision it was built from ("unknown" only when the build recorded none, as with go run),
the Go toolchain and the platform. Run directories record the same in config.yaml.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintf(c.OutOrStdout(), "agentsim %s, %s/%s\n", buildinfo.Read(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
