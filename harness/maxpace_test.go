package harness

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/results"
)

// paceSim is a simulator's lag as the controller reads it: its deliveries' lateness, how far
// behind its model it is, and the lateness it gained each window.
type paceSim struct {
	SimLag
	lag            clock.Lag
	behind, gained time.Duration
}

func (s *paceSim) Lag() *clock.Lag            { return &s.lag }
func (s *paceSim) Behind() time.Duration      { return s.behind }
func (s *paceSim) NewLateness() time.Duration { g := s.gained; s.gained = 0; return g }

// The controller slows the clock when the harness's lag exceeds the bound or the simulator
// gains lateness, holds it while the simulator's lag stays high without gaining, and speeds up
// again once lag falls.
func TestMaxPaceSlowsAndRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.Adjustable(1000)
		require.NoError(t, err)
		own, sim := new(clock.Lag), new(paceSim)
		p := NewMaxPace(clk, time.Second, own, sim)

		// Lag quantiles are histogram bucket bounds, up to 12.5 % high: ratios are checked to that.
		step := func(want float64, msg string) {
			t.Helper()
			before := clk.Speedup()
			p.Step()
			assert.InEpsilon(t, want, clk.Speedup()/before, 0.13, msg)
		}
		own.Record(4 * time.Second)
		step(0.25, "the harness ran 4× the bound late: down in proportion")
		own.Record(1500 * time.Millisecond)
		step(0.5, "1.5× the bound: at least halved")
		sim.lag.Record(3 * time.Second)
		sim.gained = 1 * time.Second
		step(maxPaceDownMost, "the simulator gained the bound's worth of lateness: down, to a quarter in one window")
		sim.lag.Record(3 * time.Second)
		step(maxPaceUpMost, "the simulator as late as before, no later (a generation's carried lateness), above the bound: up")
		sim.lag.Record(400 * time.Millisecond)
		sim.gained = 200 * time.Millisecond
		step(maxPaceUp, "its carried lateness within the bound, gaining less than a quarter of it: up by a fifth")
		own.Record(700 * time.Millisecond)
		step(1, "the harness between half the bound and the bound: hold")
		sim.behind = 700 * time.Millisecond
		step(maxPaceDownMost, "the simulator fell behind its model by more than half the bound in one window: down")
		step(maxPaceUpMost, "as far behind as before, within the bound, gaining nothing: up")
		sim.behind = 0
		for range 100 {
			p.Step() // no lag at all: up to the ceiling
		}
		assert.Equal(t, maxPaceCeiling, clk.Speedup())

		a := p.Achieved()
		assert.Equal(t, "max", a.Mode)
		assert.Equal(t, 1.0, a.LagBoundS)
		assert.Less(t, a.Min, 20.0)
		assert.Equal(t, 1000.0, a.Samples[0].Speedup)
		assert.Equal(t, maxPaceCeiling, a.Samples[len(a.Samples)-1].Speedup)
	})
}

// jitter is a machine whose lag is only its wake-ups' wall-clock jitter, the same at any rate:
// simulated lag grows with the speedup. Each window records the harness's waits late by
// wall, the simulator's deliveries late by three such wake-ups (a hand-off's, a step's and a
// reader's), and lateness gained since the last window by one — lateness that does not last.
func jitter(clk *clock.Clock, own *clock.Lag, sim *paceSim, wall time.Duration) {
	late := time.Duration(float64(wall) * clk.Speedup())
	for range 100 {
		own.Record(late)
		sim.lag.Record(3 * late)
	}
	sim.gained = late
}

// On a machine whose lag is its wake-ups' jitter, the controller rises to the rate where that
// jitter nears the bound, where it once held wherever the simulator's lateness gained in a
// window — the jitter itself — was above a 64th of the bound: at 20×, the start, on a machine
// that wakes 2 ms late, with room for 100×.
func TestMaxPaceRisesToWhereJitterFillsTheBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.Adjustable(20)
		require.NoError(t, err)
		own, sim := new(clock.Lag), new(paceSim)
		bound := 1200 * time.Millisecond
		p := NewMaxPace(clk, bound, own, sim)
		for range 40 {
			jitter(clk, own, sim, 2*time.Millisecond)
			p.Step()
		}
		// 2 ms at 100× is 0.2 s, the simulator's lateness 0.6 s: half the bound, where the
		// controller stops rising.
		assert.GreaterOrEqual(t, clk.Speedup(), 75.0, "the rate rose to where the jitter fills the room")
		late := time.Duration(float64(2*time.Millisecond) * clk.Speedup())
		assert.LessOrEqual(t, 3*late, bound, "the simulator's lag stays within the bound")
	})
}

// Lateness the simulator carries from before a slow-down — above the bound, not growing —
// does not hold the rate at the floor: it rises while the simulator gains next to nothing,
// where it once held at 1× until every generation that carried it had ended.
func TestMaxPaceRisesOverCarriedLateness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.Adjustable(1)
		require.NoError(t, err)
		own, sim := new(clock.Lag), new(paceSim)
		bound := 1200 * time.Millisecond
		p := NewMaxPace(clk, bound, own, sim)
		for range 20 {
			late := time.Duration(float64(time.Millisecond) * clk.Speedup()) // a wake-up's jitter
			for range 100 {
				own.Record(late)
				sim.lag.Record(2*time.Second + late) // carried, as late as before, and the jitter
			}
			sim.gained = late
			p.Step()
		}
		assert.GreaterOrEqual(t, clk.Speedup(), 8.0, "up to where the simulator gains about a 64th of the bound")
		assert.LessOrEqual(t, clk.Speedup(), 40.0, "no further while it is above the bound")
	})
}

// One late wake-up — the p99 of a window with few waits, as an idle run's are — costs one step
// of at most a quarter, and the rate is back within a few windows: it once cut the rate in
// proportion to the one wait, to an eighth here, and took a dozen windows to return.
func TestMaxPaceOneLateWakeUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.Adjustable(200)
		require.NoError(t, err)
		own := new(clock.Lag)
		p := NewMaxPace(clk, time.Second, own, new(paceSim))
		own.Record(8 * time.Second) // 40 ms of wall time at 200×
		p.Step()
		assert.InEpsilon(t, 50.0, clk.Speedup(), 0.01, "down to a quarter, not to an eighth")
		for range 3 {
			own.Record(time.Duration(float64(100*time.Microsecond) * clk.Speedup()))
			p.Step()
		}
		assert.GreaterOrEqual(t, clk.Speedup(), 200.0, "back within three windows")
	})
}

// A simulator that gains a little lateness every window — each gain far below the growth from
// one window's p99 to the next that the controller once answered — carries ever more: once it
// is above the bound, every window that still gains slows the clock, until it gains no more.
func TestMaxPaceStopsCarriedLagGrowing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.Adjustable(100)
		require.NoError(t, err)
		sim := new(paceSim)
		p := NewMaxPace(clk, time.Second, new(clock.Lag), sim)
		carried := time.Duration(0)
		for range 40 {
			// The simulator gains 100 ms a window at 100× and nothing at or below 12.5×: less
			// than an eighth of the bound a window, however fast.
			gain := time.Duration(float64(100*time.Millisecond) * max(0, clk.Speedup()-12.5) / 87.5)
			carried += gain
			sim.gained = gain
			sim.lag.Record(carried)
			p.Step()
		}
		assert.LessOrEqual(t, carried, 2*time.Second, "the carried lateness stopped growing near the bound")
		assert.LessOrEqual(t, clk.Speedup(), 25.0, "the clock slowed to where the simulator gains next to nothing")
	})
}

// Run ends with its context, having stepped once per window of wall time.
func TestMaxPaceRunsPerWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.Adjustable(10)
		require.NoError(t, err)
		p := NewMaxPace(clk, time.Second, new(clock.Lag), nil)
		ctx, stop := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { p.Run(ctx); close(done) }()
		time.Sleep(10*maxPaceWindow + maxPaceWindow/2) // wall time, virtual in the bubble
		stop()
		<-done
		assert.Len(t, p.perWindow, 10, "one step per window, whatever the speedup became")
		assert.Greater(t, clk.Speedup(), 10.0, "no lag: faster")
	})
}

// At --speedup max the diagnosis scenarios reach the verdicts they reach at a fixed speedup:
// in a bubble nothing lags, so the controller raises the rate window after window, and every
// wait armed across those changes must still end at its simulated time. The ocbrowse-sized
// ones but the deadlock are left to TestDiagnosisScenarios and
// scripts/speedup-max-scenarios.sh.
func TestDiagnosisScenariosAtSpeedupMax(t *testing.T) {
	for _, sc := range append(scenarios, honestScenarios...) {
		if sc.heavy && sc.name != "long-context-wedge, 30 slots" {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			if sc.heavy && raceDetector() {
				t.Skip("an ocbrowse-sized run takes 10–30 s under the race detector; run without -race")
			}
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				c := sc.sim
				c.adaptive, c.speedup = true, 20
				res, _ := runSim(t, t.Context(), c)
				require.NotNil(t, res.SpeedupAchieved, "a --speedup max run records its speedup")
				if res.WallSeconds > 2*maxPaceWindow.Seconds() { // long enough for the controller to act
					assert.Greater(t, res.SpeedupAchieved.Max, 20.0, "nothing lags in a bubble: the controller speeds up")
				}
				assert.Equal(t, sc.kind, res.Verdict.Kind, "verdict %s: %s", res.Verdict.Kind, res.Verdict.Summary)
			})
		})
	}
}

// A --speedup max run's results.json says what reproduces it: --speedup max, the median rate it
// held and the range, not the 20× it started at — which config.yaml, written at the start,
// keeps.
func TestMaxRunReproduces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rp := &results.Reproduction{Server: results.Embedded,
			Simulator: &results.SimulatorSettings{Profile: "dsv4-pd", Speedup: 20, SpeedupMax: true}}
		res, _ := runSim(t, t.Context(), simCase{workload: "smoke", adaptive: true, speedup: 20, reproduce: rp})
		a := res.SpeedupAchieved
		require.NotNil(t, a)
		sim := res.Reproduce.Simulator
		assert.True(t, sim.SpeedupMax)
		assert.Equal(t, a.Median, sim.Speedup)
		assert.Equal(t, &results.SpeedupRange{Min: a.Min, Median: a.Median, Max: a.Max}, sim.Achieved)
		assert.Equal(t, 20.0, rp.Simulator.Speedup, "the reproduction config.yaml holds is the run's start")
		assert.Nil(t, rp.Simulator.Achieved)
	})
}
