package cli

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/bench"
)

// fakeLimit is an open-file limit that records raises and refuses any above hard, or any at
// all when locked.
type fakeLimit struct {
	soft, hard uint64
	locked     bool
	getErr     error
}

func (f *fakeLimit) get() (uint64, uint64, error) { return f.soft, f.hard, f.getErr }

func (f *fakeLimit) set(soft uint64) error {
	if f.locked || soft > f.hard {
		return errors.New("operation not permitted")
	}
	f.soft = soft
	return nil
}

// TestEnsureOpenFiles checks the open-file check each command makes before it starts: within
// the soft limit nothing changes; above it the soft limit is raised to what is needed (one file
// per connection to an external server, none with the embedded simulator); above the hard
// limit, or when the limit cannot be raised, the command is refused with exit 2, naming the
// flag, the files needed, the limit and the largest value that fits.
func TestEnsureOpenFiles(t *testing.T) {
	t.Run("within", func(t *testing.T) {
		l := &fakeLimit{soft: 1024, hard: 4096}
		require.NoError(t, ensureOpenFiles(l, "--concurrency", 16, true))
		assert.Equal(t, uint64(1024), l.soft, "not raised")
	})
	t.Run("raised to what is needed", func(t *testing.T) {
		l := &fakeLimit{soft: 1024, hard: 1 << 20}
		require.NoError(t, ensureOpenFiles(l, "--concurrency", 1000, true))
		assert.Equal(t, uint64(1000+openFilesReserve), l.soft)
	})
	t.Run("embedded simulator", func(t *testing.T) {
		l := &fakeLimit{soft: 1024, hard: 4096}
		require.NoError(t, ensureOpenFiles(l, "--concurrency", 100000, false))
		assert.Equal(t, uint64(1024), l.soft, "reached without sockets: nothing to raise")
	})
	t.Run("above the hard limit", func(t *testing.T) {
		l := &fakeLimit{soft: 1024, hard: 4096}
		err := ensureOpenFiles(l, "--concurrency", 100000, true)
		require.Error(t, err)
		assert.Equal(t, ExitUsage, exitCode(err))
		assert.Equal(t, "--concurrency 100000 needs 100064 open files (one per connection to the server, and 64 more), "+
			"above the open-file limit of 1024 (hard limit 4096): want --concurrency at most 4032 here, or raise the limit first (ulimit -n 100064)", err.Error())
		assert.Equal(t, uint64(1024), l.soft, "left as it was")
	})
	t.Run("not permitted", func(t *testing.T) {
		l := &fakeLimit{soft: 256, hard: 4096, locked: true}
		err := ensureOpenFiles(l, "agents", 500, true)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "agents 500 needs 564 open files")
		assert.Contains(t, err.Error(), "want agents at most 4032 here")
	})
	t.Run("unknown limit", func(t *testing.T) {
		require.NoError(t, ensureOpenFiles(&fakeLimit{getErr: errors.New("no")}, "--concurrency", 1<<30, true))
		require.NoError(t, ensureOpenFiles(nil, "--concurrency", 1<<30, true))
	})
}

// TestBenchConcurrencyAboveFileLimit runs bench --concurrency against an external server as a
// user would, with the process's real limit: above the hard limit it is refused with exit 2
// before anything starts; it never starts and runs out of files. Skipped where the hard limit
// admits the connections.
func TestBenchConcurrencyAboveFileLimit(t *testing.T) {
	const conc = bench.MaxConcurrency
	_, hard, err := openFileLimit.get()
	if err != nil || hard >= conc+openFilesReserve {
		t.Skipf("hard open-file limit %d admits %d connections (err %v)", hard, conc, err)
	}
	code, out, stderr := agentsim(t, "bench", "--server", "http://127.0.0.1:1", "--concurrency", strconv.Itoa(conc), "--out", t.TempDir()+"/run")
	assert.Equal(t, ExitUsage, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	assert.Contains(t, stderr, fmt.Sprintf("--concurrency %d needs %d open files", conc, conc+openFilesReserve))
	assert.NotContains(t, out, "RESULT")
}

// TestRunAgentsAboveFileLimit runs `run --agents` against an external server with a hard
// open-file limit that cannot hold a connection per agent: refused with exit 2 before
// anything starts.
func TestRunAgentsAboveFileLimit(t *testing.T) {
	saved := openFileLimit
	t.Cleanup(func() { openFileLimit = saved })
	openFileLimit = &fakeLimit{soft: 256, hard: 1024}
	dir := t.TempDir() + "/run"
	code, out, stderr := agentsim(t, "run", "--workload", "smoke", "--server", "http://127.0.0.1:1", "--agents", "2000", "--out", dir)
	assert.Equal(t, ExitUsage, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	assert.Contains(t, stderr, "agents 2000 needs 2064 open files (one per connection to the server, and 64 more), above the open-file limit of 256 (hard limit 1024): want agents at most 960 here")
	assert.NoDirExists(t, dir, "refused before the run directory is made")
}
