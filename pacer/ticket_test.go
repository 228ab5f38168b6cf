package pacer

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
)

// Ticket{2 tickets, 1 rps}: tickets come at 1 s and 2 s; a third agent then waits while the
// issuer is blocked with every ticket held (the "pacer can't issue" hang), until a release
// lets it issue again. Close ends the issuer goroutine and the waiting.
func TestTicketIssuerBlocksWhenAllHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		start := clk.Now()
		p, err := New(Config{Kind: "ticket", Slots: 2, RPS: 1}, clk)
		require.NoError(t, err)
		tk := p.(*Ticket)

		a, err := tk.Acquire(t.Context(), Demand{Agent: 0})
		require.NoError(t, err)
		assert.Equal(t, time.Second, since(start, a), "first ticket")
		b, err := tk.Acquire(t.Context(), Demand{Agent: 1})
		require.NoError(t, err)
		assert.Equal(t, 2*time.Second, since(start, b), "second ticket")

		c := goAcquire(t.Context(), tk, 2)
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		assert.True(t, tk.issuerBlocked(), "issuer blocked with both tickets held")
		s := assertCounts(t, tk, 2, 1, 2, 0, 0)
		assert.Equal(t, 10*time.Minute, s.LongestWait, "LongestWait")
		assert.Equal(t, 2, s.Limit, "Limit")

		a.Release(Outcome{Latency: 10 * time.Minute})
		r := <-c
		require.NoError(t, r.err)
		assert.Equal(t, 2*time.Second+10*time.Minute, since(start, r.p),
			"the returned ticket is issued at once: a tick was pending")

		d := goAcquire(t.Context(), tk, 3)
		synctest.Wait()
		require.NoError(t, tk.Close())
		assert.ErrorIs(t, (<-d).err, ErrClosed, "a waiter when the ticket pacer closes")
		_, err = tk.Acquire(t.Context(), Demand{Agent: 4})
		assert.ErrorIs(t, err, ErrClosed, "Acquire after Close")
		require.NoError(t, tk.Close(), "Close twice")
		select {
		case <-tk.done:
		default:
			t.Fatal("issuer goroutine still running after Close")
		}
		b.Release(Outcome{}) // releasing after Close does not block
		r.p.Release(Outcome{})
		assertCounts(t, tk, 0, 0, 3, 3, 0)
	})
}

// Unclaimed tickets pile up to the channel's capacity, then the issuer waits.
func TestTicketIssuesUpToCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		tk := mustNew(t, Config{Kind: "ticket", Slots: 3, RPS: 2}, clk).(*Ticket)
		time.Sleep(time.Minute)
		assert.Len(t, tk.issued, 3, "issued tickets after a minute")
		start := clk.Now()
		for i := range 3 {
			pm, err := tk.Acquire(t.Context(), Demand{Agent: i})
			require.NoError(t, err)
			assert.Equal(t, start, pm.AcquiredAt, "ticket %d was waiting", i)
			pm.Release(Outcome{})
		}
	})
}

// A closed Ticket refuses every Acquire, even with unclaimed tickets still in the channel.
func TestTicketClosedRefusesIssuedTickets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tk := mustNew(t, Config{Kind: "ticket", Slots: 8, RPS: 8}, clock.Real()).(*Ticket)
		time.Sleep(time.Minute)
		require.Len(t, tk.issued, 8, "issued tickets after a minute")
		require.NoError(t, tk.Close())
		for i := range 8 {
			pm, err := tk.Acquire(t.Context(), Demand{Agent: i})
			assert.ErrorIs(t, err, ErrClosed, "Acquire %d after Close", i)
			assert.Nil(t, pm, "Acquire %d after Close", i)
		}
		assertCounts(t, tk, 0, 0, 0, 0, 0)
	})
}
