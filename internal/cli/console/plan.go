package console

import (
	"fmt"
	"time"
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
	return line + ", ~" + Approx(leftS, speedup) + " left"
}

// Approx renders an estimate of a simulated time as a person reads a wait: "40 s", "31 min",
// "2.5 h", followed at a speedup other than 1 by the wall time it takes, "(~19 s wall)".
func Approx(simS, speedup float64) string {
	if speedup == 1 || speedup <= 0 {
		return approx(simS)
	}
	return approx(simS) + " simulated (~" + approx(simS/speedup) + " wall)"
}

// approx rounds seconds to the unit a wait is read in.
func approx(s float64) string {
	switch d := time.Duration(s * float64(time.Second)); {
	case d < 90*time.Second:
		return fmt.Sprintf("%.0f s", s)
	case d < 90*time.Minute:
		return fmt.Sprintf("%.0f min", s/60)
	}
	return fmt.Sprintf("%.1f h", s/3600)
}
