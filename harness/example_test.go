package harness_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/workloads"
)

// ExampleRun runs the built-in smoke workload (4 agents × 2 rounds) against the simulator on a
// loopback port, with simulated time 50 times faster than wall time, and reads the verdict.
// The run directory receives events.jsonl, samples.jsonl, results.json and config.yaml.
func ExampleRun() {
	clk, err := clock.New(50)
	if err != nil {
		log.Fatal(err)
	}
	sim, err := simserver.New(simserver.Options{Clock: clk})
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- sim.Serve(ctx, ln) }()
	defer func() { stop(); <-served }()

	w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke"})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "agentsim-run-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	res, err := harness.Run(ctx, harness.Options{
		Command: "example", Workload: w, Clock: clk, Dir: dir,
		Target: harness.Target{URL: "http://" + ln.Addr().String(), Kind: results.Embedded, Profile: "dsv4-pd"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d/%d rounds, %d requests ok\n", res.Verdict.Kind, res.Rounds.Completed, res.Rounds.Planned, res.Requests.OK)
	// Output:
	// healthy: 8/8 rounds, 8 requests ok
}
