package pacer

import (
	"context"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

// 30 agents × 20 rounds on every kind, with random deadlines on Acquire and random latencies
// and outcomes: the bookkeeping stays exact at every sample (Acquired = Released + InUse,
// Held lists InUse permits, fixed-slot designs never exceed their limit), and at the end
// nothing is held or waiting.
func TestStatsStayExactUnderLoad(t *testing.T) {
	for _, cfg := range validConfigs() {
		synctest.Test(t, func(t *testing.T) {
			p := mustNew(t, cfg, clock.Real())
			stop := make(chan struct{})
			var samplers sync.WaitGroup
			samplers.Go(func() { sampleInvariants(t, p, cfg, stop) })
			var agents sync.WaitGroup
			for i := range 30 {
				agents.Go(func() { runAgent(t.Context(), p, i) })
			}
			agents.Wait()
			close(stop)
			samplers.Wait()
			s := p.Stats()
			assert.Equal(t, [3]int{0, 0, 0}, [3]int{s.InUse, s.Waiting, s.Leaked}, "%v: [InUse Waiting Leaked] at the end", p)
			assert.Equal(t, s.Acquired, s.Released, "%v: Acquired vs Released at the end", p)
			assert.Positive(t, s.Acquired, "%v: Acquired", p)
			if c, ok := p.(io.Closer); ok {
				assert.NoError(t, c.Close())
			}
		})
	}
}

func runAgent(ctx context.Context, p Pacer, agent int) {
	rng := rand.New(rand.NewPCG(uint64(agent), 7))
	kinds := []events.RequestOutcome{events.RequestSuccess, events.RequestSuccess, events.RequestSuccess, events.RequestTimeout,
		events.RequestError, events.RequestCancelled}
	for range 20 {
		actx, cancel := context.WithTimeout(ctx, time.Duration(rng.IntN(5000))*time.Millisecond)
		pm, err := p.Acquire(actx, Demand{Agent: agent, PromptTokens: 500, ExpectedOutputTokens: 500})
		cancel()
		if err != nil {
			continue
		}
		latency := time.Duration(rng.IntN(3000)) * time.Millisecond
		time.Sleep(latency)
		pm.Release(Outcome{Kind: kinds[rng.IntN(len(kinds))], Latency: latency})
		if rng.IntN(4) == 0 {
			pm.Release(Outcome{}) // a stray second release must change nothing
		}
	}
}

func sampleInvariants(t *testing.T, p Pacer, cfg Config, stop <-chan struct{}) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		s := p.Stats()
		if s.Acquired != s.Released+s.InUse || len(s.Held) != s.InUse {
			t.Errorf("%v.Stats() = Acquired %d, Released %d, InUse %d, len(Held) %d",
				p, s.Acquired, s.Released, s.InUse, len(s.Held))
			return
		}
		if fixed := cfg.Kind == "slots" || cfg.Kind == "slots+rate" || cfg.Kind == "ticket"; fixed && s.InUse > s.Limit {
			t.Errorf("%v.Stats(): InUse %d > Limit %d", p, s.InUse, s.Limit)
			return
		}
	}
}
