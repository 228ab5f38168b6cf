// Package shown says how a message shows a value to a person: a value a user gave, whole when
// it is short, by its start and length when it is long, so that no message echoes a file or a
// pasted blob whole; and an estimated wait, in the unit a person reads it in.
package shown

import (
	"fmt"
	"time"
)

// Max is the most characters of a value a message quotes.
const Max = 80

// Elide returns s when it has at most Max characters, else its first characters followed by
// "… (N characters)".
func Elide(s string) string {
	r := []rune(s)
	if len(r) <= Max {
		return s
	}
	return fmt.Sprintf("%s… (%d characters)", string(r[:Max-20]), len(r))
}

// Approx renders an estimate of a simulated time as a person reads a wait: "40 s", "31 min",
// "2.5 h", followed at a speedup other than 1 by the wall time it takes, "(~19 s wall)".
func Approx(simS, speedup float64) string {
	if speedup == 1 || speedup <= 0 {
		return approx(simS)
	}
	return approx(simS) + " simulated (~" + approx(simS/speedup) + " wall)"
}

// approx rounds seconds to the unit a wait is read in; a wait under a second reads as one
// ("~1 s"), never "0 s".
func approx(s float64) string {
	switch d := time.Duration(s * float64(time.Second)); {
	case d < 90*time.Second:
		return fmt.Sprintf("%.0f s", max(s, 1))
	case d < 90*time.Minute:
		return fmt.Sprintf("%.0f min", s/60)
	}
	return fmt.Sprintf("%.1f h", s/3600)
}
