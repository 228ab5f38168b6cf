package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/simserver"
)

// TestServePrint checks that serve --print shows a profile resolved, as a profile file that
// reads back the same, for a built-in and for a user's file based on one; and that a bad file
// is a usage error naming every problem.
func TestServePrint(t *testing.T) {
	code, out, stderr := agentsim(t, "serve", "--profile", "ideal", "--print")
	require.Equal(t, ExitOK, code, "stderr: %s", stderr)
	assert.Contains(t, out, "decode_base: 20ms # fixed cost of a decode step, simulated time\n")
	p, err := simserver.ParseProfile([]byte(out), "printed")
	require.NoError(t, err)
	assert.Equal(t, simserver.Ideal(), p)

	dir := t.TempDir()
	mine := filepath.Join(dir, "mine.yaml")
	require.NoError(t, os.WriteFile(mine, []byte("base: dsv4-pd\nname: mine\nstep_jitter_sigma: 0.1\n"), 0o644))
	code, out, stderr = agentsim(t, "serve", "--profile", mine, "--print")
	require.Equal(t, ExitOK, code, "stderr: %s", stderr)
	assert.Contains(t, out, "name: mine ")
	assert.Contains(t, out, "step_jitter_sigma: 0.1 ")
	assert.Contains(t, out, "decode_base: 9.2ms ")

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("base: dsv4-pd\ndecode_bas: 9ms\nstep_jitter_sigma: .nan\n"), 0o644))
	code, _, stderr = agentsim(t, "serve", "--profile", bad, "--print")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, `unknown key "decode_bas"`)
	assert.Contains(t, stderr, "step_jitter_sigma: NaN is not allowed")
}
