package diagnose

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/results"
)

// finishedRun records the finished run with errors into a new directory, with samples going
// on quietly for 60 s after its last event, and returns the directory.
func finishedRun(t *testing.T) string {
	t.Helper()
	w, cfg := withErrors()
	dir := t.TempDir()
	record(t, dir, w, workloadFor(cfg), lastTime(w)+60)
	return dir
}

// TestFromDirNotARun checks that a directory holding no run is refused with ErrNotRunDir and
// a message saying what it is, instead of a verdict: empty, someone else's, a compare
// directory (pointing to its agentic/ part) and a bench sweep (pointing to its tests).
func TestFromDirNotARun(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir string)
		want []string // in the error, with DIR for the directory
	}{
		{"empty", func(*testing.T, string) {}, []string{"not a run directory: DIR is empty", "want a directory a run wrote"}},
		{"foreign", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello\n"), 0o644))
			require.NoError(t, os.Mkdir(filepath.Join(dir, "src"), 0o755))
		}, []string{"not a run directory: DIR holds none of events.jsonl, samples.jsonl, config.yaml"}},
		{"compare", func(t *testing.T, dir string) {
			for _, part := range []string{"synthetic", "agentic"} {
				require.NoError(t, os.CopyFS(filepath.Join(dir, part), os.DirFS(finishedRun(t))))
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, "results.json"), []byte("{}"), 0o644))
		}, []string{"DIR is a compare directory; its agentic run is DIR/agentic (agentsim diagnose DIR/agentic)"}},
		{"sweep", func(t *testing.T, dir string) {
			for _, n := range []string{"n1", "n16"} {
				require.NoError(t, os.CopyFS(filepath.Join(dir, n), os.DirFS(finishedRun(t))))
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, "results.json"), []byte("{}"), 0o644))
		}, []string{"DIR holds runs, not one", "diagnose one of DIR/n1, DIR/n16"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.make(t, dir)
			_, _, err := FromDir(dir)
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrNotRunDir), "%v", err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), strings.ReplaceAll(w, "DIR", dir))
			}
		})
	}
}

// TestFromDirNoEvents checks that a 0-byte events.jsonl (or one of blank lines) is an
// ErrNoEvents error, not a verdict on a run that recorded nothing.
func TestFromDirNoEvents(t *testing.T) {
	for _, content := range []string{"", "\n\n  \n"} {
		dir := finishedRun(t)
		require.NoError(t, os.WriteFile(filepath.Join(dir, rundir.Events), []byte(content), 0o644))
		_, _, err := FromDir(dir)
		require.Error(t, err)
		assert.True(t, errors.Is(err, ErrNoEvents), "%v", err)
		assert.Contains(t, err.Error(), filepath.Join(dir, rundir.Events)+" holds no event: the run recorded nothing")
	}
}

// TestFromDirCutEvents checks an events.jsonl cut to its first half while samples.jsonl runs
// on: the verdict says so first and judges only up to the last event; the same run uncut,
// quiet for 60 s after its last event, is not taken for a cut one.
func TestFromDirCutEvents(t *testing.T) {
	dir := finishedRun(t)
	whole, _, err := FromDir(dir)
	require.NoError(t, err)
	assert.Equal(t, results.Errors, whole.Kind)
	for _, e := range whole.Evidence {
		assert.NotContains(t, e, "is cut", "a quiet end is not a cut file")
	}

	path := filepath.Join(dir, rundir.Events)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := bytes.SplitAfter(b, []byte("\n"))
	require.NoError(t, os.WriteFile(path, bytes.Join(lines[:len(lines)/2], nil), 0o644))

	v, r, err := FromDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, v.Evidence)
	assert.Regexp(t, `^warning: events\.jsonl is cut: its events end at t=\d+\.?\d* s but samples\.jsonl runs to t=\d+\.?\d* s and counts \d+ output tokens of completed requests \(the events hold \d+\)`, v.Evidence[0])
	assert.Contains(t, v.Evidence[0], "this verdict judges only the first")
	assert.Contains(t, v.Summary, "events.jsonl is cut)")
	assert.Less(t, r.SimSeconds, lastTime(must(withErrors()))+1, "judged at the cut, not at the samples' end")
}

func must(w *world, _ Config) *world { return w }

// TestFromDirRefusesImpossibleRecords checks that records no run of the workload could have
// written are refused, naming file, record, field, value and what is allowed, before the
// analysis makes room for them (an agent 2000000000 would otherwise allocate 2e9 agent views).
func TestFromDirRefusesImpossibleRecords(t *testing.T) {
	for _, tc := range []struct {
		name, file, line, want string
	}{
		{"agent far out of range", rundir.Events, `{"t_s": 1, "event": "request_sent", "agent": 2000000000, "request": "x"}`,
			"events.jsonl record 1: agent 2000000000 is not allowed: want −1 (the run) or 0–9 (the run had 10 agents)"},
		{"agent below the run", rundir.Events, `{"t_s": 1, "event": "agent_start", "agent": -7}`, "agent -7 is not allowed"},
		{"negative time", rundir.Events, `{"t_s": -5, "event": "agent_start", "agent": 0}`, "t_s -5 is not allowed: want simulated seconds from 0 to"},
		{"stream of no agent", rundir.Samples, `{"t_s": 1, "streams": [{"request": "x", "agent": 99}]}`,
			"samples.jsonl record 1: streams[].agent 99 is not allowed: want 0–9"},
		{"negative count", rundir.Samples, `{"t_s": 1, "in_flight": -1}`, "in_flight -1"},
		{"silence far in the future", rundir.Samples, `{"t_s": 1, "open": {"stall_after_s": 20, "last_byte_ago_s": -3}}`,
			"open.last_byte_ago_s -3 is not allowed: want seconds from 0 to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := finishedRun(t)
			require.NoError(t, prepend(filepath.Join(dir, tc.file), tc.line+"\n"))
			_, _, err := FromDir(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestFromDirReadsByteDuringSample checks that a sample written while a byte arrived — its
// time since the latest byte a few microseconds below 0, as runs before the board clamped it
// could record — is read, not refused.
func TestFromDirReadsByteDuringSample(t *testing.T) {
	dir := finishedRun(t)
	require.NoError(t, prepend(filepath.Join(dir, rundir.Samples),
		`{"t_s": 0.001, "open": {"stall_after_s": 20, "last_byte_ago_s": -1.5634e-05}}`+"\n"))
	_, _, err := FromDir(dir)
	require.NoError(t, err)
}
