package harness

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withoutWall returns a JSONL file's lines (results.json: its one object) with the fields that
// read the real clock removed: each record's "wall", results.json's "wall_seconds".
func withoutWall(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if filepath.Ext(path) == ".json" {
		lines = [][]byte{b}
	}
	var out []string
	for _, line := range lines {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(line, &m), "%s", line)
		delete(m, "wall")
		delete(m, "wall_seconds")
		c, err := json.Marshal(m) // keys sorted: a stable rendering
		require.NoError(t, err)
		out = append(out, string(c))
	}
	return out
}

// In a synctest bubble, time advances only when every goroutine waits, so the same seeds
// give the same run: events.jsonl, samples.jsonl and results.json are identical apart from
// wall times.
func TestSameSeedSameEvents(t *testing.T) {
	cases := []simCase{
		{workload: "smoke", speedup: 20},
		{workload: "ocbrowse", speedup: 100, overrides: map[string]string{"rounds": "2"}},
		{workload: "ocbrowse", speedup: 100, faults: []string{"long-context-wedge"}},
		// The tool loop: parallel calls of heavy-tailed latencies, planned steps, tasks, and
		// several agents whose short tool-call replies often end at the same instant, when
		// each observes the shared words-per-token estimate (agents.Calibration).
		{workload: "coding-agent", speedup: 100, overrides: map[string]string{"agents": "3", "rounds": "12",
			"context.initial_tokens": "2000"}},
	}
	for _, c := range cases {
		t.Run(c.workload+" "+fmtFaults(c.faults), func(t *testing.T) {
			if c.workload == "ocbrowse" && raceDetector() {
				t.Skip("ocbrowse-sized: an ocbrowse-sized run takes 10–30 s under the race detector; run without -race")
			}
			files := []string{"events.jsonl", "samples.jsonl", "results.json"}
			var runs [2][][]string // per run, per file, the lines
			for i := range runs {
				synctest.Test(t, func(t *testing.T) {
					_, dir := runSim(t, t.Context(), c)
					for _, f := range files {
						runs[i] = append(runs[i], withoutWall(t, filepath.Join(dir, f)))
					}
				})
			}
			for j, f := range files {
				require.NotEmpty(t, runs[0][j], f)
				assert.Equal(t, runs[0][j], runs[1][j], "%s of two runs with the same seeds", f)
			}
		})
	}
}

func fmtFaults(f []string) string {
	if len(f) == 0 {
		return "healthy"
	}
	return f[0]
}
