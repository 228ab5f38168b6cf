package console

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/results"
)

// maxToolsShown is how many tools the summary's per-tool line names, those called most first.
const maxToolsShown = 5

// toolsRows renders the tools section: the calls, the steps (the model's and the planned
// ones), the time in tools and the steps per task, then the tools called most with their
// latencies. None when no tool call ended.
func toolsRows(t *results.Tools) [][2]string {
	if t == nil || t.Calls == 0 {
		return nil
	}
	line := fmt.Sprintf("%s (%d planned), %s in tools; steps: %d by the model, %d planned", plural.Of(t.Calls, "call"),
		t.PlannedCalls, results.Seconds(t.Seconds), t.ModelSteps, t.PlannedSteps)
	if s := t.StepsPerTask; s.N > 0 {
		line += fmt.Sprintf("; %.1f model calls per task (p50 %s, p99 %s, %s)", s.Mean, results.Figure(s.P50), results.Figure(s.P99),
			plural.Of(s.N, "task"))
	}
	return [][2]string{{"tools", line}, {"", perToolLine(t.PerTool)}}
}

// perToolLine names the tools called most, each with its calls and latency p50 and p99.
func perToolLine(per map[string]results.ToolStats) string {
	names := make([]string, 0, len(per))
	for name := range per {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(per[b].Calls, per[a].Calls), cmp.Compare(a, b)) })
	parts := make([]string, 0, maxToolsShown+1)
	for i, name := range names {
		if i == maxToolsShown {
			parts = append(parts, fmt.Sprintf("%d more", len(names)-i))
			break
		}
		s := per[name]
		if name == "" {
			name = "(unnamed)"
		}
		parts = append(parts, fmt.Sprintf("%s %d (p50 %s, p99 %s)", name, s.Calls, results.Seconds(s.Seconds.P50), results.Seconds(s.Seconds.P99)))
	}
	return strings.Join(parts, ", ")
}
