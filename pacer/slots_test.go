package pacer

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

// 30 agents on Slots{16}: 16 acquire at once, the rest queue in arrival order, and each
// release admits exactly the oldest waiter.
func TestSlotsThirtyAgentsSixteenSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		start := clk.Now()
		p := mustNew(t, Config{Kind: "slots", Slots: 16}, clk)
		results := make([]<-chan result, 30)
		for i := range results {
			results[i] = goAcquire(t.Context(), p, i)
			synctest.Wait() // agent i is granted or queued before agent i+1 arrives
		}
		held := make([]*Permit, 0, 30)
		for i := range 16 {
			r := <-results[i]
			require.NoError(t, r.err, "agent %d", i)
			assert.Equal(t, time.Duration(0), since(start, r.p), "agent %d acquired at", i)
			held = append(held, r.p)
		}
		s := assertCounts(t, p, 16, 14, 16, 0, 0)
		assert.Equal(t, 16, s.Limit, "Stats().Limit")

		time.Sleep(10 * time.Second)
		assert.Equal(t, 10*time.Second, p.Stats().LongestWait, "LongestWait after 10 s")

		// Each release admits the next agent in arrival order, at the simulated release time.
		for next := 16; next < 30; next++ {
			held[0].Release(Outcome{Latency: 10 * time.Second})
			held = held[1:]
			r := <-results[next]
			require.NoError(t, r.err, "agent %d", next)
			assert.Equal(t, next, r.p.Agent, "the oldest waiter goes first")
			assert.Equal(t, 10*time.Second, since(start, r.p), "agent %d acquired at", next)
			held = append(held, r.p)
		}
		s = assertCounts(t, p, 16, 0, 30, 14, 0)
		assert.Equal(t, time.Duration(0), s.LongestWait, "LongestWait with nobody waiting")
		assert.Equal(t, []uint64{15, 16, 17}, []uint64{s.Held[0].PermitID, s.Held[1].PermitID, s.Held[2].PermitID}, "Held is oldest first")
		for _, h := range held {
			h.Release(Outcome{})
		}
		assertCounts(t, p, 0, 0, 30, 30, 0)
	})
}

// A waiter cancelled by its context returns ctx.Err() at once, holds nothing, and the stats
// stay exact; a deadline does the same in simulated time.
func TestSlotsCancelWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		p := mustNew(t, Config{Kind: "slots", Slots: 1}, clk)
		hold, err := p.Acquire(t.Context(), Demand{Agent: 0})
		require.NoError(t, err)

		ctx, cancel := context.WithCancel(t.Context())
		waiter := goAcquire(ctx, p, 1)
		synctest.Wait()
		time.Sleep(3 * time.Second)
		s := assertCounts(t, p, 1, 1, 1, 0, 0)
		assert.Equal(t, 3*time.Second, s.LongestWait, "LongestWait")
		cancel()
		r := <-waiter
		assert.ErrorIs(t, r.err, context.Canceled, "Acquire after cancel")
		assert.Nil(t, r.p, "no permit on cancel")
		assertCounts(t, p, 1, 0, 1, 0, 0)

		start := clk.Now()
		dctx, dcancel := clk.WithTimeout(t.Context(), 5*time.Second)
		defer dcancel()
		_, err = p.Acquire(dctx, Demand{Agent: 2})
		assert.ErrorIs(t, err, context.DeadlineExceeded, "Acquire with a 5 s deadline")
		assert.Equal(t, 5*time.Second, clk.Since(start), "gave up after")
		assertCounts(t, p, 1, 0, 1, 0, 0)

		hold.Release(Outcome{})
		pm, err := p.Acquire(t.Context(), Demand{Agent: 3})
		require.NoError(t, err, "the slot came back")
		pm.Release(Outcome{})
		assertCounts(t, p, 0, 0, 2, 2, 0)

		_, err = p.Acquire(ctx, Demand{}) // ctx already cancelled, slot free
		assert.ErrorIs(t, err, context.Canceled, "Acquire with a done ctx")
	})
}

// Releasing twice counts once: the second call must not free a slot someone else holds.
func TestReleaseTwiceIsNoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := mustNew(t, Config{Kind: "slots", Slots: 1}, clock.Real())
		a, err := p.Acquire(t.Context(), Demand{Agent: 0})
		require.NoError(t, err)
		a.Release(Outcome{})
		a.Release(Outcome{})
		assertCounts(t, p, 0, 0, 1, 1, 0)
		b, err := p.Acquire(t.Context(), Demand{Agent: 1})
		require.NoError(t, err)
		a.Release(Outcome{}) // a stale permit: must not free b's slot
		ctx, cancel := context.WithCancel(t.Context())
		c := goAcquire(ctx, p, 2)
		synctest.Wait()
		assertCounts(t, p, 1, 1, 2, 1, 0)
		cancel()
		assert.ErrorIs(t, (<-c).err, context.Canceled)
		b.Release(Outcome{})
	})
}

// doneHook is a context whose Done channel is produced by a hook, run once when the waiter's
// select first asks for it — after the waiter is queued and before it blocks — so a test can
// grant the waiter and cancel it at the same instant.
type doneHook struct {
	context.Context
	once sync.Once
	hook func()
	done chan struct{}
}

func (d *doneHook) Done() <-chan struct{} {
	d.once.Do(func() { d.hook(); close(d.done) })
	return d.done
}

func (d *doneHook) Err() error {
	select {
	case <-d.done:
		return context.Canceled
	default:
		return nil
	}
}

// A waiter that is granted and cancelled at the same instant either keeps the slot or hands it
// to the next waiter: the slot is never lost. Both branches of the select are exercised.
func TestSemaphoreGrantAndCancelTogether(t *testing.T) {
	var kept, handedOn int
	for range 200 {
		s := &semaphore{limit: 1, held: 1}
		second := make(chan error, 1)
		ctx := &doneHook{Context: context.Background(), done: make(chan struct{})}
		ctx.hook = func() {
			go func() { second <- s.acquire(context.Background()) }()
			for queued(s) < 2 {
				runtime.Gosched()
			}
			s.release(Outcome{}) // grants the first waiter, whose ctx is about to be done too
		}
		err := s.acquire(ctx)
		if err == nil {
			kept++
			s.release(Outcome{})
		} else {
			handedOn++
			require.ErrorIs(t, err, context.Canceled)
		}
		require.NoError(t, <-second, "the second waiter got the slot")
		s.release(Outcome{})
		require.Equal(t, 0, s.inUse(), "slots held after both waiters are done")
		require.Equal(t, 0, queued(s), "waiters queued")
	}
	assert.Positive(t, kept, "times the grant won")
	assert.Positive(t, handedOn, "times the cancellation won and handed the slot on")
}

func queued(s *semaphore) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queue.n
}

// A release grants the oldest waiter at once; until that waiter runs, Stats counts it as
// granted, so nobody mistakes the moment for a lost wake-up. Once it runs, it holds the permit.
func TestSlotsCountAGrantBeforeTheWaiterRuns(t *testing.T) {
	s := &semaphore{limit: 1, held: 1}
	w := &semWaiter{ready: make(chan struct{})}
	w.link.v = w
	s.queue.pushBack(&w.link)
	s.release(Outcome{Kind: events.RequestSuccess})
	assert.Equal(t, 1, s.pendingGrants(), "granted, not yet run")
	assert.Equal(t, 1, s.held)
	select {
	case <-w.ready:
	default:
		t.Fatal("the waiter was not woken")
	}

	synctest.Test(t, func(t *testing.T) {
		p := mustNew(t, Config{Kind: "slots", Slots: 1}, clock.Real())
		first, err := p.Acquire(t.Context(), Demand{Agent: 0})
		require.NoError(t, err)
		second := goAcquire(t.Context(), p, 1)
		synctest.Wait()
		st := p.Stats()
		assert.Equal(t, [3]int{1, 1, 0}, [3]int{st.InUse, st.Waiting, st.Granted}, "in use, waiting, granted while queued")
		first.Release(Outcome{Kind: events.RequestSuccess})
		synctest.Wait()
		st = p.Stats()
		assert.Equal(t, [3]int{1, 0, 0}, [3]int{st.InUse, st.Waiting, st.Granted}, "in use, waiting, granted once it ran")
		r := <-second
		require.NoError(t, r.err)
		r.p.Release(Outcome{Kind: events.RequestSuccess})
	})
}
