package calibrate

import (
	"fmt"
	"time"

	"github.com/agentsim/agentsim/internal/engine"
)

// launchWork fits launch_per_idle_token, the scheduler's work on the slots that finished
// requests left, done as it launches the next request and before its next step
// (docs/engine.md §4: llama-server, by default, saves every idle slot to its prompt cache as
// it launches a task). The turn-after probe's turn is launched once the streams sent beside
// its first message have ended, their slots still holding what they did, and its own slot
// (its first message's) is not idle. Where the server reports its own prompt time, the
// turn's TTFT less that time and less the fitted request overhead is that work: a slope
// through 0 on the streams' tokens (prompt and output). A server that reports no prompt time
// keeps the base's value, as its TTFT cannot tell this work from the prompt's.
func (f *Fit) launchWork(d *Data) {
	const key = "launch_per_idle_token"
	p := f.Profile
	if k := p.EngineMode(); k == engine.EngineColocatedParallel || k == engine.EngineDisaggregated {
		p.LaunchPerIdleToken = 0
		f.kept(key, fmt.Sprintf("engine %s: its requests are not launched by the loop that steps them: 0", k))
		return
	}
	est := poolEstimate{exp: ExpTurnIdle, what: "TTFT less the server's prompt time of the turn", byPoint: map[int][]float64{}}
	untimed, idleMost := 0, 0
	for i, m := range d.Of(ExpTurnIdle) {
		for _, run := range m.Runs {
			turn := run[1]
			if !turn.OK() {
				continue
			}
			if turn.Server == nil || turn.Server.Computed == 0 {
				untimed++
				continue
			}
			idle := 0
			for _, s := range run[2:] {
				idle += s.PromptTokens + s.Tokens()
			}
			idleMost = max(idleMost, idle)
			est.add(i, p.Admission(turn.PromptTokens).Seconds(), (turn.TTFT() - turn.Server.Prompt).Seconds(), float64(idle))
		}
	}
	if est.n() < 2 {
		why := "no two turns after streams that had ended completed"
		if untimed > 0 {
			why = "the server reports no prompt time of its own, so a turn's TTFT cannot tell this work from its prompt's"
		}
		f.kept(key, fmt.Sprintf("%s: the base's %s kept", why, p.LaunchPerIdleToken))
		return
	}
	est.fit()
	src := fmt.Sprintf("%d turns after streams that had ended (up to %d tokens in their slots): TTFT less the server's own prompt time (timings.prompt_ms) and request_overhead",
		est.n(), idleMost)
	if !est.identified() {
		p.LaunchPerIdleToken = 0
		f.fitted(key, "0", "-", fmt.Sprintf("%s: indistinguishable from 0 (%s ± %s a token)", src,
			seconds(est.e).Round(time.Nanosecond), seconds(est.se).Round(time.Nanosecond)))
	} else {
		p.LaunchPerIdleToken = seconds(est.e).Round(time.Nanosecond)
		f.fitted(key, p.LaunchPerIdleToken.String(), seconds(est.se).Round(time.Nanosecond).String(), src)
	}
	f.Errors = append(f.Errors, est.errorAt(p.LaunchPerIdleToken.Seconds()))
}
