package results

import (
	"fmt"
	"math"
	"strconv"
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

// Figure renders a count, rate or gauge reading for a report, the way the summary and the
// warnings print one: one decimal below ten ("0.4", "7.5"), whole and with thousands grouped
// from ten up ("283", "5,812").
func Figure(v float64) string {
	if v != 0 && v < 10 && v > -10 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	s := strconv.FormatInt(int64(v+0.5), 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Count renders a whole count for a report, thousands grouped: 5, 1,234.
func Count(n int64) string {
	if n > -10 && n < 10 {
		return strconv.FormatInt(n, 10)
	}
	return Figure(float64(n))
}
