package simserver

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// LongContextWedge is the incident's root cause: once a decode batch holds a sequence whose
// context is at least ThresholdTokens, each such sequence wedges with Probability per decode
// step — it emits no more tokens, leaves the running batch, keeps its KV and its stream stays
// open and silent until the client goes away. Short prompts never reach the threshold, so a
// short synthetic benchmark passes.
type LongContextWedge struct {
	ThresholdTokens int
	Probability     float64
}

var _ Fault = (*LongContextWedge)(nil)

// Name implements Fault.
func (*LongContextWedge) Name() string { return "long-context-wedge" }

// String implements Fault.
func (w *LongContextWedge) String() string {
	return fmt.Sprintf("long-context-wedge{threshold_tokens=%d probability=%g}", w.ThresholdTokens, w.Probability)
}

// Set implements Fault.
func (w *LongContextWedge) Set(key, value string) error {
	switch key {
	case "threshold_tokens":
		v, err := strconv.Atoi(value)
		if err != nil {
			return fmt.Errorf("threshold_tokens: %q is not allowed: want an integer ≥ 1", value)
		}
		w.ThresholdTokens = v
	case "probability":
		v, err := parseFraction(key, value)
		if err != nil {
			return err
		}
		w.Probability = v
	default:
		return unknownParam(w.Name(), key, "threshold_tokens", "probability")
	}
	return nil
}

// Validate implements Fault.
func (w *LongContextWedge) Validate() error {
	if w.ThresholdTokens < 1 {
		return fmt.Errorf("threshold_tokens: %d is not allowed: want an integer ≥ 1", w.ThresholdTokens)
	}
	return nil
}

func (w *LongContextWedge) configure(k *Knobs) {
	k.WedgeThreshold, k.WedgeProbability = w.ThresholdTokens, w.Probability
}

func (*LongContextWedge) plan(*Plan, *rand.Rand) {}
