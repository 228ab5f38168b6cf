package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// Fault is one named misbehaviour of the simulated server. A fault either changes engine-wide
// knobs (configure) or decides, per request, what goes wrong with it (plan), or both. Faults
// combine: each is applied in turn.
//
// A fault's parameters are the exported fields of its struct that carry a mapstructure tag;
// fault parameters are decoded onto them (see ParseFaults), so a new fault needs only its
// struct, its defaults in the registry, Validate, and its effect.
type Fault interface {
	// Name is the fault's name, as ParseFaults takes it.
	Name() string
	// String describes the fault and its parameters, e.g. "stall-stream{fraction=0.1 duration=1m0s}".
	String() string
	// Validate checks the parameters, reporting every problem at once.
	Validate() error
	configure(k *Knobs)
	plan(p *Plan, r *rand.Rand)
}

// Knobs are the engine-wide settings faults may change.
type Knobs struct {
	// MaxRunningCap caps the decode batch (0: the profile's MaxRunning).
	MaxRunningCap int
	// StepFactor multiplies every decode step time (1: healthy).
	StepFactor float64
	// WedgeThreshold and WedgeProbability describe long-context-wedge (threshold 0: off).
	WedgeThreshold   int
	WedgeProbability float64
	// QueueLimited and MaxQueued describe queue-limit: with QueueLimited, a request that
	// finds MaxQueued requests already waiting is rejected.
	QueueLimited bool
	MaxQueued    int
	// RetractCrash is the chance that a retraction kills the scheduler (retract-crash; 0: off).
	RetractCrash float64
}

// Failure is how the errors fault makes a request fail.
type Failure int

// The injected failures.
const (
	// FailNone: the request does not fail.
	FailNone Failure = iota
	// FailRateLimited: Submit rejects the request as RateLimited, with a retry delay.
	FailRateLimited
	// FailOverloaded: Submit rejects the request as Overloaded.
	FailOverloaded
	// FailMidStream: the request is admitted and fails after Plan.FailAt tokens.
	FailMidStream
)

// Plan is what the faults decided for one request. The zero Plan is a healthy request.
type Plan struct {
	// Pinned requests never leave the prefill inflight queue.
	Pinned bool
	// StallAt > 0 pauses the request's generation once, after StallAt tokens, for StallFor
	// (simulated time).
	StallAt  int
	StallFor time.Duration
	// DropAt > 0 cuts the delivery after DropAt tokens, before the finish: mid-generation, or
	// after the only token of a one-token output.
	DropAt int
	// Failure is the injected failure; FailAt is the token after which a FailMidStream request
	// fails.
	Failure Failure
	FailAt  int
	// RetryAfter is the retry delay of a FailRateLimited rejection, simulated time.
	RetryAfter time.Duration
	// ToolCallStyle, when set, is how the request's streamed tool calls are shaped, in place
	// of the profile's (the tool-call-style fault).
	ToolCallStyle ToolCallStyle
	// frac is a uniform draw in [0, 1) that places StallAt, DropAt and FailAt within the
	// output once its length is known.
	stallFrac, dropFrac, failFrac float64
}

// place turns the plan's fractions into token positions for an output of n tokens.
func (p *Plan) place(n int) {
	at := func(f float64) int { return 1 + int(f*float64(max(n-1, 1))) }
	if p.StallFor > 0 {
		p.StallAt = at(p.stallFrac)
	}
	if p.dropFrac > 0 {
		p.DropAt = min(at(p.dropFrac), max(n-1, 1))
	}
	if p.Failure == FailMidStream {
		p.FailAt = at(p.failFrac)
	}
}

// faultMakers is the registry of faults by name.
var faultMakers = map[string]func() Fault{
	"none":               func() Fault { return noFault{} },
	"long-context-wedge": func() Fault { return &LongContextWedge{ThresholdTokens: 32768, Probability: 0.001} },
	"serialize":          func() Fault { return Serialize{} },
	"prefill-pin":        func() Fault { return &PrefillPin{Fraction: 0.1} },
	"slow-decode":        func() Fault { return &SlowDecode{Factor: 3} },
	"stall-stream":       func() Fault { return &StallStream{Fraction: 0.1, Duration: 60 * time.Second} },
	"drop":               func() Fault { return &Drop{Fraction: 0.05} },
	"errors":             func() Fault { return &Errors{Rate: 0.1, Kind: "mix", RetryAfter: 5 * time.Second} },
	"queue-limit":        func() Fault { return &QueueLimit{MaxQueued: 64} },
	"retract-crash":      func() Fault { return &RetractCrash{Probability: 1} },
	"tool-call-style":    func() Fault { return &ToolCallShape{Style: string(ToolCallsNameEveryChunk), Fraction: 1} },
}

// FaultNames lists the known faults.
func FaultNames() []string {
	names := make([]string, 0, len(faultMakers))
	for n := range faultMakers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Faults is a validated set of faults with the seed that makes their decisions deterministic.
type Faults struct {
	list []Fault
	seed uint64
}

// ParseFaults builds the fault set from fault names (each value may hold a comma-separated
// list) and fault parameters ("name.key=value", or "key=value" when one fault is named): each
// fault starts from its defaults, each value is decoded onto the fault's field of that tag
// (numbers and integers as Go parses them, durations in Go syntax such as 60s), then every
// fault is validated. It reports every problem at once, one per line, joined (errors.Join):
// an unknown name or a parameter it cannot apply as a *FaultError, a value a fault refuses as
// "fault NAME: KEY: …".
func ParseFaults(names, params []string, seed uint64) (*Faults, error) {
	f := &Faults{seed: seed}
	byName := map[string]Fault{}
	var errs []error
	for _, arg := range names {
		for _, n := range strings.Split(arg, ",") {
			n = strings.TrimSpace(n)
			if n == "" || byName[n] != nil {
				continue
			}
			mk, ok := faultMakers[n]
			if !ok {
				errs = append(errs, &FaultError{Name: n, Err: fmt.Errorf("unknown fault; want one of %s", strings.Join(FaultNames(), ", "))})
				continue
			}
			byName[n] = mk()
			f.list = append(f.list, byName[n])
		}
	}
	for _, p := range params {
		if err := f.setParam(p, byName); err != nil {
			errs = append(errs, err)
		}
	}
	for _, flt := range f.list {
		err := flt.Validate()
		if multi, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range multi.Unwrap() {
				errs = append(errs, fmt.Errorf("fault %s: %w", flt.Name(), e))
			}
		} else if err != nil {
			errs = append(errs, fmt.Errorf("fault %s: %w", flt.Name(), err))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return f, nil
}

// Knobs returns the engine-wide settings after every fault has been applied.
func (f *Faults) Knobs() Knobs {
	k := Knobs{StepFactor: 1}
	if f != nil {
		for _, flt := range f.list {
			flt.configure(&k)
		}
	}
	return k
}

// String lists the active faults, or "none".
func (f *Faults) String() string {
	if f == nil || len(f.list) == 0 {
		return "none"
	}
	s := make([]string, len(f.list))
	for i, flt := range f.list {
		s[i] = flt.String()
	}
	return strings.Join(s, ",")
}

// Names lists the active faults' names.
func (f *Faults) Names() []string {
	if f == nil {
		return nil
	}
	s := make([]string, 0, len(f.list))
	for _, flt := range f.list {
		if flt.Name() != "none" {
			s = append(s, flt.Name())
		}
	}
	return s
}

// Seed returns the seed every decision about a request is drawn from (0 for nil Faults), for
// the decisions the HTTP front makes itself: the simulated model's tool calls.
func (f *Faults) Seed() uint64 {
	if f == nil {
		return 0
	}
	return f.seed
}

// rngFor returns the deterministic random source of the request with the given key.
func (f *Faults) rngFor(key uint64) *rand.Rand {
	var seed uint64
	if f != nil {
		seed = f.seed
	}
	return rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, key))
}

// plan decides a request's faults from its deterministic random source.
func (f *Faults) plan(r *rand.Rand) Plan {
	var p Plan
	if f != nil {
		for _, flt := range f.list {
			flt.plan(&p, r)
		}
	}
	return p
}

type noFault struct{}

func (noFault) Name() string           { return "none" }
func (noFault) String() string         { return "none" }
func (noFault) Validate() error        { return nil }
func (noFault) configure(*Knobs)       {}
func (noFault) plan(*Plan, *rand.Rand) {}
