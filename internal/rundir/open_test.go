package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

const (
	runEvents = `{"t_s":0,"event":"run_start","agent":-1}
{"t_s":0.1,"event":"request_sent","agent":0,"round":1,"request":"a0-r1-0"}
{"t_s":2.1,"event":"done","agent":0,"round":1,"request":"a0-r1-0","completion_tokens":100}
`
	runSamples = `{"t_s":0.75,"in_flight":1}
{"t_s":1.5,"in_flight":1}
`
)

// writeRun writes a run directory as a run leaves it: config.yaml (the smoke workload as the
// harness records it), events.jsonl, samples.jsonl and, with withResults, results.json.
func writeRun(t *testing.T, withResults bool) string {
	t.Helper()
	dir := t.TempDir()
	w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke"})
	require.NoError(t, err)
	cfg, err := w.Recorded(map[string]string{"server": "http://127.0.0.1:1"}, nil)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, Config), cfg, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, Events), []byte(runEvents), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, Samples), []byte(runSamples), 0o644))
	if withResults {
		require.NoError(t, results.Write(dir, &results.Results{Command: "run", Workload: "smoke",
			Verdict: results.Verdict{Kind: results.Healthy, Summary: "recorded"}}))
	}
	return dir
}

// derived stands for diagnose.Derive: it checks it was given the run's records and says it
// made the results.
func derived(r *Run) (*results.Results, error) {
	if r.Workload == nil || len(r.Events) != 3 || len(r.Samples) != 2 {
		return nil, errors.New("derive needs the workload, events and samples")
	}
	return &results.Results{Workload: r.Workload.Name, Verdict: results.Verdict{Kind: results.Healthy, Summary: "derived"}}, nil
}

// TestOpenResults opens a run with and without results.json: the file when it is there,
// nothing or the derived results when it is not, as the options ask.
func TestOpenResults(t *testing.T) {
	for _, tc := range []struct {
		name        string
		withResults bool
		o           Options
		want        string // the verdict's summary; "" for no results
	}{
		// results.json is read when asked for.
		{"results.json", true, Options{Results: true}, "recorded"},
		// Derive is not called when results.json is there.
		{"results.json, Derive set", true, Options{Derive: derived}, "recorded"},
		// Without results.json, asking for it gives none: a run killed before writing it.
		{"no results.json", false, Options{Results: true}, ""},
		// Without results.json, Derive makes them, reading the samples for it.
		{"no results.json, derived", false, Options{Derive: derived}, "derived"},
		// Not asked for: results.json is not read.
		{"not asked", true, Options{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeRun(t, tc.withResults)
			r, err := Open(dir, tc.o)
			require.NoError(t, err)
			assert.Equal(t, "smoke", r.Workload.Name)
			assert.Len(t, r.Events, 3)
			assert.False(t, r.Proxy)
			if tc.want == "" {
				assert.Nil(t, r.Results)
				return
			}
			require.NotNil(t, r.Results)
			assert.Equal(t, tc.want, r.Results.Verdict.Summary)
		})
	}
}

// TestOpenSamples checks that samples.jsonl is read only when asked for.
func TestOpenSamples(t *testing.T) {
	dir := writeRun(t, true)
	r, err := Open(dir, Options{})
	require.NoError(t, err)
	assert.Empty(t, r.Samples)
	r, err = Open(dir, Options{Samples: true})
	require.NoError(t, err)
	assert.Equal(t, []events.Sample{{TS: 0.75, InFlight: 1}, {TS: 1.5, InFlight: 1}}, r.Samples)
}

// TestOpenErrors spoils one file of a run at a time: each error names the file with its
// path and says what is wrong.
func TestOpenErrors(t *testing.T) {
	write := func(name, content string) func(dir string) error {
		return func(dir string) error { return os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644) }
	}
	remove := func(name string) func(dir string) error {
		return func(dir string) error { return os.Remove(filepath.Join(dir, name)) }
	}
	for _, tc := range []struct {
		name  string
		spoil func(dir string) error
		o     Options
		want  string // the error, with DIR for the directory
	}{
		// No events.jsonl.
		{"events missing", remove(Events), Options{}, "read DIR/events.jsonl: no such file or directory"},
		// A malformed line before the last.
		{"events corrupt", write(Events, "{oops\n"+runEvents), Options{}, "DIR/events.jsonl line 1: "},
		// No config.yaml.
		{"config missing", remove(Config), Options{}, "read DIR/config.yaml: no such file or directory"},
		// An empty config.yaml.
		{"config empty", write(Config, "\n"), Options{}, "read DIR/config.yaml: the file is empty"},
		// config.yaml that is not YAML.
		{"config corrupt", write(Config, "agents: [1,\n"), Options{}, "parse DIR/config.yaml: "},
		// config.yaml with a value no workload takes.
		{"config invalid", write(Config, "agents: 0\n"), Options{}, "parse DIR/config.yaml: "},
		// No samples.jsonl, when asked for.
		{"samples missing", remove(Samples), Options{Samples: true}, "read DIR/samples.jsonl: no such file or directory"},
		// No samples.jsonl, when needed to derive the results.
		{"samples missing to derive", func(dir string) error {
			if err := remove(Results)(dir); err != nil {
				return err
			}
			return remove(Samples)(dir)
		}, Options{Derive: derived}, "DIR: no results.json, and its files cannot be judged: read DIR/samples.jsonl: no such file or directory"},
		// A malformed samples.jsonl.
		{"samples corrupt", write(Samples, "[]\n"+runSamples), Options{Samples: true}, "DIR/samples.jsonl line 1: "},
		// results.json that is not JSON: an error, not a reason to derive.
		{"results corrupt", write(Results, "{"), Options{Derive: derived}, "parse DIR/results.json: "},
		// Derive's own refusal.
		{"derive fails", remove(Results), Options{Derive: func(*Run) (*results.Results, error) { return nil, errors.New("no verdict") }},
			"DIR: no results.json, and its files cannot be judged: no verdict"},
		// A config.yaml tolerated as missing still stops the derivation, named.
		{"optional config, derived", func(dir string) error {
			if err := remove(Results)(dir); err != nil {
				return err
			}
			return remove(Config)(dir)
		}, Options{Derive: derived, OptionalWorkload: true}, "DIR: no results.json, and its files cannot be judged: read DIR/config.yaml: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeRun(t, true)
			require.NoError(t, tc.spoil(dir))
			_, err := Open(dir, tc.o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), strings.ReplaceAll(tc.want, "DIR", dir))
		})
	}
}

// TestOpenConfigBounded checks that config.yaml is read as a workload file is: a FIFO is
// refused without blocking.
func TestOpenConfigBounded(t *testing.T) {
	dir := writeRun(t, true)
	cfg := filepath.Join(dir, Config)
	require.NoError(t, os.Remove(cfg))
	require.NoError(t, syscall.Mkfifo(cfg, 0o644))
	_, err := Open(dir, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a regular file")
}

// TestOpenOptionalWorkload checks that OptionalWorkload reads a run whose config.yaml is
// missing or is no workload, without its workload.
func TestOpenOptionalWorkload(t *testing.T) {
	for _, content := range []string{"", "agents: [1,\n"} {
		dir := writeRun(t, true)
		path := filepath.Join(dir, Config)
		require.NoError(t, os.Remove(path))
		if content != "" {
			require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		}
		r, err := Open(dir, Options{Results: true, OptionalWorkload: true})
		require.NoError(t, err, "config.yaml %q", content)
		assert.Nil(t, r.Workload)
		assert.Len(t, r.Events, 3)
		assert.NotNil(t, r.Results)
	}
}

// TestOpenProxy checks that record.json beside the events marks a watched recording.
func TestOpenProxy(t *testing.T) {
	dir := writeRun(t, false)
	require.NoError(t, os.WriteFile(filepath.Join(dir, Record), []byte(`{"schema":"agentsim.record/v1"}`), 0o644))
	r, err := Open(dir, Options{})
	require.NoError(t, err)
	assert.True(t, r.Proxy)
}

// TestParts checks the runs a compare and a bench sweep directory hold: compare's synthetic
// part first, the others in name order; a subdirectory without events.jsonl is none.
func TestParts(t *testing.T) {
	mk := func(t *testing.T, parts ...string) string {
		dir := t.TempDir()
		for _, p := range parts {
			require.NoError(t, os.Mkdir(filepath.Join(dir, p), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, p, Events), nil, 0o644))
		}
		require.NoError(t, os.Mkdir(filepath.Join(dir, "logs"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, Results), []byte("{}"), 0o644))
		return dir
	}
	compare := mk(t, Agentic, Synthetic)
	assert.Equal(t, []string{filepath.Join(compare, Synthetic), filepath.Join(compare, Agentic)}, Parts(compare))
	sweep := mk(t, BenchTest(16), BenchTest(1), BenchTest(4))
	assert.Equal(t, []string{filepath.Join(sweep, "n1"), filepath.Join(sweep, "n16"), filepath.Join(sweep, "n4")}, Parts(sweep))
	assert.Empty(t, Parts(mk(t)))
	assert.Empty(t, Parts(filepath.Join(t.TempDir(), "missing")))
}
