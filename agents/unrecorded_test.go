package agents

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/pacer"
	"github.com/agentsim/agentsim/workloads"
)

// heldRecorder holds the agent that records an event of kind hold until free is closed,
// as a scheduler holds an agent descheduled between two statements.
type heldRecorder struct {
	hold       events.Kind
	held, free chan struct{}
}

func (r *heldRecorder) Record(e events.Event) {
	if e.Kind == r.hold {
		close(r.held)
		<-r.free
	}
}

// An agent that has returned its permit to the pacer and not yet recorded it is an operation
// under way: the pacer counts the permit free while no event says so, and a sample read
// around it finds it in Unrecorded — until the event is recorded.
func TestUnrecordedPacerOps(t *testing.T) {
	for _, kind := range []events.Kind{events.PacerAcquired, events.Release} {
		synctest.Test(t, func(t *testing.T) {
			clk, err := clock.New(1)
			require.NoError(t, err)
			p, err := pacer.New(pacer.Config{Kind: pacer.KindSlots, Slots: 1}, clk)
			require.NoError(t, err)
			rec := &heldRecorder{hold: kind, held: make(chan struct{}), free: make(chan struct{})}
			var w workloads.Workload
			env := &Env{Clock: clk, Pacer: p, Workload: &w, Recorder: rec, Board: NewBoard(1, clk.Now()), Calibration: NewCalibration()}
			a := NewAgent(0, env)
			go func() {
				permit, ok := a.acquire(t.Context(), 1, 10, 10)
				if ok {
					a.release(1, permit, &Result{})
				}
			}()
			<-rec.held
			recorded := env.Board.Recorded()
			st := p.Stats()
			u := Unrecorded(recorded, env.Board.Begun())
			if kind == events.Release {
				assert.Equal(t, 0, st.InUse, "the pacer has its permit back")
				assert.Equal(t, Changes{Releases: 1}, u, "the release is under way")
			} else {
				assert.Equal(t, 1, st.InUse, "the pacer has issued the permit")
				assert.Equal(t, Changes{Acquires: 1}, u, "the acquisition is under way")
			}
			close(rec.free)
			synctest.Wait()
			assert.Equal(t, Changes{}, Unrecorded(env.Board.Recorded(), env.Board.Begun()), "recorded: none under way")
		})
	}
}
