package results

import (
	"fmt"
	"math"
)

// Seconds renders a duration of s simulated seconds with its unit, the one way every report
// prints one: milliseconds with one decimal below 0.1 s ("44.1 ms"), seconds with one decimal
// below ten ("5.1 s", "0.3 s"), whole seconds from ten up ("612 s").
func Seconds(s float64) string {
	switch a := math.Abs(s); {
	case a < 0.1 && a > 0:
		return fmt.Sprintf("%.1f ms", s*1000)
	case a < 10:
		return fmt.Sprintf("%.1f s", s)
	}
	return fmt.Sprintf("%.0f s", s)
}
