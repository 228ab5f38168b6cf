package workloads_test

import (
	"errors"
	"fmt"

	"github.com/agentsim/agentsim/workloads"
)

// Names lists the built-in workloads.
func ExampleNames() {
	fmt.Println(workloads.Names())
	// Output:
	// [coding-agent ocbrowse smoke synthetic]
}

// Load resolves a built-in workload with overrides: a flag and --set beat the environment,
// which beats the workload file. Durations are simulated time; sizes are tokens.
func ExampleLoad() {
	w, err := workloads.Load(workloads.LoadOptions{
		Workload: "ocbrowse",
		Env:      []string{"AGENTSIM_ROUNDS=2", "AGENTSIM_AGENTS=20", "HOME=/root"},
		Overrides: []workloads.Override{
			{Key: "agents", Value: "8", Source: "--agents"},
			{Key: "pacer.slots", Value: "16", Source: "--set"},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d agents × %d rounds, pacer %s with %d slots\n", w.Name, w.Agents, w.Rounds, w.Pacer.Kind, w.Pacer.Slots)
	fmt.Println("output tokens:", w.Request.OutputTokens)
	fmt.Println("watchdog stall_after:", w.Watchdog.StallAfter)
	// Output:
	// ocbrowse: 8 agents × 2 rounds, pacer slots with 16 slots
	// output tokens: {dist: uniform, min: 3000, max: 4500}
	// watchdog stall_after: 2m0s
}

// Every problem in every layer is reported at once, each naming where it came from, the key,
// the value and what is allowed; a misspelt key gets a suggestion.
func ExampleLoad_errors() {
	_, err := workloads.Load(workloads.LoadOptions{
		Workload: "smoke",
		Overrides: []workloads.Override{
			{Key: "agents", Value: "0", Source: "--agents"},
			{Key: "pacer.slot", Value: "16", Source: "--set"},
			{Key: "request.idle_timeout", Value: "soon", Source: "--set"},
		},
	})
	fmt.Println(err)
	var ce *workloads.ConfigError
	if errors.As(err, &ce) {
		fmt.Println(len(ce.Problems), "problems")
	}
	// Output:
	// --set pacer.slot=16: unknown key "pacer.slot"; did you mean "pacer.slots"?
	// --set request.idle_timeout=soon: request.idle_timeout: "soon" is not allowed: want a duration such as 200ms, 90s or 5m
	// agents: 0 is not allowed: want an integer from 1 to 10000
	// 3 problems
}

// Validate checks a workload built in code, reporting every problem at once.
func ExampleWorkload_Validate() {
	w := workloads.Defaults()
	w.Agents = -3
	w.Watchdog.HangAfter = 0
	fmt.Println(w.Validate())
	// Output:
	// agents: -3 is not allowed: want an integer from 1 to 10000
	// watchdog.hang_after: 0s is not allowed: want a duration longer than watchdog.stall_after (2m)
}

// EnvName is the environment variable that sets a key.
func ExampleEnvName() {
	fmt.Println(workloads.EnvName("pacer.slots"), workloads.EnvName("request.idle_timeout"))
	// Output:
	// AGENTSIM_PACER_SLOTS AGENTSIM_REQUEST_IDLE_TIMEOUT
}
