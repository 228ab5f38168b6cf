package clock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentsim/agentsim/clock"
)

// A Clock at speedup 20 lets 20 simulated seconds pass in one wall second.
func ExampleNew() {
	clk, err := clock.New(20)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("speedup:", clk.Speedup())
	fmt.Println("a 20s simulated step sleeps", clk.ToWall(20*time.Second), "of wall time")
	fmt.Println("1s of wall time is", clk.ToSim(time.Second), "simulated")
	// Output:
	// speedup: 20
	// a 20s simulated step sleeps 1s of wall time
	// 1s of wall time is 20s simulated
}

// A speedup outside 1–1000000 (or NaN, or infinite) is refused with the value and what is
// allowed.
func ExampleNew_invalid() {
	_, err := clock.New(0.5)
	fmt.Println(err)
	// Output:
	// speedup 0.5 is not allowed: want a number from 1 to 1000000
}

// Sleep waits in simulated time: ten simulated minutes at speedup 100000 take 6 ms of wall
// time.
func ExampleClock_Sleep() {
	clk, err := clock.New(100_000)
	if err != nil {
		fmt.Println(err)
		return
	}
	start := clk.Now()
	if err := clk.Sleep(context.Background(), 10*time.Minute); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("at least 10 simulated minutes passed:", clk.Since(start) >= 10*time.Minute)
	fmt.Println("wall time for them:", clk.ToWall(10*time.Minute))
	// Output:
	// at least 10 simulated minutes passed: true
	// wall time for them: 6ms
}

// WithTimeout bounds work in simulated time, as a harness's request timeouts do: a 30 s
// timeout ends a one-hour wait (30 ms and 3.6 s of wall time at speedup 1000).
func ExampleClock_WithTimeout() {
	clk, err := clock.New(1000)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := clk.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := clk.Now()
	err = clk.Sleep(ctx, time.Hour)
	fmt.Println(err)
	fmt.Println("gave up before the hour:", clk.Since(start) < time.Hour)
	// Output:
	// context deadline exceeded
	// gave up before the hour: true
}

// A Measured clock records how late its waits end, in simulated time: at speedup 1000 every
// millisecond the machine is late is a simulated second. A Ticker's tick is recorded by
// passing the value received to Fired.
func ExampleClock_Measured() {
	base, err := clock.New(1000)
	if err != nil {
		fmt.Println(err)
		return
	}
	clk := base.Measured()
	for range 3 {
		_ = clk.Sleep(context.Background(), 2*time.Second) // 2 ms of wall time each
	}
	t := clk.NewTicker(time.Second)
	clk.Fired(<-t.C)
	t.Stop()
	s := clk.Lag().Stats()
	fmt.Println("waits measured:", s.N)
	fmt.Println("p50 ≤ p99 ≤ max:", s.P50 <= s.P99 && s.P99 <= s.Max)
	// Output:
	// waits measured: 4
	// p50 ≤ p99 ≤ max: true
}
