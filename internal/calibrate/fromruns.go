package calibrate

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/internal/rundir"
)

// Recorded is one completed request of a recorded run (run, replay, record --watch): its
// send, first token and end in seconds of the run, agentsim's estimate of its prompt and the
// server's usage.
type Recorded struct {
	Start, First, End             float64
	Estimate, Prompt, Cached, Out int
}

// ReadRuns reads the completed requests of run directories (their events.jsonl).
func ReadRuns(dirs []string) ([]Recorded, error) {
	var out []Recorded
	for i, dir := range dirs {
		evs, err := rundir.ReadEvents(dir)
		if err != nil {
			return nil, fmt.Errorf("recorded run %s: %w", dir, err)
		}
		sent := map[string]events.Event{}
		for _, e := range evs {
			switch e.Kind {
			case events.RequestSent:
				sent[e.Request] = e
			case events.Done:
				s, ok := sent[e.Request]
				if !ok || e.TTFTS <= 0 || e.LatencyS <= 0 {
					continue
				}
				// Runs are kept apart on the time axis: their requests never overlap.
				shift := float64(i) * 1e7
				out = append(out, Recorded{Start: shift + s.TS, First: shift + s.TS + e.TTFTS, End: shift + s.TS + e.LatencyS,
					Estimate: s.ContextTokens, Prompt: e.PromptTokens, Cached: e.CachedTokens, Out: e.CompletionTokens})
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("recorded runs %v: no completed request", dirs)
	}
	return out, nil
}

// FitRuns fits what recorded traffic identifies: the tokenizer ratio from usage, the decode
// step from the requests' decode at the batches and contexts the traffic had, the prefill
// from requests that ran alone; it names what the traffic could not identify.
func FitRuns(reqs []Recorded, base *engine.Profile) *Fit {
	p := *base
	f := &Fit{Profile: &p, Evidence: "none: recorded traffic has no interference probe"}
	ratio := f.recordedRatio(reqs)
	rows := recordedDecode(reqs, ratio)
	if len(rows) > 0 {
		bs, ks := make([]float64, len(rows)), make([]float64, len(rows))
		for i, r := range rows {
			bs[i], ks[i] = r.b, r.k
		}
		f.Notes = append(f.Notes, fmt.Sprintf("recorded decode covered batches %.0f–%.0f and KV %.0f–%.0f tokens: terms beyond them are not identified",
			slices.Min(bs), slices.Max(bs), slices.Min(ks), slices.Max(ks)))
		if slices.Max(bs)-slices.Min(bs) < 2 {
			f.Notes = append(f.Notes, "decode_per_seq: the batch hardly varied, so it cannot be told from decode_base")
		}
	}
	f.decodeFrom(rows)
	f.prefill(aloneData(reqs, ratio), ratio, p.PrefillChunkTokens)
	for _, k := range []string{"engine", "max_running", "prefix_cache_tokens", "kv_capacity_tokens, kv_full", "max_context_tokens", "transfer_serial"} {
		f.kept(k, "recorded traffic has no designed probe of it")
	}
	return f
}

// recordedRatio fits tokenizer_ratio from the recorded usage.
func (f *Fit) recordedRatio(reqs []Recorded) float64 {
	var sum, est float64
	n := 0
	for _, r := range reqs {
		if r.Prompt > 0 && r.Estimate > 0 {
			sum, est, n = sum+float64(r.Prompt), est+float64(r.Estimate), n+1
		}
	}
	if n == 0 {
		f.kept("tokenizer_ratio", "the recorded requests carry no usage or no estimate")
		return max(f.Profile.TokenizerRatio, 1)
	}
	r := sum / est
	f.Profile.TokenizerRatio = round(r, 4)
	f.fitted("tokenizer_ratio", fmt.Sprintf("%.4f", r), "-", fmt.Sprintf("usage over %d recorded requests", n))
	return r
}

// recordedDecode reads each request's decode: its time per token after the first, at the
// batch and KV of the requests decoding beside it, averaged over its decode. The mean of a step
// linear in B and K is the step at their means, so the averages keep the fit unbiased where
// the batch at one instant would blur its slope.
func recordedDecode(reqs []Recorded, ratio float64) []decodeRow {
	var rows []decodeRow
	for _, r := range reqs {
		if r.Out < 8 || r.End <= r.First {
			continue
		}
		span := r.End - r.First
		b, k := 0.0, 0.0
		for _, o := range reqs {
			lo, hi := math.Max(o.First, r.First), math.Min(o.End, r.End)
			if hi <= lo || o.End <= o.First {
				continue
			}
			share := (hi - lo) / span
			// o's KV grows from its prompt by its output, evenly over its decode.
			mid := (lo + hi) / 2
			b += share
			k += share * (recordedPrompt(o, ratio) + float64(o.Out)*(mid-o.First)/(o.End-o.First))
		}
		rows = append(rows, decodeRow{exp: ExpRecorded, point: len(rows), b: b, k: k, step: span / float64(r.Out-1)})
	}
	return rows
}

// recordedPrompt is a recorded request's prompt in server tokens.
func recordedPrompt(r Recorded, ratio float64) float64 {
	if r.Prompt > 0 {
		return float64(r.Prompt)
	}
	return float64(r.Estimate) * ratio
}

// aloneData turns the requests that had the server to themselves from send to first token
// into prompt-length points of their uncached prompt, for the prefill fit.
func aloneData(reqs []Recorded, ratio float64) *Data {
	d := &Data{}
	base := time.Unix(0, 0)
	at := func(s float64) time.Time { return base.Add(time.Duration(s * 1e9)) }
	for i, r := range reqs {
		alone := true
		for j, o := range reqs {
			if i != j && o.Start < r.First && o.End > r.Start {
				alone = false
				break
			}
		}
		if !alone {
			continue
		}
		uncached := int(math.Max(recordedPrompt(r, ratio)-float64(r.Cached), 1))
		o := Obs{Start: at(r.Start), Chunks: []time.Time{at(r.First)}, Done: at(r.End), PromptTokens: uncached, CompletionTokens: r.Out}
		d.Points = append(d.Points, Measured{Point: Point{Exp: ExpPrompt, Batch: 1, Prompt: uncached}, Runs: [][]Obs{{o}}})
	}
	return d
}
