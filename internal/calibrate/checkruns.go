package calibrate

import (
	"fmt"
	"math"
	"time"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/rundir"
)

// FiguresOfRun summarizes a run directory's requests (its events.jsonl) as Figures, for
// calibrate check --workload: TTFT, TPOT and e2e per request; ITL as each request's mean gap
// between chunks after the first (the events keep no single gap); the output throughput over
// the span from the first send to the last end; Agents is how many agents started.
func FiguresOfRun(dir string) (Figures, error) {
	evs, err := rundir.ReadEvents(dir)
	if err != nil {
		return Figures{}, fmt.Errorf("run %s: %w", dir, err)
	}
	var f Figures
	var ttft, itl, tpot, e2e []time.Duration
	first, last := math.Inf(1), math.Inf(-1)
	tokens := 0
	for _, e := range evs {
		switch {
		case e.Kind == events.AgentStart:
			f.Agents++
		case e.Kind == events.RequestSent:
			first = math.Min(first, e.TS)
		case e.Kind == events.Done:
			f.Requests++
			if e.TTFTS <= 0 || e.LatencyS <= 0 {
				f.Failed++
				continue
			}
			last = math.Max(last, e.TS)
			ttft, e2e = append(ttft, seconds(e.TTFTS)), append(e2e, seconds(e.LatencyS))
			if e.ITLS > 0 {
				itl = append(itl, seconds(e.ITLS))
			}
			if e.CompletionTokens > 1 {
				tpot = append(tpot, seconds((e.LatencyS-e.TTFTS)/float64(e.CompletionTokens-1)))
			}
			tokens += e.CompletionTokens
		case e.Kind.Terminal():
			f.Requests++
			f.Failed++
			if f.FirstError == "" {
				f.FirstError = fmt.Sprintf("%s: %s", e.Kind, e.Message)
			}
		}
	}
	if len(ttft) == 0 {
		return f, fmt.Errorf("run %s: no request completed", dir)
	}
	f.TTFT, f.ITL, f.TPOT, f.E2E = quantiles(ttft), quantiles(itl), quantiles(tpot), quantiles(e2e)
	if span := last - first; span > 0 {
		f.Throughput = float64(tokens) / span
	}
	return f, nil
}
