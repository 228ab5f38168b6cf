package cli

import (
	"runtime/debug"
	"strings"
)

// gcPercent is the garbage collector's target (GOGC) of a command that runs agents, unless
// the environment sets GOGC. Every agent's state is live for the whole run, and at Go's
// default of 100 the heap grows to twice what is live before a collection — more when the
// collection before fell while the agents started, and counted their requests in the making
// as live: 10,000 agents peaked at 29–35 KiB each, at 75 at 27–35 KiB. At 50 they peak at
// 24–29 KiB, for a tenth of their throughput (313,000–320,000 tokens/s against 357,000–364,000);
// a run of a few dozen agents holds a few megabytes, where the target costs next to nothing
// (docs/speed.md).
const gcPercent = 50

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
