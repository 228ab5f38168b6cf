package diagnose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/scrape"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// Checks holds what a run's server did against what its workload and the harness expected —
// the server's gen_tok_s against the harness's own rate, the outputs against the workload's
// lengths, the reasoning asked for, the requests refused for their length — and gives the
// run's warnings (results.json's warnings) beside its verdict. It is fed the same records as
// the Analyzer, in the same order: live by the harness as it writes them, and by FromDir from
// the files, so that `agentsim diagnose` derives the warnings the run gave. None changes a
// figure: the harness's own measurements stay the run's. Its methods are not safe for
// concurrent use.
type Checks struct {
	notes   []string // the warnings recorded before the first sample
	sampled bool     // a sample has been taken
	gauges  gaugeCheck
	refused *refusedPrompt // nil unless the workload was fitted
}

// NewChecks returns the checks of a run whose workload was fitted to a context window of
// fitWindow tokens before it started (results.json's server.fit_window); 0 when it was not.
func NewChecks(fitWindow int) *Checks {
	c := &Checks{}
	if fitWindow > 0 {
		c.refused = &refusedPrompt{window: fitWindow, est: map[string]int{}}
	}
	return c
}

// Event takes the run's next event. The warnings the harness records before its first sample
// are the notes it said before the run (the model chosen, the context window:
// harness.Prepared.Said); those after it gave while the run went (the watchdog's, the lag's),
// and results.json's warnings do not repeat them.
func (c *Checks) Event(e events.Event) {
	if e.Kind == events.Warning && e.Agent < 0 && !c.sampled {
		c.notes = append(c.notes, e.Message)
	}
	if c.refused != nil {
		c.refused.event(e)
	}
}

// Sample takes the run's next sample.
func (c *Checks) Sample(s events.Sample) {
	c.sampled = true
	c.gauges.sample(s)
}

// Warnings returns the run's warnings in results.json's order: the notes said before the run;
// then where the server's gen_tok_s contradicts the harness; where the outputs missed the
// workload's lengths (not for a replay, whose requests force their own); where the stream's
// chunking departed from the simulator's profile; where the reasoning asked for never came;
// where requests were refused for their length (unless a note said the window is too small);
// and where a replay's forced lengths were not given. r holds the run's figures (Analyzer.Fill)
// and what the harness measured of its server (results.json's server, stream.server, speedup,
// rounds.scripted, replay); w is the workload the run sent (config.yaml's).
func (c *Checks) Warnings(r *results.Results, w *workloads.Workload) []string {
	out := slices.Clone(c.notes)
	if src := scrape.SourceIn(r.Server.Metrics, events.GenTokS); src != "" {
		out = append(out, c.gauges.warning(r, src)...)
	}
	if !r.Rounds.Scripted {
		out = append(out, outputWarning(r, w)...)
	}
	out = append(out, streamWarning(r)...)
	out = append(out, reasoningWarning(r, w)...)
	if !c.contextWarned() {
		out = append(out, contextRefused(r, w, c.refused)...)
	}
	return append(out, ReplayWarnings(r.Replay)...)
}

// contextWarned reports whether a note said, before the run, that the workload does not fit
// the server's context window: a note on the window (every one the harness gives begins with
// contextNote) of a run that was not fitted to it.
func (c *Checks) contextWarned() bool {
	return c.refused == nil && slices.ContainsFunc(c.notes, func(n string) bool { return strings.HasPrefix(n, contextNote) })
}

// contextNote begins every note on the context window the harness says before a run: the fit
// made, or a window the workload does not fit (harness/prepare.go, harness/fit.go).
const contextNote = "context: "

// ReplayWarnings says where a replay's server did not give the output lengths the replay
// forced: each such request was sent its recorded output_tokens as max_tokens with
// ignore_eos, so a different length is the server's doing, and the requests that extend it
// carry the reply it gave. r is results.json's replay; nil for a run that replayed nothing.
func ReplayWarnings(r *results.Replay) []string {
	if r == nil || r.OutputMissed == 0 || r.OutputDiff == nil {
		return nil
	}
	return []string{fmt.Sprintf("output lengths: %d of the %d completed requests forced to their recorded output length (max_tokens with ignore_eos) ended at another (replay − recorded: min %+.0f, max %+.0f tokens): "+
		"the server did not honour ignore_eos, or stopped at its context window; the requests that extend them carry the replies it gave",
		r.OutputMissed, r.OutputForced, r.OutputDiff.Min, r.OutputDiff.Max)}
}
