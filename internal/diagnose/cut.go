package diagnose

import (
	"fmt"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/rundir"
)

// WarningPrefix starts an evidence line that warns about the record itself rather than
// the run (an events.jsonl cut short): the line comes first, and commands repeat it on stderr.
const WarningPrefix = "warning: "

// cutSlackS is how far, in simulated seconds, samples.jsonl may run past the last event of
// events.jsonl before a gap in the events can mean a cut file: the two files are flushed
// independently, once a second, so a killed run's samples can be a little ahead.
const cutSlackS = 10

// cutFile tells whether events.jsonl ends long before samples.jsonl with work the samples saw
// and the events lack — a cut or truncated events file, not a quiet run — and if so returns
// the time of its last event (the time up to which the files agree) and a warning saying so.
//
// A quiet stretch alone proves nothing: a hung run records no event for as long as it hangs
// while its samples go on. But every request that completes adds its output tokens to the
// samples' tokens_out and records a terminal event with its completion_tokens, and every
// permit acquired counts in the samples' pacer and records a pacer_acquired event. Samples
// well past the last event that count more of either than the whole events file holds saw
// events the file lost.
func cutFile(evs []events.Event, samples []events.Sample) (cutS float64, warning string, cut bool) {
	if len(evs) == 0 || len(samples) == 0 {
		return 0, "", false
	}
	var lastEv float64
	var tokens, acquired int64
	for _, e := range evs {
		lastEv = max(lastEv, e.TS)
		switch {
		case e.Kind.Terminal():
			tokens += int64(e.CompletionTokens)
		case e.Kind == events.PacerAcquired:
			acquired++
		}
	}
	var last events.Sample
	for _, s := range samples {
		if s.TS >= last.TS {
			last = s
		}
	}
	if last.TS <= lastEv+cutSlackS {
		return 0, "", false
	}
	var lost []string
	if last.TokensOut > tokens {
		lost = append(lost, fmt.Sprintf("%d output tokens of completed requests (the events hold %d)", last.TokensOut, tokens))
	}
	if last.Pacer != nil && last.Pacer.Acquired > acquired {
		lost = append(lost, fmt.Sprintf("%d permits acquired (the events hold %d)", last.Pacer.Acquired, acquired))
	}
	if len(lost) == 0 {
		return 0, "", false
	}
	what := lost[0]
	if len(lost) > 1 {
		what += " and " + lost[1]
	}
	return lastEv, fmt.Sprintf(WarningPrefix+"%s is cut: its events end at t=%s but %s runs to t=%s and counts %s; "+
		"this verdict judges only the first %s, where both files agree", rundir.Events, secs(lastEv), rundir.Samples, secs(last.TS), what, secs(lastEv)), true
}
