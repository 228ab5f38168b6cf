package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

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

// targetConfig is the settings that pick the server (run, bench, compare): see addServerFlags.
type targetConfig struct {
	Server         string   `mapstructure:"server"`
	APIKey         string   `mapstructure:"api-key"`
	MetricsURLs    []string `mapstructure:"metrics-url"`
	SimProfile     string   `mapstructure:"sim-profile"`
	SimFaults      []string `mapstructure:"sim-fault"`
	SimFaultParams []string `mapstructure:"sim-fault-param"`
	Speedup        float64  `mapstructure:"speedup"`
	SimSeed        uint64   `mapstructure:"sim-seed"`
}

// sim is the embedded simulator's configuration.
func (t targetConfig) sim() simConfig {
	return simConfig{Profile: t.SimProfile, Faults: t.SimFaults, FaultParams: t.SimFaultParams,
		Speedup: t.Speedup, Seed: t.SimSeed}
}

// simFlags are the flags that configure the embedded simulator.
var simFlags = []string{"sim-profile", "sim-fault", "sim-fault-param", "speedup", "sim-seed"}

// starter starts the server a command talks to; commands use startTarget, tests an in-memory
// simulator.
type starter func(*cobra.Command, targetConfig) (*target, error)

// startWith starts the target with s, or with startTarget when s is nil.
func startWith(s starter, c *cobra.Command, t targetConfig) (*target, error) {
	if s == nil {
		s = startTarget
	}
	return s(c, t)
}

// startTarget returns the external server named by --server, refusing simulator-only flags
// given on the command line, or starts the embedded simulator on a loopback port.
func startTarget(c *cobra.Command, t targetConfig) (*target, error) {
	if url := strings.TrimSuffix(strings.TrimRight(t.Server, "/"), "/v1"); url != "" {
		for _, name := range simFlags {
			if c.Flags().Changed(name) {
				if name == "speedup" {
					return nil, usageError(fmt.Errorf("--speedup applies only to the embedded simulator: drop --speedup, or drop --server to use the simulator"))
				}
				return nil, usageError(fmt.Errorf("--%s configures the embedded simulator and cannot be used with --server", name))
			}
		}
		info := harness.Target{URL: url, Kind: results.External, APIKey: t.APIKey, MetricsURLs: t.MetricsURLs}
		return &target{info: info, clock: clock.Real(), stop: func() {}}, nil
	}
	cfg := t.sim()
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
		APIKey: t.APIKey, MetricsURLs: t.MetricsURLs}
	return &target{info: info, clock: clk, stop: func() { cancel(); <-done }}, nil
}
