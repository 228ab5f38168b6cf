package replay

import (
	"fmt"
	"math"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/internal/tracestats"
	"github.com/agentsim/agentsim/results"
)

// A replayed prompt counts as the recorded one within the larger of PromptToleranceShare of
// the recorded prompt and PromptToleranceTokens, either way. The replay writes prompts as text
// of the recorded length as the harness counts it (one token per word, 4 per message, 3 per
// prompt, calibrated from the server's usage; docs/trace.md §5), and a server's chat template
// frames the messages with tokens of its own: against llama.cpp's llama-server, in three
// replays of one recorded trace, the replayed prompts came out from 4 tokens under to 29 over
// the recorded ones, on prompts of 1,087 to 2,114 tokens. The exact differences are in
// prompt_tokens_diff.
const (
	PromptToleranceShare  = 0.02
	PromptToleranceTokens = 16
)

// SamePrompt reports whether a replayed prompt of got tokens counts as the recorded one of
// want tokens (PromptToleranceShare, PromptToleranceTokens).
func SamePrompt(got, want int) bool {
	tol := max(float64(PromptToleranceTokens), PromptToleranceShare*float64(want))
	return math.Abs(float64(got-want)) <= tol
}

// replayed is what the replay's events say of one turn: its last attempt.
type replayed struct {
	sentS, endS    float64
	ok             bool
	e2e, ttft      float64
	prompt, output int
	ended          bool
}

// Compare reads the replay's events.jsonl in dir and compares each turn with what the trace
// recorded: e2e and TTFT per request, token counts, concurrency over time and, in timestamps
// mode, the schedule lag.
func Compare(dir string, p *Plan) (*results.Replay, error) {
	evs, err := rundir.ReadEvents(dir)
	if err != nil {
		return nil, err
	}
	out := &results.Replay{Trace: p.Name, Mode: string(p.Mode), TimeScale: p.TimeScale,
		Sessions: len(p.Scripts), Requests: p.Requests,
		PromptToleranceShare: PromptToleranceShare, PromptToleranceTokens: PromptToleranceTokens}
	got := map[[2]int]*replayed{}
	sent := map[string]float64{}
	var lags []float64
	for _, e := range evs {
		switch {
		case e.Kind == events.RequestSent:
			sent[e.Request] = e.TS
			if e.Attempt == 0 {
				out.Sent++
				if p.Mode == Timestamps {
					lags = append(lags, e.ScheduleLagS)
				}
			}
		case e.Kind.Terminal():
			k := [2]int{e.Agent, e.Round - 1}
			r := &replayed{sentS: sent[e.Request], endS: e.TS, ended: true, ok: e.Kind == events.Done,
				e2e: e.LatencyS, ttft: e.TTFTS, prompt: e.PromptTokens, output: e.CompletionTokens}
			if prev := got[k]; prev != nil {
				r.sentS = prev.sentS // a retry: the request began with its first attempt
			}
			got[k] = r
		}
	}
	compareTurns(out, p, got)
	if len(lags) > 0 {
		s := results.Summarize(lags)
		out.ScheduleLag = &s
	}
	return out, nil
}

// compareTurns fills the per-request comparisons and the concurrency of both sides.
func compareTurns(out *results.Replay, p *Plan, got map[[2]int]*replayed) {
	var e2eO, e2eR, ttftO, ttftR, e2eRatio, ttftRatio, promptDiff, outputDiff []float64
	var ivO, ivR [][2]float64
	for i, recs := range p.Recorded {
		for k, rec := range recs {
			if rec.E2ES > 0 {
				ivO = append(ivO, [2]float64{rec.TS, rec.TS + rec.E2ES})
			}
			r := got[[2]int{i, k}]
			if r == nil || !r.ended {
				continue
			}
			ivR = append(ivR, [2]float64{r.sentS, r.endS})
			if forced := p.Scripts[i].Turns[k].OutputTokens; r.ok && forced > 0 {
				out.OutputForced++
				if r.output != forced {
					out.OutputMissed++
					outputDiff = append(outputDiff, float64(r.output-forced))
				}
			}
			if !rec.OK || !r.ok {
				continue
			}
			out.Compared++
			promptDiff = append(promptDiff, float64(r.prompt-rec.Prompt))
			// An unforced output (a reply of tool calls, whose length the live model chooses)
			// is not held against the recorded one.
			forced := p.Scripts[i].Turns[k].OutputTokens > 0
			if (!forced || r.output == rec.Output) && SamePrompt(r.prompt, rec.Prompt) {
				out.SameTokens++
			}
			e2eO, e2eR = append(e2eO, rec.E2ES), append(e2eR, r.e2e)
			e2eRatio = append(e2eRatio, r.e2e/rec.E2ES)
			if rec.TTFTS > 0 && r.ttft > 0 {
				ttftO, ttftR = append(ttftO, rec.TTFTS), append(ttftR, r.ttft)
				ttftRatio = append(ttftRatio, r.ttft/rec.TTFTS)
			}
		}
	}
	if out.Compared > 0 {
		out.E2E = &results.Sides{Original: results.Summarize(e2eO), Replay: results.Summarize(e2eR)}
		out.TTFT = &results.Sides{Original: results.Summarize(ttftO), Replay: results.Summarize(ttftR)}
		e, t, d := results.Summarize(e2eRatio), results.Summarize(ttftRatio), results.Summarize(promptDiff)
		out.E2ERatio, out.TTFTRatio, out.PromptDiff = &e, &t, &d
	}
	if len(outputDiff) > 0 {
		d := results.Summarize(outputDiff)
		out.OutputDiff = &d
	}
	out.Concurrency.Original.Mean, out.Concurrency.Original.Max = tracestats.Sweep(ivO)
	out.Concurrency.Replay.Mean, out.Concurrency.Replay.Max = tracestats.Sweep(ivR)
	if !p.Outcomes {
		out.Note = "the trace has no outcomes (no e2e_s): nothing to compare; the replay's latencies are in latency_seconds"
	} else if out.Compared == 0 {
		out.Note = "no request succeeded in both the original and the replay"
	}
}

// Lines renders the comparison for the end-of-run summary, one line each.
func Lines(r *results.Replay) []string {
	lines := []string{fmt.Sprintf("%s mode, time scale %g: %d of %d requests sent, %d sessions", r.Mode, r.TimeScale, r.Sent, r.Requests, r.Sessions)}
	if r.ScheduleLag != nil {
		l := r.ScheduleLag
		lines = append(lines, fmt.Sprintf("schedule lag p50 %s  p90 %s  p99 %s  max %s", results.Seconds(l.P50), results.Seconds(l.P90), results.Seconds(l.P99), results.Seconds(l.Max)))
	}
	c := r.Concurrency
	conc := fmt.Sprintf("concurrency mean %.1f max %d", c.Replay.Mean, c.Replay.Max)
	if c.Original.Max > 0 {
		conc += fmt.Sprintf(" (original mean %.1f max %d)", c.Original.Mean, c.Original.Max)
	}
	lines = append(lines, conc)
	if r.Compared > 0 {
		lines = append(lines,
			fmt.Sprintf("%d requests compared, %d with the recorded token counts (output exact, prompt within %g %% or %d tokens)",
				r.Compared, r.SameTokens, 100*r.PromptToleranceShare, r.PromptToleranceTokens),
			fmt.Sprintf("e2e p50 %s vs %s, p90 %s vs %s; ratio p50 %.2f p90 %.2f", results.Seconds(r.E2E.Replay.P50), results.Seconds(r.E2E.Original.P50),
				results.Seconds(r.E2E.Replay.P90), results.Seconds(r.E2E.Original.P90), r.E2ERatio.P50, r.E2ERatio.P90),
			fmt.Sprintf("ttft p50 %s vs %s, p90 %s vs %s; ratio p50 %.2f p90 %.2f", results.Seconds(r.TTFT.Replay.P50), results.Seconds(r.TTFT.Original.P50),
				results.Seconds(r.TTFT.Replay.P90), results.Seconds(r.TTFT.Original.P90), r.TTFTRatio.P50, r.TTFTRatio.P90))
		if d := r.PromptDiff; d != nil && (d.Min != 0 || d.Max != 0) {
			lines = append(lines, fmt.Sprintf("prompt tokens replay − recorded: p50 %+.0f, p90 %+.0f, min %+.0f, max %+.0f", d.P50, d.P90, d.Min, d.Max))
		}
	}
	if r.Note != "" {
		lines = append(lines, r.Note)
	}
	return lines
}
