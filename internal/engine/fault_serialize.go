package engine

import "math/rand/v2"

// Serialize limits the decode batch to one request: every other request waits its turn, so
// latency grows with the number of concurrent requests. It takes no parameters.
type Serialize struct{}

var _ Fault = Serialize{}

// Name implements Fault.
func (Serialize) Name() string { return "serialize" }

// String implements Fault.
func (Serialize) String() string { return "serialize{max_running=1}" }

// Validate implements Fault.
func (Serialize) Validate() error { return nil }

func (Serialize) configure(k *Knobs)     { k.MaxRunningCap = 1 }
func (Serialize) plan(*Plan, *rand.Rand) {}
