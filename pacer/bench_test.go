package pacer

import (
	"context"
	"testing"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

// benchConfigs never make an uncontended Acquire wait: rate-based kinds get a rate far above
// what one goroutine can consume.
var benchConfigs = []Config{
	{Kind: "unlimited"},
	{Kind: "slots", Slots: 30},
	{Kind: "rate", RPS: 1e9, Burst: 1 << 20},
	{Kind: "slots+rate", Slots: 30, RPS: 1e9, Burst: 1 << 20},
	{Kind: "aimd", InitialLimit: 20, MinLimit: 1, MaxLimit: 200, BackoffRatio: 0.9},
	{Kind: "gradient", InitialLimit: 20, MinLimit: 1, MaxLimit: 200, Tolerance: 1.5},
	{Kind: "tpm", TokensPerMinute: 1 << 40},
}

// BenchmarkAcquireRelease measures one uncontended Acquire + Release pair.
func BenchmarkAcquireRelease(b *testing.B) {
	ctx := context.Background()
	req := Demand{Agent: 1, PromptTokens: 1000, ExpectedOutputTokens: 1000}
	out := Outcome{Kind: events.RequestSuccess, Latency: time.Second}
	for _, cfg := range benchConfigs {
		b.Run(string(cfg.Kind), func(b *testing.B) {
			p := mustNew(b, cfg, clock.Real())
			b.ReportAllocs()
			for b.Loop() {
				pm, err := p.Acquire(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				pm.Release(out)
			}
		})
	}
}

// BenchmarkAcquireReleaseParallel measures Acquire + Release from GOMAXPROCS goroutines on
// Slots{30}, which never fills.
func BenchmarkAcquireReleaseParallel(b *testing.B) {
	p := mustNew(b, Config{Kind: "slots", Slots: 30}, clock.Real())
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			pm, err := p.Acquire(context.Background(), Demand{})
			if err != nil {
				b.Error(err)
				return
			}
			pm.Release(Outcome{})
		}
	})
}
