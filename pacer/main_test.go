package pacer

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentsim/agentsim/clock"
)

// TestMain fails the package if any test leaves a goroutine behind (a ticket issuer not
// closed, a waiter never woken).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// mustNew builds a pacer and closes it at the end of the test if it is an io.Closer.
func mustNew(tb testing.TB, cfg Config, clk *clock.Clock) Pacer {
	tb.Helper()
	p, err := New(cfg, clk)
	require.NoError(tb, err, "New(%+v)", cfg)
	if c, ok := p.(io.Closer); ok {
		tb.Cleanup(func() { _ = c.Close() })
	}
	return p
}

// result is what an Acquire call running in its own goroutine returned.
type result struct {
	p   *Permit
	err error
}

// goAcquire runs Acquire in a goroutine and delivers its result on the returned channel.
func goAcquire(ctx context.Context, p Pacer, agent int) <-chan result {
	ch := make(chan result, 1)
	go func() {
		pm, err := p.Acquire(ctx, Demand{Agent: agent})
		ch <- result{pm, err}
	}()
	return ch
}

// assertCounts checks the totals of a Stats snapshot and the invariant
// Acquired = Released + InUse with len(Held) = InUse.
func assertCounts(t *testing.T, p Pacer, inUse, waiting, acquired, released, leaked int) Stats {
	t.Helper()
	s := p.Stats()
	got := [5]int{s.InUse, s.Waiting, s.Acquired, s.Released, s.Leaked}
	want := [5]int{inUse, waiting, acquired, released, leaked}
	assert.Equal(t, want, got, "%v.Stats() [InUse Waiting Acquired Released Leaked]", p)
	assert.Equal(t, s.Acquired, s.Released+s.InUse, "%v.Stats(): Acquired = Released + InUse", p)
	assert.Len(t, s.Held, s.InUse, "%v.Stats().Held", p)
	return s
}

// since returns the simulated time from start to the permit's acquisition.
func since(start time.Time, p *Permit) time.Duration { return p.AcquiredAt.Sub(start) }
