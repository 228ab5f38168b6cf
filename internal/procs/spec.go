package procs

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Spec is what a Supervisor starts.
type Spec struct {
	// Command is the program and its arguments, with the placeholders {url}, {base_url},
	// {model} and {agent} replaced per process (see Vars).
	Command []string
	// Agents is how many copies run, ≥ 1; agent i is the i-th, from 0.
	Agents int
	// Env is the environment every process starts from (the caller's, os.Environ's form);
	// the variables of Vars are set over it.
	Env []string
	// Vars gives each agent's values; it is called once per agent before it starts.
	Vars func(agent int) Vars
	// Dir is the run directory: agent i works in Dir/procs/i and writes Dir/procs/i.out and
	// Dir/procs/i.err.
	Dir string
	// Offsets are the agents' start times after Start, one per agent (the start jitter);
	// nil starts all at once.
	Offsets []time.Duration
	// Grace is how long a process may take to exit after SIGTERM before SIGKILL, wall time;
	// 0 means DefaultGrace.
	Grace time.Duration
}

// DefaultGrace is the time between SIGTERM and SIGKILL when Spec.Grace is 0.
const DefaultGrace = 5 * time.Second

// Vars are one agent's values, given to it as environment variables and placeholders.
type Vars struct {
	// URL is its server root (AGENTSIM_URL, {url}); BaseURL the OpenAI base URL, URL + /v1
	// (OPENAI_BASE_URL, {base_url}).
	URL, BaseURL string
	// Model is the model to name (AGENTSIM_MODEL, {model}); APIKey the bearer token
	// (OPENAI_API_KEY).
	Model, APIKey string
}

// Validate checks the command and the count: the program must be found (on PATH, or as a
// path), since a run of processes that cannot start says nothing about a server.
func (s Spec) Validate() error {
	var errs []error
	if len(s.Command) == 0 {
		errs = append(errs, errors.New("command: none given: name the harness to run after --, e.g. -- node harness.mjs"))
	} else if _, err := exec.LookPath(s.Command[0]); err != nil {
		errs = append(errs, fmt.Errorf("command %q: %w", s.Command[0], unwrapExec(err)))
	}
	if s.Agents < 1 {
		errs = append(errs, fmt.Errorf("agents: %d is not allowed: want at least 1", s.Agents))
	}
	if s.Offsets != nil && len(s.Offsets) != s.Agents {
		errs = append(errs, fmt.Errorf("offsets: %d given for %d agents", len(s.Offsets), s.Agents))
	}
	return errors.Join(errs...)
}

// unwrapExec keeps what exec.LookPath found wrong, without repeating the name.
func unwrapExec(err error) error {
	var e *exec.Error
	if errors.As(err, &e) {
		if errors.Is(e.Err, exec.ErrNotFound) {
			return errors.New("not found: not an executable on PATH nor a path to one")
		}
		return e.Err
	}
	return err
}

// Args returns the command of agent with its placeholders replaced.
func (s Spec) Args(agent int, v Vars) []string {
	r := strings.NewReplacer("{url}", v.URL, "{base_url}", v.BaseURL, "{model}", v.Model, "{agent}", strconv.Itoa(agent))
	out := make([]string, len(s.Command))
	for i, a := range s.Command {
		out[i] = r.Replace(a)
	}
	return out
}

// Environ returns agent's environment: Env with the variables of §15 set over it.
func (s Spec) Environ(agent int, v Vars) []string {
	set := map[string]string{
		"OPENAI_BASE_URL": v.BaseURL, "OPENAI_API_KEY": v.APIKey, "AGENTSIM_URL": v.URL,
		"AGENTSIM_AGENT": strconv.Itoa(agent), "AGENTSIM_MODEL": v.Model,
	}
	out := make([]string, 0, len(s.Env)+len(set))
	for _, kv := range s.Env {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := set[name]; !ok {
			out = append(out, kv)
		}
	}
	for _, name := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENTSIM_URL", "AGENTSIM_AGENT", "AGENTSIM_MODEL"} {
		out = append(out, name+"="+set[name])
	}
	return out
}

// WorkDir is agent's working directory under the run directory dir, procs/<agent>.
func WorkDir(dir string, agent int) string { return filepath.Join(dir, "procs", strconv.Itoa(agent)) }

// OutFile is agent's standard output, procs/<agent>.out.
func OutFile(dir string, agent int) string {
	return filepath.Join(dir, "procs", strconv.Itoa(agent)+".out")
}

// ErrFile is agent's standard error, procs/<agent>.err.
func ErrFile(dir string, agent int) string {
	return filepath.Join(dir, "procs", strconv.Itoa(agent)+".err")
}
