package harness

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/fakeserver"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
	"github.com/agentsim/agentsim/workloads"
)

// TestServerSpeedup checks that the speedup an agentsim server advertises is read, and that
// any other server runs at speedup 1.
func TestServerSpeedup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.New(50)
		require.NoError(t, err)
		sim := simtest.NewServer(t, simserver.Options{Clock: clk})
		defer sim.Close()
		s, found, err := ServerSpeedup(context.Background(), sim.Client(), sim.URL, "", CheckTimeout)
		require.NoError(t, err)
		assert.True(t, found)
		assert.Equal(t, 50.0, s)
	})
	for _, tc := range []struct {
		name, header string
		want         float64
		found, err   bool
	}{
		// Another server advertises nothing: speedup 1.
		{"other server", "", 1, false, false},
		// A header that is no speedup is an error, not a silent 1.
		{"bad header", "fast", 1, false, true},
		{"out of range", "0.5", 1, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := (&fakeserver.Server{Speedup: tc.header}).Start(t)
			s, found, err := ServerSpeedup(context.Background(), srv.Client(), srv.URL, "", CheckTimeout)
			assert.Equal(t, tc.err, err != nil, "error %v", err)
			assert.Equal(t, tc.found, found)
			assert.Equal(t, tc.want, s)
		})
	}
}

// TestPrepareAdoptsTheServersSpeedup checks that a run given no clock adopts the speedup an
// agentsim server advertises, in the one question Prepare asks, and keeps a clock it is given.
func TestPrepareAdoptsTheServersSpeedup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.New(50)
		require.NoError(t, err)
		sim := simtest.NewServer(t, simserver.Options{Clock: clk})
		defer sim.Close()
		w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke"})
		require.NoError(t, err)
		o := Options{Workload: w, Target: Target{URL: sim.URL, Kind: results.External}, HTTPClient: sim.Client()}
		p, err := Prepare(t.Context(), o)
		require.NoError(t, err)
		assert.Equal(t, 50.0, p.Served.Speedup, "Served.Speedup")
		assert.True(t, p.Adopted, "Adopted")
		assert.Equal(t, 50.0, p.Clock.Speedup(), "Clock.Speedup()")

		o.Clock = clock.Real()
		p, err = Prepare(t.Context(), o)
		require.NoError(t, err)
		assert.False(t, p.Adopted, "a clock given is kept")
		assert.Same(t, o.Clock, p.Clock)
	})
}
