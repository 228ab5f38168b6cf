package results

import "testing"

// TestSeconds checks the one seconds formatter at each unit and precision boundary.
func TestSeconds(t *testing.T) {
	for _, tc := range []struct {
		s    float64
		want string
	}{
		{0.0441, "44.1 ms"}, // below 0.1 s: milliseconds, so a TPOT keeps its figures
		{0.0999, "99.9 ms"}, // still below 0.1 s
		{0, "0.0 s"},        // nothing at all stays in seconds
		{0.27, "0.3 s"},     // from 0.1 s: seconds with one decimal
		{5.14, "5.1 s"},     // the incident's latencies
		{9.94, "9.9 s"},     // just below ten
		{10, "10 s"},        // whole seconds from ten up
		{612.4, "612 s"},    // the hang's silence
		{-2.5, "-2.5 s"},    // a negative span keeps its sign
	} {
		if got := Seconds(tc.s); got != tc.want {
			t.Errorf("Seconds(%v) = %q; want %q", tc.s, got, tc.want)
		}
	}
}
