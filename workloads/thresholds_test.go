package workloads

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestThresholdsKey checks the thresholds: section: read from a workload file, replaced whole
// by --set, written to config.yaml and read back the same.
func TestThresholdsKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gated.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`name: gated
thresholds:
  e2e.p90: "<= 1.10 * baseline"
  ttft.p99: "< 30s"
  verdict: [healthy, slow]
`), 0o644))
	w, err := Load(LoadOptions{Workload: path})
	require.NoError(t, err)
	var got []string
	for _, r := range w.Thresholds.Rules() {
		got = append(got, r.String())
	}
	assert.Equal(t, []string{"ttft.p99 < 30s", "e2e.p90 <= 1.10 * baseline", "verdict in [healthy, slow]"}, got)

	data, err := w.Recorded(map[string]string{"server": "http://127.0.0.1:1"}, nil)
	require.NoError(t, err)
	back, err := LoadRecorded(data)
	require.NoError(t, err)
	assert.Equal(t, w.Thresholds, back.Thresholds, "config.yaml:\n%s", data)

	w, err = Load(LoadOptions{Workload: path, Overrides: []Override{{Key: "thresholds", Value: `{e2e.p50: "< 2s"}`, Source: "--set"}}})
	require.NoError(t, err)
	require.Len(t, w.Thresholds.Rules(), 1)
	assert.Equal(t, "e2e.p50 < 2s", w.Thresholds.Rules()[0].String())

	_, err = Load(LoadOptions{Workload: path, Overrides: []Override{{Key: "thresholds.e2e.p90", Value: "< 2s", Source: "--set"}}})
	assert.ErrorContains(t, err, `unknown key "thresholds.e2e.p90": set thresholds whole, e.g. thresholds='{e2e.p90: "<= 1.10 * baseline"}', or give them in a thresholds file`)
}
