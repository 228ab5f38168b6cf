//go:build unix

package procs

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
)

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu      sync.Mutex
	started []Started
	exited  []Exited
}

func (r *recorder) Started(s Started) { r.mu.Lock(); r.started = append(r.started, s); r.mu.Unlock() }
func (r *recorder) Exited(e Exited)   { r.mu.Lock(); r.exited = append(r.exited, e); r.mu.Unlock() }

// TestSupervisorExits runs processes to their end: each one's exit status and the last line
// of its stderr are reported.
func TestSupervisorExits(t *testing.T) {
	var rec recorder
	spec := Spec{Command: []string{"sh", "-c", `echo "agent $AGENTSIM_AGENT at $OPENAI_BASE_URL"; echo "failing {agent}" >&2; exit $AGENTSIM_AGENT`},
		Agents: 3, Dir: t.TempDir(), Vars: func(int) Vars { return vars }}
	s, err := New(spec, clock.Real(), &rec)
	require.NoError(t, err)
	s.Start()
	<-s.Done()
	require.Len(t, rec.exited, 3)
	for _, e := range rec.exited {
		assert.Equal(t, e.Agent, e.Code, "agent %d's exit status", e.Agent)
		assert.Equal(t, "failing "+string(rune('0'+e.Agent)), e.LastErrLine)
		assert.False(t, e.Stopped)
	}
	assert.Len(t, rec.started, 3)
}

// TestSupervisorStop stops processes that ignore SIGTERM with SIGKILL after the grace period,
// children included, and never starts an agent whose start was still to come.
func TestSupervisorStop(t *testing.T) {
	var rec recorder
	// The process says when it ignores SIGTERM: a stop that came before its trap would end
	// it by SIGTERM, and the test would not see the kill.
	ready := filepath.Join(t.TempDir(), "ready")
	spec := Spec{Command: []string{"sh", "-c", `trap "" TERM; touch "$0"; sleep 600 & wait`, ready}, Agents: 2, Dir: t.TempDir(),
		Vars: func(int) Vars { return vars }, Offsets: []time.Duration{0, time.Hour}, Grace: 100 * time.Millisecond}
	s, err := New(spec, clock.Real(), &rec)
	require.NoError(t, err)
	s.Start()
	require.Eventually(t, func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.started) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { _, err := os.Stat(ready); return err == nil }, 10*time.Second, 5*time.Millisecond, "the process ignores SIGTERM")
	s.Stop()
	s.Stop() // twice is safe
	require.Len(t, rec.exited, 1, "the agent not yet started never starts")
	e := rec.exited[0]
	assert.Equal(t, "killed", e.Signal)
	assert.True(t, e.Stopped)
	assert.Equal(t, "stopped by agentsim (killed)", e.Describe())
}

// TestSupervisorRelativeProgram starts a program named by a relative path, which Validate
// finds from this process's working directory, from there, though each process works in its
// own directory.
func TestSupervisorRelativeProgram(t *testing.T) {
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "harness.sh"), []byte("#!/bin/sh\nexit 7\n"), 0o755))
	t.Chdir(bin)
	var rec recorder
	spec := Spec{Command: []string{"./harness.sh"}, Agents: 1, Dir: t.TempDir(), Vars: func(int) Vars { return vars }}
	require.NoError(t, spec.Validate())
	s, err := New(spec, clock.Real(), &rec)
	require.NoError(t, err)
	s.Start()
	<-s.Done()
	require.Len(t, rec.exited, 1)
	assert.NoError(t, rec.exited[0].StartErr)
	assert.Equal(t, 7, rec.exited[0].Code)
}

// TestSupervisorRelativeArgument: an argument naming a file relative to this process's working
// directory (a script for an interpreter: node scripts/harness.mjs) reaches the process as an
// absolute path, since the process works in its own directory; a word that names no file here
// passes as it is.
func TestSupervisorRelativeArgument(t *testing.T) {
	bin := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(bin, "scripts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "scripts", "harness.sh"), []byte("exit 9\n"), 0o644))
	t.Chdir(bin)
	var rec recorder
	dir := t.TempDir()
	spec := Spec{Command: []string{"sh", "scripts/harness.sh", "no-such-file"}, Agents: 1, Dir: dir, Vars: func(int) Vars { return vars }}
	require.NoError(t, spec.Validate())
	s, err := New(spec, clock.Real(), &rec)
	require.NoError(t, err)
	s.Start()
	<-s.Done()
	require.Len(t, rec.exited, 1)
	assert.NoError(t, rec.exited[0].StartErr)
	assert.Equal(t, 9, rec.exited[0].Code, "sh found the script from its own directory: %s", rec.exited[0].LastErrLine)
	assert.Equal(t, "no-such-file", pathArg("no-such-file"))
	assert.Equal(t, "-v", pathArg("-v"))
}
