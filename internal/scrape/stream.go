package scrape

import dto "github.com/prometheus/client_model/go"

// The stream chunk counters and settings agentsim's simulator serves on /metrics
// (simserver/metrics.go; docs/engine.md §1), read as-is at every scrape. Other servers have
// none of them.
const (
	StreamChunks    = "agentsim_stream_chunks_total"           // chunks carrying tokens
	StreamTokens    = "agentsim_stream_chunk_tokens_total"     // tokens those chunks carried
	StreamBehind    = "agentsim_stream_chunks_behind_total"    // chunks written with more tokens waiting
	StreamCoalesced = "agentsim_stream_chunks_coalesced_total" // chunks above the stream interval
	StreamInterval  = "agentsim_stream_interval_tokens"        // tokens a chunk carries
	StreamCoalesce  = "agentsim_stream_coalesce_tokens"        // most tokens a chunk carries when behind
)

// streamCounters are the counters whose growth over a run Stream reports; streamMetrics adds
// the settings.
var (
	streamCounters = []string{StreamChunks, StreamTokens, StreamBehind, StreamCoalesced}
	streamMetrics  = append(append([]string(nil), streamCounters...), StreamInterval, StreamCoalesce)
)

// streamSeen is what one URL showed of the stream metrics: at the first scrape that had any,
// and at the latest.
type streamSeen struct {
	first, last map[string]float64
}

// Stream is a server's own account of the stream chunks it wrote between the first scrape that
// showed its stream metrics and the latest one, summed over the URLs: Counters maps each of
// StreamChunks, StreamTokens, StreamBehind and StreamCoalesced to its growth (from zero after
// a reset), Interval and Coalesce are the latest StreamInterval and StreamCoalesce, in tokens.
type Stream struct {
	Counters           map[string]float64
	Interval, Coalesce float64
}

// noteStream remembers the stream metrics among one URL's families, if it has any.
func (s *Scraper) noteStream(url string, families map[string]*dto.MetricFamily) {
	seen := map[string]float64{}
	for _, name := range streamMetrics {
		if mf, ok := families[name]; ok {
			if v, ok := familyValue(mf, ""); ok {
				seen[name] = v
			}
		}
	}
	if len(seen) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stream[url] == nil {
		s.stream[url] = &streamSeen{first: seen}
	}
	s.stream[url].last = seen
}

// Stream returns the server's own stream account over the scrapes so far; false when no URL
// showed the stream chunk counters (any server but agentsim's simulator).
func (s *Scraper) Stream() (Stream, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Stream{Counters: map[string]float64{}}
	found := false
	for _, seen := range s.stream {
		if _, ok := seen.last[StreamChunks]; !ok {
			continue
		}
		found = true
		for _, name := range streamCounters {
			grown := seen.last[name] - seen.first[name]
			if grown < 0 { // the server restarted: its counters began again from zero
				grown = seen.last[name]
			}
			out.Counters[name] += grown
		}
		out.Interval = max(out.Interval, seen.last[StreamInterval])
		out.Coalesce = max(out.Coalesce, seen.last[StreamCoalesce])
	}
	return out, found
}
