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

// TestFigure checks the figures of the summary and the warnings on both sides of ten, and the
// grouping of thousands.
func TestFigure(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"},               // nothing is whole
		{0.44, "0.4"},          // below ten: one decimal
		{-7.5, "-7.5"},         // a negative figure keeps its sign
		{283.4, "283"},         // from ten up: whole
		{5812, "5,812"},        // thousands grouped
		{1234567, "1,234,567"}, // and millions
	} {
		if got := Figure(tc.v); got != tc.want {
			t.Errorf("Figure(%v) = %q; want %q", tc.v, got, tc.want)
		}
	}
	for _, tc := range []struct {
		n    int64
		want string
	}{{5, "5"}, {12, "12"}, {1234, "1,234"}} {
		if got := Count(tc.n); got != tc.want {
			t.Errorf("Count(%d) = %q; want %q", tc.n, got, tc.want)
		}
	}
}
