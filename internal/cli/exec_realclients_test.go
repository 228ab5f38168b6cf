//go:build realclients

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/results"
)

// nodeHarness returns the node binary and scripts/realclients/exec-harness.mjs, skipping the
// test without them (scripts/realclients/run.sh installs the packages).
func nodeHarness(t *testing.T) (string, string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found: the real-client suite needs Node 20 or later and npm")
	}
	dir, err := filepath.Abs("../../scripts/realclients")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		t.Skip("scripts/realclients/node_modules missing: run scripts/realclients/run.sh")
	}
	return node, filepath.Join(dir, "exec-harness.mjs")
}

// TestExecRealClients runs four copies of a tool-calling harness on the OpenAI Node SDK under
// exec: healthy against the healthy simulator, every process exiting 0; stuck against the
// long-context wedge, with the silent processes named and the SDK's own guards in the
// evidence (the timeout atlas: undici's 300 s body timeout is its first).
func TestExecRealClients(t *testing.T) {
	node, script := nodeHarness(t)
	t.Run("healthy", func(t *testing.T) {
		code, out, dir := runExec(t, execFast, node, script)
		require.Equal(t, 0, code, out)
		assert.Equal(t, map[int]int{0: 0, 1: 0, 2: 0, 3: 0}, processEnds(t, dir))
		res, err := results.Read(dir)
		require.NoError(t, err)
		assert.True(t, res.Verdict.Kind.Progressing(), "verdict %s: %s", res.Verdict.Kind, res.Verdict.Summary)
	})
	t.Run("wedge", func(t *testing.T) {
		// The wedge takes a request past its first tool step (the first carries 72 tokens, the
		// second 98): how many tool steps a task takes is the simulated model's draw, and a
		// higher threshold would wedge only the agents that drew long tasks.
		args := append(execFast, "--sim-fault", "long-context-wedge", "--sim-fault-param", "threshold_tokens=90")
		code, out, dir := runExec(t, args, node, script)
		require.Equal(t, 3, code, out)
		res, err := results.Read(dir)
		require.NoError(t, err)
		assert.Equal(t, results.StalledStreams, res.Verdict.Kind, res.Verdict.Summary)
		assert.Contains(t, res.Verdict.Summary, "wait on streams silent")
		assert.Contains(t, strings.Join(res.Verdict.Evidence, "\n"), `no guard of this harness (the OpenAI Node SDK, User-Agent "OpenAI/JS`)
	})
}
