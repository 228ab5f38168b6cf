package engine

import "math/rand/v2"

// LongContextWedge is the incident's root cause: once a decode batch holds a sequence whose
// context is at least ThresholdTokens, each such sequence wedges with Probability per decode
// step — it emits no more tokens, leaves the running batch, keeps its KV and its stream stays
// open and silent until the client goes away. Short prompts never reach the threshold, so a
// short synthetic benchmark passes.
type LongContextWedge struct {
	// ThresholdTokens is the context length, in tokens (an integer ≥ 1), from which a sequence
	// may wedge; default 32768.
	ThresholdTokens int `mapstructure:"threshold_tokens"`
	// Probability is the chance per decode step that such a sequence wedges, from 0 to 1;
	// default 0.001.
	Probability float64 `mapstructure:"probability"`
}

var _ Fault = (*LongContextWedge)(nil)

// Name implements Fault.
func (*LongContextWedge) Name() string { return "long-context-wedge" }

// String implements Fault.
func (w *LongContextWedge) String() string { return describe(w) }

// Validate implements Fault.
func (w *LongContextWedge) Validate() error {
	var ps problems
	ps.atLeast("threshold_tokens", w.ThresholdTokens, 1)
	ps.fraction("probability", w.Probability)
	return ps.err()
}

func (w *LongContextWedge) configure(k *Knobs) {
	k.WedgeThreshold, k.WedgeProbability = w.ThresholdTokens, w.Probability
}

func (*LongContextWedge) plan(*Plan, *rand.Rand) {}
