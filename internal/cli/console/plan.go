package console

import (
	"fmt"

	"github.com/agentsim/agentsim/internal/shown"
)

// left renders the rounds ended of those planned and an estimate of the time left, "rounds
// 12/240, ~31 min left", from the pace so far: the simulated time the ended rounds took,
// extended to the rest, and no later than the run's Duration when it has one. Wall time is
// simulated time over speedup; at a speedup other than 1 both are given. Before any round
// has ended there is no pace to extend, and no estimate. "" for the zero Plan.
func (p Plan) left(ended int, elapsedS, speedup float64) string {
	if p.Rounds <= 0 {
		return ""
	}
	line := fmt.Sprintf("rounds %d/%d", ended, p.Rounds)
	if ended == 0 {
		return line
	}
	leftS := elapsedS * float64(p.Rounds-ended) / float64(ended)
	if p.Duration > 0 {
		leftS = min(leftS, max(p.Duration.Seconds()-elapsedS, 0))
	}
	return line + ", ~" + shown.Approx(leftS, speedup) + " left"
}
