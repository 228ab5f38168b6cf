package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
// the soft limit nothing changes; above it the soft limit is raised to what is needed (two files
// per connection with the embedded simulator); above the hard limit, or when the limit cannot
// be raised, the command is refused with exit 2, naming the flag, the files needed, the limit
// and the largest value that fits.
func TestEnsureOpenFiles(t *testing.T) {
	t.Run("within", func(t *testing.T) {
		l := &fakeLimit{soft: 1024, hard: 4096}
		require.NoError(t, ensureOpenFiles(l, "--concurrency", 16, true))
		assert.Equal(t, uint64(1024), l.soft, "not raised")
	})
	t.Run("raised to what is needed", func(t *testing.T) {
		l := &fakeLimit{soft: 1024, hard: 1 << 20}
		require.NoError(t, ensureOpenFiles(l, "--concurrency", 1000, true))
		assert.Equal(t, uint64(2*1000+openFilesReserve), l.soft)
		l = &fakeLimit{soft: 1024, hard: 1 << 20}
		require.NoError(t, ensureOpenFiles(l, "--concurrency", 1000, false))
		assert.Equal(t, uint64(1000+openFilesReserve), l.soft, "an external server's side is not ours")
	})
	t.Run("above the hard limit", func(t *testing.T) {
		l := &fakeLimit{soft: 1024, hard: 4096}
		err := ensureOpenFiles(l, "--concurrency", 100000, true)
		require.Error(t, err)
		assert.Equal(t, ExitUsage, exitCode(err))
		assert.Equal(t, "--concurrency 100000 needs 200064 open files (two per connection, the client's and the embedded simulator's, and 64 more), "+
			"above the open-file limit of 1024 (hard limit 4096): want --concurrency at most 2016 here, or raise the limit first (ulimit -n 200064)", err.Error())
		assert.Equal(t, uint64(1024), l.soft, "left as it was")
	})
	t.Run("not permitted", func(t *testing.T) {
		l := &fakeLimit{soft: 256, hard: 4096, locked: true}
		err := ensureOpenFiles(l, "agents", 500, false)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "agents 500 needs 564 open files")
		assert.Contains(t, err.Error(), "want agents at most 4032 here")
	})
	t.Run("unknown limit", func(t *testing.T) {
		require.NoError(t, ensureOpenFiles(&fakeLimit{getErr: errors.New("no")}, "--concurrency", 1<<30, true))
		require.NoError(t, ensureOpenFiles(nil, "--concurrency", 1<<30, true))
	})
}

// TestBenchConcurrencyAboveFileLimit runs bench --concurrency 100000 as a user would: with the
// process's real limit, it either fits (after raising the soft limit) or is refused with exit 2
// before anything starts; it never starts and runs out of files. Only the refusal is run here:
// a hard limit that admits 200,064 files is skipped.
func TestBenchConcurrencyAboveFileLimit(t *testing.T) {
	_, hard, err := openFileLimit.get()
	if err != nil || hard >= 2*100000+openFilesReserve {
		t.Skipf("hard open-file limit %d admits 100000 connections (err %v)", hard, err)
	}
	code, out, stderr := agentsim(t, "bench", "--concurrency", "100000", "--out", t.TempDir()+"/run")
	assert.Equal(t, ExitUsage, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	assert.Contains(t, stderr, fmt.Sprintf("--concurrency 100000 needs %d open files", 2*100000+openFilesReserve))
	assert.NotContains(t, out, "RESULT")
}

// TestRunAgentsAboveFileLimit runs `run --agents 10000` against the embedded simulator where
// the hard open-file limit cannot hold its 20,064 files: refused with exit 2 before anything
// starts. Skipped where the limit admits them.
func TestRunAgentsAboveFileLimit(t *testing.T) {
	_, hard, err := openFileLimit.get()
	if err != nil || hard >= 2*10000+openFilesReserve {
		t.Skipf("hard open-file limit %d admits 10000 agents (err %v)", hard, err)
	}
	dir := t.TempDir() + "/run"
	code, out, stderr := agentsim(t, "run", "--workload", "smoke", "--agents", "10000", "--out", dir)
	assert.Equal(t, ExitUsage, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	assert.Contains(t, stderr, "agents 10000 needs 20064 open files (two per connection, the client's and the embedded simulator's, and 64 more)")
	assert.NoDirExists(t, dir, "refused before the run directory is made")
}
