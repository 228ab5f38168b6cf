package cli

import (
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMetricsAddr checks --metrics-addr on run: a malformed address is a usage error, a port
// in use a runtime failure, both before any agent starts; a good one is announced on stderr
// and the run goes on as without it.
func TestMetricsAddr(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	for _, tc := range []struct {
		name string
		addr string
		code int
		msg  string
	}{
		// No port.
		{"malformed", "localhost", ExitUsage, `--metrics-addr "localhost"`},
		// Another listener has the port.
		{"in use", busy.Addr().String(), ExitRuntime, "address already in use"},
		// Any free port: the run goes on to its verdict (healthy, or on a loaded machine whatever
		// real time made of it).
		{"free", "127.0.0.1:0", ExitOK, "agentsim: metrics at http://127.0.0.1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			code, stdout, stderr := execute(t, "run", "--workload", "smoke", "--speedup", "20", "--out", out, "--metrics-addr", tc.addr)
			if tc.code == ExitOK && code == ExitVerdict {
				code = ExitOK
			}
			assert.Equal(t, tc.code, code, "run --metrics-addr %s: stdout %s stderr %s", tc.addr, stdout, stderr)
			assert.Contains(t, stderr, tc.msg)
		})
	}
	// compare takes the flag too, with the same check.
	code, _, stderr := execute(t, "compare", "--workload", "smoke", "--out", filepath.Join(t.TempDir(), "c"), "--metrics-addr", "localhost")
	assert.Equal(t, ExitUsage, code, "compare --metrics-addr localhost: %s", stderr)
	assert.Contains(t, stderr, `--metrics-addr "localhost"`)
}
