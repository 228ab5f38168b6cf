package harness

import (
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/scrape"
	"github.com/agentsim/agentsim/results"
)

// serverStream is the server's own account of the chunks it wrote while the run scraped it,
// from the agentsim_stream_* metrics of its /metrics (agentsim's simulator, embedded or
// served); nil for a server without them.
func serverStream(s *scrape.Scraper) *results.ServerStream {
	st, ok := s.Stream()
	if !ok {
		return nil
	}
	c := st.Counters
	out := &results.ServerStream{
		Chunks: int64(c[scrape.StreamChunks]), Tokens: int64(c[scrape.StreamTokens]),
		Behind: int64(c[scrape.StreamBehind]), Coalesced: int64(c[scrape.StreamCoalesced]),
		StreamInterval: int(st.Interval), CoalesceTokens: int(st.Coalesce),
	}
	if out.Chunks > 0 {
		out.TokensPerChunk = float64(out.Tokens) / float64(out.Chunks)
	}
	return out
}

// checkStream gives the live stream warning, once, as soon as the simulator's counters show a
// chunk coalesced unasked; it returns the warning or "".
func (r *run) checkStream() string {
	if r.streamWarned {
		return ""
	}
	w := diagnose.LiveChunkingWarning(serverStream(r.scraper), r.o.Target.Kind, r.o.Clock.Speedup())
	if w == "" {
		return ""
	}
	r.streamWarned = true
	return "warning: " + w
}
