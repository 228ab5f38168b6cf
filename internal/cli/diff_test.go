package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/diff"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/results"
)

// gateThresholds is a threshold set a pull request's CI could use: relative limits with a
// margin on latency and throughput, an absolute limit on TTFT, no failures, a verdict that
// progresses.
const gateThresholds = `thresholds:
  e2e.p90: "<= 1.10 * baseline"
  tpot.p50: "<= 1.10 * baseline"
  ttft.p99: "< 30s"
  requests.failed_ratio: "< 0.01"
  tokens.output_per_second: ">= 0.90 * baseline"
  verdict: [healthy, slow]
`

// runSmoke runs `agentsim run` on workload smoke widened to 8 agents × 4 rounds (32
// requests), with the given workload and simulator seed, against the embedded simulator in
// memory; call it in a synctest bubble. It returns the exit code, stdout and stderr.
func runSmoke(t *testing.T, dir string, seed int, extra ...string) (int, string, string) {
	t.Helper()
	args := append([]string{"--workload", "smoke", "--agents", "8", "--rounds", "4", "--speedup", "20",
		"--set", "seed=" + strconv.Itoa(seed), "--sim-seed", strconv.Itoa(seed), "--out", dir}, extra...)
	return runCommand(t, (&runCmd{}).command(), args...)
}

// TestGateNoiseAndSlowDecode is the gate's promise: two runs of one configuration with
// different seeds pass a reasonable threshold set, and the same configuration on a server
// whose decode is three times slower (--sim-fault slow-decode) fails it, naming the figure,
// both values and the rule — through diff and through run --baseline.
func TestGateNoiseAndSlowDecode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tmp := t.TempDir()
		th := filepath.Join(tmp, "thresholds.yaml")
		require.NoError(t, os.WriteFile(th, []byte(gateThresholds), 0o644))
		base, again, slow := filepath.Join(tmp, "base"), filepath.Join(tmp, "again"), filepath.Join(tmp, "slow")
		for _, r := range []struct {
			dir   string
			seed  int
			extra []string
		}{{base, 1, nil}, {again, 2, nil}, {slow, 3, []string{"--sim-fault", "slow-decode"}}} {
			code, out, stderr := runSmoke(t, r.dir, r.seed, r.extra...)
			require.Equal(t, ExitOK, code, "run %s:\n%s\n%s", r.dir, out, stderr)
		}

		// Noise: both directions pass.
		for _, pair := range [][2]string{{base, again}, {again, base}} {
			code, out, stderr := agentsim(t, "diff", pair[0], pair[1], "--thresholds", th)
			assert.Equal(t, ExitOK, code, "agentsim diff %s %s:\n%s\n%s", pair[0], pair[1], out, stderr)
			assert.Contains(t, out, "thresholds: 6 passed, 0 failed")
		}

		// A slowed decode fails, with JUnit and Markdown written.
		junit, md := filepath.Join(tmp, "gate.xml"), filepath.Join(tmp, "gate.md")
		code, out, stderr := agentsim(t, "diff", base, slow, "--thresholds", th, "--junit", junit, "--summary-md", md)
		require.Equal(t, ExitVerdict, code, "agentsim diff %s %s:\n%s\n%s", base, slow, out, stderr)
		assert.Regexp(t, `(?m)^tpot\.p50 +[\d.]+ ms +[\d.]+ ms +\+\d+ % \(95 % CI \+\d+ % … \+\d+ %\)$`, out)
		assert.Regexp(t, `thresholds failed:\n  tpot\.p50 = [\d.]+ ms, baseline [\d.]+ ms: breaks "<= 1\.10 \* baseline" \(limit [\d.]+ ms\)`, stderr)
		assert.Contains(t, stderr, `tokens.output_per_second = `)
		x, err := os.ReadFile(junit)
		require.NoError(t, err)
		assert.Regexp(t, `<testsuites name="agentsim diff [^"]+" tests="6" failures="[1-6]" skipped="0">`, string(x))
		assert.Contains(t, string(x), `<testcase name="tpot.p50 &lt;= 1.10 * baseline" classname="agentsim.thresholds">`)
		m, err := os.ReadFile(md)
		require.NoError(t, err)
		assert.Contains(t, string(m), "| ❌ **fail** | `tpot.p50` | `<= 1.10 * baseline` |")

		// run --baseline holds a new run to the same rules as it finishes; --json keeps stdout
		// for the results object.
		code, out, stderr = runSmoke(t, filepath.Join(tmp, "gated"), 4, "--baseline", base, "--thresholds", th, "--json")
		assert.Equal(t, ExitOK, code, "run --baseline:\n%s\n%s", out, stderr)
		var res results.Results
		require.NoError(t, json.Unmarshal([]byte(out), &res), "stdout must be the results object:\n%s", out)
		assert.Equal(t, results.Schema, res.Schema)
		assert.Equal(t, 32, res.Requests.OK)
		assert.Contains(t, stderr, "thresholds: 6 passed, 0 failed")

		code, out, stderr = runSmoke(t, filepath.Join(tmp, "gated-slow"), 5, "--baseline", base, "--thresholds", th,
			"--sim-fault", "slow-decode")
		assert.Equal(t, ExitVerdict, code, "run --baseline, slow decode:\n%s\n%s", out, stderr)
		assert.Contains(t, out, "  FAIL  tpot.p50 = ")
		assert.Contains(t, stderr, "thresholds failed")
	})
}

// TestDiffRefuses checks the directories diff will not compare: different agents (unless
// --force), a directory that holds no run, and a compare directory, whose runs are its parts.
func TestDiffRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tmp := t.TempDir()
		a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
		code, out, stderr := runCommand(t, (&runCmd{}).command(), "--workload", "smoke", "--out", a)
		require.Equal(t, ExitOK, code, "%s\n%s", out, stderr)
		code, out, stderr = runCommand(t, (&runCmd{}).command(), "--workload", "smoke", "--agents", "2", "--out", b)
		require.Equal(t, ExitOK, code, "%s\n%s", out, stderr)

		code, _, stderr = agentsim(t, "diff", a, b)
		assert.Equal(t, ExitUsage, code)
		assert.Contains(t, stderr, "the runs are not comparable: their workloads differ in agents 4 → 2; a comparison needs the same agents, rounds and model (add --force to compare them anyway)")
		code, out, stderr = agentsim(t, "diff", "--force", a, b)
		assert.Equal(t, ExitOK, code, stderr)
		assert.Regexp(t, `(?m)^requests\.ok +8 +4 +−50 %$`, out)

		code, _, stderr = agentsim(t, "diff", a, tmp)
		assert.Equal(t, ExitUsage, code)
		assert.Contains(t, stderr, "holds runs in subdirectories: not a run directory: name one of them, such as")
		code, _, stderr = agentsim(t, "diff", a, filepath.Join(tmp, "none"))
		assert.Equal(t, ExitUsage, code)
		assert.Contains(t, stderr, "none: not a run directory")
		code, _, stderr = agentsim(t, "diff", a)
		assert.Equal(t, ExitUsage, code)
		assert.Contains(t, stderr, "diff takes two run directories")

		bad := filepath.Join(tmp, "bad.yaml")
		require.NoError(t, os.WriteFile(bad, []byte("thresholds:\n  e2e.p95: '< 1s'\n"), 0o644))
		code, _, stderr = agentsim(t, "diff", a, a, "--thresholds", bad)
		assert.Equal(t, ExitUsage, code)
		assert.Contains(t, stderr, `thresholds.e2e.p95: unknown figure "e2e.p95"`)
	})
}

// TestDiffRederived compares a run with a copy of itself that lost results.json (a run killed
// before writing it): diff re-derives the figures from the events, through the same
// accumulator, and finds no change in any of them.
func TestDiffRederived(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tmp := t.TempDir()
		a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
		code, out, stderr := runSmoke(t, a, 1)
		require.Equal(t, ExitOK, code, "%s\n%s", out, stderr)
		require.NoError(t, os.Mkdir(b, 0o755))
		for _, f := range rundir.Files {
			if f == "results.json" {
				continue
			}
			data, err := os.ReadFile(filepath.Join(a, f))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(b, f), data, 0o644))
		}
		code, out, stderr = agentsim(t, "diff", a, b)
		require.Equal(t, ExitOK, code, stderr)
		assert.Contains(t, out, "server not recorded (no results.json: figures re-derived from the events)")
		rows := regexp.MustCompile(`(?m)^([a-z0-9_.]+)  +(\S+(?: \S+)?)  +(\S+(?: \S+)?)  +(.+)$`).FindAllStringSubmatch(out, -1)
		require.Len(t, rows, 1+1+len(diff.Rows), "header, verdict and every figure:\n%s", out)
		for _, r := range rows[1:] {
			assert.Equal(t, r[2], r[3], "%s: base and new differ", r[1])
			assert.Regexp(t, `^no (significant )?change`, r[4], r[1])
		}
	})
}

// TestGateOutputsKeepInputs checks that --junit and --summary-md follow report -o's rule: no
// file of the inputs, nothing but a regular file, the two not one file, and an existing file
// only with --force — refused before the runs are read, or before a run starts.
func TestGateOutputsKeepInputs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tmp := t.TempDir()
		a := filepath.Join(tmp, "a")
		code, out, stderr := runSmoke(t, a, 1)
		require.Contains(t, finished, code, "%s\n%s", out, stderr)
		events := filepath.Join(a, "events.jsonl")
		before, err := os.ReadFile(events)
		require.NoError(t, err)
		existing := filepath.Join(tmp, "gate.xml")
		require.NoError(t, os.WriteFile(existing, []byte("old"), 0o644))
		fresh := filepath.Join(tmp, "fresh.md")
		for _, tc := range []struct {
			name string
			args []string
			msg  string
		}{
			// A file of a run compared, even with --force.
			{"input", []string{"diff", a, a, "--junit", events, "--force"}, "--junit " + events + ": is one of the inputs (" + a + ")"},
			// A device.
			{"device", []string{"diff", a, a, "--summary-md", os.DevNull, "--force"}, "--summary-md /dev/null: is a device, not a regular file"},
			// Both flags naming one file.
			{"same file", []string{"diff", a, a, "--junit", fresh, "--summary-md", fresh}, "--junit and --summary-md name the same file"},
			// An existing file without --force.
			{"existing", []string{"diff", a, a, "--junit", existing}, "--junit " + existing + ": exists: pass --force to replace it"},
			// run refuses it before it starts, its baseline an input.
			{"run existing", []string{"run", "--workload", "smoke", "--out", filepath.Join(tmp, "b"), "--summary-md", existing},
				"--summary-md " + existing + ": exists: pass --force"},
			{"run baseline", []string{"run", "--workload", "smoke", "--out", filepath.Join(tmp, "c"), "--baseline", a, "--junit", events, "--force"},
				"--junit " + events + ": is one of the inputs (" + a + ")"},
		} {
			code, _, stderr := agentsim(t, tc.args...)
			assert.Equal(t, ExitUsage, code, "%s: %s", tc.name, stderr)
			assert.Contains(t, stderr, tc.msg, tc.name)
		}
		assert.NoDirExists(t, filepath.Join(tmp, "b"), "run refused before it started")
		after, err := os.ReadFile(events)
		require.NoError(t, err)
		assert.Equal(t, before, after, "events.jsonl is untouched")
		old, _ := os.ReadFile(existing)
		assert.Equal(t, "old", string(old), "the existing file is untouched without --force")

		code, _, stderr = agentsim(t, "diff", a, a, "--junit", existing, "--force")
		assert.Equal(t, ExitOK, code, stderr)
		x, err := os.ReadFile(existing)
		require.NoError(t, err)
		assert.Contains(t, string(x), "<testsuites", "--force replaces it")
	})
}
