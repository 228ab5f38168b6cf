package results

import "github.com/agentsim/agentsim/events"

// Observations are a run's per-request observations: the exact values the Latency summaries
// (in simulated seconds) and the output rate are computed from (successful requests only;
// PacerWait every acquisition), in the order the events came. Comparisons of two runs
// resample them.
type Observations struct {
	TTFT        []float64
	TTFTContent []float64
	ITL         []float64
	TPOT        []float64
	E2E         []float64
	PacerWait   []float64
	// Output is the output tokens each request streamed, in tokens: the terms of
	// Tokens.OutputPerSecond — each successful request's completion tokens (reasoning
	// included), then the chunks of every other request, ended or open, at the tokens per
	// chunk the successful ones showed.
	Output []float64
}

// Observations returns copies of the observations accumulated so far.
func (b *Builder) Observations() Observations {
	return Observations{
		TTFT: clone(b.lat.ttft), TTFTContent: clone(b.lat.ttftContent), ITL: clone(b.lat.itl),
		TPOT: clone(b.lat.tpot), E2E: clone(b.lat.e2e), PacerWait: clone(b.lat.pacerWait),
		Output: b.streamed(),
	}
}

// ObservationsOf returns the observations of a run's events, as a Builder fed with them
// finds them.
func ObservationsOf(evs []events.Event) Observations {
	b := NewBuilder()
	for _, e := range evs {
		b.Event(e)
	}
	return b.Observations()
}
