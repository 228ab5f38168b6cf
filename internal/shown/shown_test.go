package shown

import (
	"strings"
	"testing"
)

func TestElide(t *testing.T) {
	long := strings.Repeat("é", 200)
	for _, c := range []struct{ in, want string }{
		// Short values are quoted whole.
		{"16,16", "16,16"},
		{strings.Repeat("x", Max), strings.Repeat("x", Max)},
		// Long ones by their start, cut on a character, and their length.
		{long, strings.Repeat("é", Max-20) + "… (200 characters)"},
	} {
		if got := Elide(c.in); got != c.want {
			t.Errorf("Elide(%.20q…) = %q; want %q", c.in, got, c.want)
		}
	}
}

// TestApprox rounds a wait to the unit it is read in, with its wall time at a speedup.
func TestApprox(t *testing.T) {
	for _, tc := range []struct {
		simS, speedup float64
		want          string
	}{
		{40, 1, "40 s"},
		{89, 0, "89 s"},
		{1860, 1, "31 min"},
		{9000, 1, "2.5 h"},
		{1860, 100, "31 min simulated (~19 s wall)"},
		{0.3, 1, "1 s"},
		{60, 1000, "60 s simulated (~1 s wall)"},
	} {
		if got := Approx(tc.simS, tc.speedup); got != tc.want {
			t.Errorf("Approx(%v, %v) = %q, want %q", tc.simS, tc.speedup, got, tc.want)
		}
	}
}
