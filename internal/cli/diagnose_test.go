package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/harnesstest"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/results"
)

// recordRun runs workload smoke with the given --set overrides against the embedded
// simulator with the given faults into dir; in a synctest bubble, it runs there. It returns
// the results the run wrote.
func recordRun(t *testing.T, dir string, sets map[string]string, faults, params []string) *results.Results {
	t.Helper()
	return harnesstest.Run(t, harnesstest.Config{Workload: "smoke", Set: sets, Faults: faults, FaultParams: params, Dir: dir}).Results
}

// diagnoseArgs runs `agentsim diagnose` with args through the whole command line.
func diagnoseArgs(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = Execute(context.Background(), append([]string{"diagnose"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestDiagnoseRunDirectory records two runs — smoke on a healthy simulator, and smoke with
// every request pinned in prefill (fault prefill-pin, fraction 1: the watchdog ends the run
// 20 s in, a deadlock) — and checks that `agentsim diagnose DIR` prints the verdict the run
// recorded, as text and as JSON, with the exit code of `agentsim run`.
func TestDiagnoseRunDirectory(t *testing.T) {
	cases := []struct {
		name   string
		faults []string
		params []string
		kind   results.VerdictKind
		code   int
	}{
		// Healthy: exit 0.
		{"healthy", nil, nil, results.Healthy, ExitOK},
		// A deadlock: exit 3.
		{"deadlock", []string{"prefill-pin"}, []string{"fraction=1"}, results.Deadlock, ExitVerdict},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "run")
				res := recordRun(t, dir, nil, c.faults, c.params)
				require.Equal(t, c.kind, res.Verdict.Kind, "%s\n%s", res.Verdict.Summary, strings.Join(res.Verdict.Evidence, "\n"))

				code, out, stderr := diagnoseArgs(dir)
				assert.Equal(t, c.code, code, "agentsim diagnose %s; stderr: %s", dir, stderr)
				assert.Empty(t, stderr)
				var want bytes.Buffer
				require.NoError(t, diagnose.Render(&want, res.Verdict))
				assert.Equal(t, want.String(), out)
				assert.True(t, strings.HasPrefix(out, "verdict: "+string(c.kind)+" — "+res.Verdict.Summary+"\n"), "agentsim diagnose %s printed\n%s", dir, out)

				code, out, stderr = diagnoseArgs("--json", dir)
				assert.Equal(t, c.code, code, "agentsim diagnose --json %s; stderr: %s", dir, stderr)
				var got results.Verdict
				require.NoError(t, json.Unmarshal([]byte(out), &got), "--json printed %q", out)
				assert.Equal(t, res.Verdict, got)
			})
		})
	}
}

// A results.json whose verdict differs from what the files say (judged by an older agentsim,
// or edited) is pointed out on stderr; the files decide.
func TestDiagnoseNotesRecordedVerdict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "run")
		res := recordRun(t, dir, nil, nil, nil)
		res.Verdict = results.Verdict{Kind: results.Deadlock, Summary: "every running agent (4/4) waits", Evidence: []string{}}
		require.NoError(t, results.Write(dir, res))

		code, out, stderr := diagnoseArgs(dir)
		assert.Equal(t, ExitOK, code)
		assert.Contains(t, out, "verdict: healthy — ")
		assert.Equal(t, "agentsim: note: the run recorded a different verdict in results.json: deadlock — every running agent (4/4) waits\n", stderr)
	})
}

// TestDiagnoseBadArguments checks that a missing, empty or wrong run directory, and a wrong
// number of arguments, are usage errors (exit 2) that say what is wrong.
func TestDiagnoseBadArguments(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "results.json")
	require.NoError(t, os.WriteFile(file, []byte("{}"), 0o644))
	empty := filepath.Join(tmp, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	compare := filepath.Join(tmp, "compare")
	for _, part := range []string{"synthetic", "agentic"} {
		require.NoError(t, os.MkdirAll(filepath.Join(compare, part), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(compare, part, "events.jsonl"), nil, 0o644))
	}
	noEvents := filepath.Join(tmp, "noevents")
	require.NoError(t, os.Mkdir(noEvents, 0o755))
	for _, f := range []string{"events.jsonl", "samples.jsonl"} {
		require.NoError(t, os.WriteFile(filepath.Join(noEvents, f), nil, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(noEvents, "config.yaml"), []byte("name: smoke\n"), 0o644))
	for _, c := range []struct {
		name string
		args []string
		msg  []string // in stderr
	}{
		// No directory at all.
		{"no argument", nil, []string{"diagnose takes one run directory", "got 0 arguments"}},
		// Two directories.
		{"two arguments", []string{tmp, tmp}, []string{"got 2 arguments"}},
		// A directory that does not exist.
		{"missing", []string{filepath.Join(tmp, "nope")}, []string{"diagnose " + filepath.Join(tmp, "nope") + ": no such file or directory"}},
		// A file, not a directory.
		{"a file", []string{file}, []string{"not a directory"}},
		// A directory without the run's files.
		{"empty directory", []string{empty}, []string{"not a run directory", "config.yaml: no such file or directory"}},
		// A compare directory: its agentic part is the run to diagnose.
		{"compare directory", []string{compare}, []string{"is a compare directory", "agentsim diagnose " + filepath.Join(compare, "agentic")}},
		// A 0-byte events.jsonl: nothing was recorded.
		{"no events", []string{noEvents}, []string{"events.jsonl holds no event: the run recorded nothing"}},
		// A bad flag.
		{"bad flag", []string{"--jsn", tmp}, []string{"--jsn"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := diagnoseArgs(c.args...)
			assert.Equal(t, ExitUsage, code, "agentsim diagnose %v; stderr: %s", c.args, stderr)
			assert.Empty(t, out)
			for _, m := range c.msg {
				assert.Contains(t, stderr, m)
			}
		})
	}
}

// TestDiagnoseCutEvents cuts a finished run's events.jsonl to its first third: diagnose judges
// only up to the cut, says so in the verdict, and repeats the warning on stderr.
func TestDiagnoseCutEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "run")
		recordRun(t, dir, map[string]string{"rounds": "20"}, nil, nil)
		path := filepath.Join(dir, "events.jsonl")
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		lines := strings.SplitAfter(string(b), "\n")
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines[:len(lines)/3], "")), 0o644))

		code, out, stderr := diagnoseArgs(dir)
		assert.Contains(t, finished, code)
		assert.Regexp(t, `^verdict: \S+ — .* \(judged up to t=\d+ s: events\.jsonl is cut\)\n  • warning: events\.jsonl is cut: `, out)
		assert.Contains(t, stderr, "agentsim: warning: events.jsonl is cut: its events end at t=")
	})
}

// TestDiagnoseSaysTheRunsWarnings: agentsim diagnose prints, after the verdict, the warnings
// the run gave — here that the server sends another model, that its outputs were far shorter
// than the workload asks and that it streamed no reasoning — as results.json records them.
func TestDiagnoseSaysTheRunsWarnings(t *testing.T) {
	ts := vllmLike(t, "some/model", 8192)
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"run", "--server", ts.URL, "--out", dir, "--workload", "smoke", "--rounds", "1", "--set", "start_jitter=0s",
		"--set", "tool_time=0s", "--set", "think_time=0s", "--set", "request.force_output_length=false"}
	code, out, stderr := execute(t, args...)
	require.Equal(t, ExitOK, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	res, err := results.Read(dir)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(res.Warnings), 2, "the run warns: %q", res.Warnings)

	code, out, stderr = diagnoseArgs(dir)
	assert.Equal(t, ExitOK, code, "agentsim diagnose %s; stderr: %s", dir, stderr)
	var said []string
	for _, l := range strings.Split(out, "\n") {
		if w, ok := strings.CutPrefix(l, "warning: "); ok {
			said = append(said, w)
		}
	}
	assert.Equal(t, diagnose.AllWarnings(res), said, "agentsim diagnose %s printed\n%s", dir, out)
}
