package diagnose

import (
	"fmt"
	"math"

	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/workloads"
)

// ContextNeed is the most tokens one request of a workload may ask the server for: its largest
// prompt plus the max_tokens it sends, with how it was reckoned. The largest prompt is the last
// round's (system + initial + every round's read + every earlier round's output, each at its
// distribution's upper end), capped at context.max_context_tokens, where agents stop. An output
// is bounded by what is sent as max_tokens: the sampled length with
// request.force_output_length, else request.max_tokens. A run's context warnings and its fit
// to a server's window (harness.Prepare) both reckon with it.
type ContextNeed struct {
	Prompt, MaxTokens int
	// OutLow and OutHigh are the ends of the output a request reserves in the agents' context
	// check (agents.Reserved): the sampled length, capped at request.max_tokens unless forced.
	OutLow, OutHigh int
	// How says how Prompt was reckoned, for a message.
	How string
}

// Total is the prompt and max_tokens together, in tokens.
func (n ContextNeed) Total() int { return n.Prompt + n.MaxTokens }

// NeedOf reckons the ContextNeed of w.
func NeedOf(w *workloads.Workload) ContextNeed {
	c, r := w.Context, w.Request
	read := Upper(c.ReadTokens)
	n := ContextNeed{MaxTokens: r.MaxTokens, OutLow: Lower(r.OutputTokens), OutHigh: Upper(r.OutputTokens)}
	if r.ForceOutputLength {
		n.MaxTokens = n.OutHigh
	} else {
		n.OutLow, n.OutHigh = min(n.OutLow, r.MaxTokens), min(n.OutHigh, r.MaxTokens)
	}
	grown := c.SystemTokens + c.InitialTokens + w.Rounds*read + (w.Rounds-1)*n.OutHigh
	n.Prompt = min(grown, c.MaxContextTokens)
	n.How = fmt.Sprintf("system %d + initial %d + %d round%s × ≤ %d read + %d × ≤ %d output",
		c.SystemTokens, c.InitialTokens, w.Rounds, plural.S(w.Rounds), read, w.Rounds-1, n.OutHigh)
	if grown > c.MaxContextTokens {
		n.How = fmt.Sprintf("context.max_context_tokens %d", c.MaxContextTokens)
	}
	return n
}

// Upper is a distribution's upper end in tokens: its maximum where it has one, else a value
// few samples pass (mean + 2 standard deviations; 3 means for the exponential); a mixture's is
// its parts' largest.
func Upper(d workloads.Dist) int {
	switch d.Kind {
	case workloads.DistMixture:
		u := 0
		for _, p := range d.Parts {
			u = max(u, Upper(p.Dist))
		}
		return u
	case workloads.DistUniform:
		return d.Max
	case workloads.DistNormal, workloads.DistLognormal:
		return d.Avg + 2*d.StdDev
	case workloads.DistExp:
		return 3 * d.Avg
	}
	return d.Value
}

// Lower is a distribution's lower end in tokens: its minimum where it has one, else a value
// few samples stay under (mean − 2 standard deviations, at least 0; 0 for the exponential); a
// mixture's is its parts' smallest.
func Lower(d workloads.Dist) int {
	switch d.Kind {
	case workloads.DistMixture:
		l := math.MaxInt
		for _, p := range d.Parts {
			l = min(l, Lower(p.Dist))
		}
		return l
	case workloads.DistUniform:
		return d.Min
	case workloads.DistNormal, workloads.DistLognormal:
		return max(0, d.Avg-2*d.StdDev)
	case workloads.DistExp:
		return 0
	}
	return d.Value
}
