package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/results"
)

// target is the server a command talks to: an external URL, or the embedded simulator the
// command started and must stop.
type target struct {
	info   harness.Target
	clock  *clock.Clock
	client *http.Client // nil: the harness's default
	stop   func()
}

// simFlags are the flags that configure the embedded simulator.
var simFlags = []string{"sim-profile", "sim-fault", "sim-fault-param", "speedup", "sim-seed"}

// startTarget returns the external server named by --server, refusing simulator-only flags,
// or starts the embedded simulator on a loopback port.
func startTarget(c *cobra.Command, v *viper.Viper) (*target, error) {
	if url := strings.TrimSuffix(strings.TrimRight(v.GetString("server"), "/"), "/v1"); url != "" {
		for _, name := range simFlags {
			if c.Flags().Changed(name) {
				if name == "speedup" {
					return nil, usageError(fmt.Errorf("--speedup applies only to the embedded simulator: drop --speedup, or drop --server to use the simulator"))
				}
				return nil, usageError(fmt.Errorf("--%s configures the embedded simulator and cannot be used with --server", name))
			}
		}
		info := harness.Target{URL: url, Kind: results.External, APIKey: v.GetString("api-key"), MetricsURLs: v.GetStringSlice("metrics-url")}
		return &target{info: info, clock: clock.Real(), stop: func() {}}, nil
	}
	cfg := simConfig{
		Profile: v.GetString("sim-profile"), Faults: v.GetStringSlice("sim-fault"),
		FaultParams: v.GetStringSlice("sim-fault-param"), Speedup: v.GetFloat64("speedup"),
		Seed: v.GetUint64("sim-seed"),
	}
	srv, clk, _, err := buildSimServer(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, runtimeError(fmt.Errorf("embedded simulator: %w", err))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ctx, ln)
	}()
	url := "http://" + ln.Addr().String()
	info := harness.Target{URL: url, Kind: results.Embedded, Profile: cfg.Profile, Faults: srv.Engine().Faults().Names(),
		APIKey: v.GetString("api-key"), MetricsURLs: v.GetStringSlice("metrics-url")}
	return &target{info: info, clock: clk, stop: func() { cancel(); <-done }}, nil
}
