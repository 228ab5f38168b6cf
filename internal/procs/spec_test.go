package procs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var vars = Vars{URL: "http://127.0.0.1:9/agents/2", BaseURL: "http://127.0.0.1:9/agents/2/v1", Model: "m1", APIKey: "k"}

// TestArgs replaces each placeholder in every argument and leaves the rest as it is.
func TestArgs(t *testing.T) {
	s := Spec{Command: []string{"harness", "--base={base_url}", "{url}/health", "-m", "{model}", "agent-{agent}", "{other}"}}
	got := s.Args(2, vars)
	want := []string{"harness", "--base=http://127.0.0.1:9/agents/2/v1", "http://127.0.0.1:9/agents/2/health", "-m", "m1", "agent-2", "{other}"}
	assert.Equal(t, want, got, "Args(2, %+v)", vars)
}

// TestEnviron sets the five variables over the caller's environment, replacing its own.
func TestEnviron(t *testing.T) {
	s := Spec{Env: []string{"PATH=/bin", "OPENAI_BASE_URL=https://api.example", "OPENAI_API_KEY=real"}}
	got := s.Environ(2, vars)
	assert.Equal(t, []string{"PATH=/bin", "OPENAI_BASE_URL=http://127.0.0.1:9/agents/2/v1", "OPENAI_API_KEY=k",
		"AGENTSIM_URL=http://127.0.0.1:9/agents/2", "AGENTSIM_AGENT=2", "AGENTSIM_MODEL=m1"}, got)
}

// TestValidate refuses what cannot run, naming it.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Agents: 1}, "command: none given"},
		{Spec{Command: []string{"no-such-program-anywhere"}, Agents: 1}, `command "no-such-program-anywhere": not found`},
		{Spec{Command: []string{"sh"}, Agents: 0}, "agents: 0 is not allowed: want at least 1"},
	} {
		err := tc.spec.Validate()
		require.Error(t, err, "Validate(%+v)", tc.spec)
		assert.Contains(t, err.Error(), tc.want, "Validate(%+v)", tc.spec)
	}
	assert.NoError(t, Spec{Command: []string{"sh"}, Agents: 2}.Validate())
}

// TestLastLine reads the last non-empty line of a file's tail, cut at 300 bytes.
func TestLastLine(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ body, want string }{
		{"", ""},
		{"one\ntwo\n\n\n", "two"},
		{strings.Repeat("x", 5000) + "\nlast words\n", "last words"},
		{strings.Repeat("y", 400), strings.Repeat("y", 300) + "…"},
	} {
		p := filepath.Join(dir, "err")
		require.NoError(t, os.WriteFile(p, []byte(tc.body), 0o644))
		assert.Equal(t, tc.want, lastLine(p), "lastLine of %q", tc.body[:min(len(tc.body), 20)])
	}
	assert.Equal(t, "", lastLine(filepath.Join(dir, "missing")))
}
