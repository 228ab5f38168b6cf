package console

import (
	"testing"
	"time"
)

// TestPlanLeft checks the live line's rounds and estimate of the time left.
func TestPlanLeft(t *testing.T) {
	for _, tc := range []struct {
		plan             Plan
		ended            int
		elapsed, speedup float64
		want             string
	}{
		// No plan: nothing shown.
		{Plan{}, 3, 10, 1, ""},
		// No round ended and no duration: no pace to extend.
		{Plan{Rounds: 240}, 0, 30, 1, "rounds 0/240"},
		// A quarter done in 10 min: 30 min left, at speedup 1 one figure.
		{Plan{Rounds: 240}, 60, 600, 1, "rounds 60/240, ~30 min left"},
		// The same at speedup 100: the wall time beside the simulated.
		{Plan{Rounds: 240}, 60, 600, 100, "rounds 60/240, ~30 min simulated (~18 s wall) left"},
		// A duration that ends the run sooner bounds the estimate.
		{Plan{Rounds: 240, Duration: 15 * time.Minute}, 60, 600, 1, "rounds 60/240, ~5 min left"},
		// Before any round ends, no estimate, even with a duration.
		{Plan{Rounds: 8, Duration: time.Hour}, 0, 1800, 1, "rounds 0/8"},
		// Hours.
		{Plan{Rounds: 100}, 10, 1800, 1, "rounds 10/100, ~4.5 h left"},
	} {
		if got := tc.plan.left(tc.ended, tc.elapsed, tc.speedup); got != tc.want {
			t.Errorf("%+v.left(%d, %g, %g) = %q; want %q", tc.plan, tc.ended, tc.elapsed, tc.speedup, got, tc.want)
		}
	}
}
