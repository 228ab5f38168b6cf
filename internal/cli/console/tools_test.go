package console

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/results"
)

// TestSummaryToolsLine: the summary has a tools line when tools were called, none otherwise.
func TestSummaryToolsLine(t *testing.T) {
	r := &results.Results{Command: "run", Workload: "coding-agent", Tools: &results.Tools{Calls: 12, PlannedCalls: 2, ModelSteps: 8,
		PlannedSteps: 2, Seconds: 42.5, StepsPerTask: results.Summary{N: 3, Mean: 4, P50: 3, P99: 7},
		PerTool: map[string]results.ToolStats{
			"read": {Calls: 7, Seconds: results.Summary{P50: 0.3, P99: 2}},
			"grep": {Calls: 5, Seconds: results.Summary{P50: 0.05, P99: 14}},
		}}}
	var b bytes.Buffer
	PrintSummary(&b, r, "runs/x")
	assert.Contains(t, b.String(), "  tools         12 calls (2 planned), 42 s in tools; steps: 8 by the model, 2 planned; 4.0 model calls per task (p50 3.0, p99 7.0, 3 tasks)\n"+
		"                read 7 (p50 0.3 s, p99 2.0 s), grep 5 (p50 50.0 ms, p99 14 s)\n")
	r.Tools = nil
	b.Reset()
	PrintSummary(&b, r, "runs/x")
	assert.NotContains(t, b.String(), "tools")
}
