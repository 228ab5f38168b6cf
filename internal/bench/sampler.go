package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/scrape"
)

// scrapeTimeout bounds one scrape of every /metrics URL, in wall time.
const scrapeTimeout = 2 * time.Second

// sampleUntil samples at once and then every sample interval until done is closed, printing
// each sample (outside a sweep) and appending it to samples.jsonl and to p. The first sample
// of the run is preceded by the server-metrics line.
func (b *bench) sampleUntil(done <-chan struct{}, p *Point) {
	t := b.o.Clock.NewTicker(b.o.SampleInterval)
	defer t.Stop()
	for {
		s := b.sample(p)
		if !b.shown {
			fmt.Fprintln(b.o.Out, b.scraper.Found())
			b.shown = true
		}
		if !b.o.Sweep {
			fmt.Fprintln(b.o.Out, SampleLine(s.TS-p.Start.Sub(b.start).Seconds(), s))
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

// sample scrapes the server and reads the client's streams at one instant.
func (b *bench) sample(p *Point) events.Sample {
	now := b.o.Clock.Now()
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	server := b.scraper.Scrape(ctx)
	cancel()
	v := look(p.streams, now)
	s := events.Sample{
		TS: now.Sub(b.start).Seconds(), Wall: b.o.Clock.WallNow().UTC().Format(time.RFC3339Nano),
		ServerErrors: server.Errors, InFlight: v.inFlight, OldestSilenceS: v.oldestSilenceS,
		TokensOut: v.tokensOut, ChunksIn: v.chunksIn,
	}
	if len(server.Gauges) > 0 {
		s.Server = server.Gauges
	}
	p.Samples = append(p.Samples, s)
	if b.samples != nil {
		b.samples.Write(s)
	}
	return s
}

// lineGauges are the server gauges a sample line shows, in order, with their formats.
var lineGauges = []struct{ name, format string }{
	{scrape.DecodeRunning, "%.1f"}, {scrape.PrefillInflight, "%.1f"},
	{scrape.Queued, "%.1f"}, {scrape.KVUsage, "%.3f"},
}

// SampleLine renders a sample at tS simulated seconds into its test in the incident's shape,
// "t= 2.3s decode_running=16.0 prefill_inflight=16.0", followed by queued and kv_usage (a
// fraction 0–1) when the server has them. When the server exposes none of these gauges the
// line shows the client's view instead: "t= 2.3s in_flight=16 chunks=412".
func SampleLine(tS float64, s events.Sample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "t=%4.1fs", tS)
	shown := 0
	for _, g := range lineGauges {
		if v, ok := s.Server[g.name]; ok {
			fmt.Fprintf(&b, " %s="+g.format, g.name, v)
			shown++
		}
	}
	if shown == 0 {
		fmt.Fprintf(&b, " in_flight=%d chunks=%d", s.InFlight, s.ChunksIn)
	}
	return b.String()
}
