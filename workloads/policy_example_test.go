package workloads_test

import (
	"fmt"
	"time"

	"github.com/agentsim/agentsim/workloads"
)

// Retry doubles its backoff on each attempt, lets a longer Retry-After win, and caps the delay;
// the caller supplies the random draw, so the same arguments give the same delay.
func ExampleRetry_Delay() {
	r := workloads.Retry{Max: 4, Backoff: time.Second, MaxBackoff: 10 * time.Second, Jitter: 0.5}
	for attempt := 1; attempt <= 5; attempt++ {
		fmt.Printf("retry %d allowed=%t delay=%s\n", attempt, r.ShouldRetry(attempt), r.Delay(attempt, 0, 1))
	}
	fmt.Println("with Retry-After 7s:", r.Delay(1, 7*time.Second, 0))
	// Output:
	// retry 1 allowed=true delay=1s
	// retry 2 allowed=true delay=2s
	// retry 3 allowed=true delay=4s
	// retry 4 allowed=true delay=8s
	// retry 5 allowed=false delay=10s
	// with Retry-After 7s: 7s
}

// A timeout policy is armed when any of its bounds is set; Validate names every bad key.
func ExampleTimeouts() {
	fmt.Println(workloads.Timeouts{}.Armed(), workloads.Timeouts{Idle: time.Minute}.Armed())
	fmt.Println(workloads.Timeouts{TTFT: -time.Second}.Validate())
	// Output:
	// false true
	// request.ttft_timeout: -1s is not allowed: want a duration ≥ 0 (0 means none)
}
