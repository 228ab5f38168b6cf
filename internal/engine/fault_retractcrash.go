package engine

import "math/rand/v2"

// RetractCrash is the crash seen on SGLang's decode engine: the scheduler dies while
// offloading a retracted request. Each retraction (KV full) kills the scheduler with
// Probability; from then on the engine steps no more — every stream in it stops, open and
// silent, requests on their way to it time out (bootstrap_timeout, waiting_timeout) — and
// every later request is refused (503). Only KV pressure triggers it, so a short benchmark
// passes.
type RetractCrash struct {
	// Probability is the chance that one retraction kills the scheduler, from 0 to 1;
	// default 1 (the first retraction).
	Probability float64 `mapstructure:"probability"`
}

var _ Fault = (*RetractCrash)(nil)

// Name implements Fault.
func (*RetractCrash) Name() string { return "retract-crash" }

// String implements Fault.
func (r *RetractCrash) String() string { return describe(r) }

// Validate implements Fault.
func (r *RetractCrash) Validate() error {
	var ps problems
	ps.fraction("probability", r.Probability)
	return ps.err()
}

func (r *RetractCrash) configure(k *Knobs) { k.RetractCrash = r.Probability }

func (*RetractCrash) plan(*Plan, *rand.Rand) {}
