package cli

import (
	"runtime/debug"
	"strings"
)

// gcPercent is the garbage collector's target (GOGC) of a command that runs agents, unless
// the environment sets GOGC. Every agent's state is live for the whole run, and at Go's
// default of 100 the heap grows to twice what is live before a collection: 10,000 agents
// peaked at 30–36 KiB each, as the collection fell during their start or not. At 75 they
// peak at 28–30 KiB, for no throughput lost that the runs could measure (docs/speed.md).
const gcPercent = 75

// tuneGC sets the collector's target for a command that runs agents, unless env, the process
// environment, sets GOGC: then the runtime has taken that already.
func tuneGC(env []string) {
	for _, kv := range env {
		if strings.HasPrefix(kv, "GOGC=") {
			return
		}
	}
	debug.SetGCPercent(gcPercent)
}
