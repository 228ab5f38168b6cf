package pacer

import (
	"errors"
	"maps"
	"slices"

	"github.com/agentsim/agentsim/clock"
)

// design is one entry of the registry: the config keys a kind reads and how to build it.
type design struct {
	uses  []string // keys as the workload file spells them, e.g. "pacer.slots"
	build func(Config, *clock.Clock) Pacer
}

// designs is the registry of pacer kinds. Add a kind here, in kind.go and in Config's Kind doc.
var designs = map[Kind]design{
	KindUnlimited: {build: as(newUnlimited)},
	KindSlots:     {uses: []string{keySlots}, build: as(newSlots)},
	KindRate:      {uses: []string{keyRPS, keyBurst}, build: as(newRate)},
	KindSlotsRate: {uses: []string{keySlots, keyRPS, keyBurst}, build: as(newSlotsRate)},
	KindTicket:    {uses: []string{keySlots, keyRPS}, build: as(newTicket)},
	KindAIMD: {uses: []string{keyInitialLimit, keyMinLimit, keyMaxLimit, keyBackoffRatio, keyLatencyTarget},
		build: as(newAIMD)},
	KindGradient: {uses: []string{keyInitialLimit, keyMinLimit, keyMaxLimit, keyTolerance},
		build: as(newGradient)},
	KindTPM: {uses: []string{keyTokensPerMinute}, build: as(newTPM)},
}

// as adapts a constructor of a concrete design to the registry's signature.
func as[P Pacer](f func(Config, *clock.Clock) P) func(Config, *clock.Clock) Pacer {
	return func(c Config, clk *clock.Clock) Pacer { return f(c, clk) }
}

// Kinds lists the pacer kinds New accepts, sorted.
func Kinds() []Kind { return slices.Sorted(maps.Keys(designs)) }

// New validates cfg and builds the pacer it describes, waiting on clk. On invalid
// configuration it returns every problem at once (see Config.Validate).
//
// The caller owns the result: if it implements io.Closer (kind ticket runs an issuer
// goroutine), the caller must Close it when done.
func New(cfg Config, clk *clock.Clock) (Pacer, error) {
	if clk == nil {
		return nil, errors.New("pacer: nil clock")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return designs[cfg.Kind].build(cfg, clk), nil
}
