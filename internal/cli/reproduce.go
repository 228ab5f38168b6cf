package cli

import (
	"slices"
	"strings"

	"github.com/agentsim/agentsim/internal/buildinfo"
	"github.com/agentsim/agentsim/internal/redact"
	"github.com/agentsim/agentsim/workloads"
)

// reproduction is what a run directory records so that the run can be made again: the program,
// the command line and environment it was given, and every setting outside the workload that
// shaped it. The workload itself is the rest of config.yaml. No field holds a secret.
type reproduction struct {
	// Agentsim is the program that made the run.
	Agentsim buildinfo.Info `yaml:"agentsim" json:"agentsim"`
	// Command is the command line, shell-quoted, with the API key and URL credentials masked.
	Command string `yaml:"command" json:"command"`
	// Env lists the AGENTSIM_ variables set, as NAME=value, masked the same way.
	Env []string `yaml:"env,omitempty" json:"env,omitempty"`
	// Seed is the workload's seed (text, lengths, timing).
	Seed int64 `yaml:"seed" json:"seed"`
	// Server is "embedded" or "external".
	Server string `yaml:"server" json:"server"`
	// Simulator is the embedded simulator's settings; nil with an external server.
	Simulator *simReproduction `yaml:"simulator,omitempty" json:"simulator,omitempty"`
}

// simReproduction is the embedded simulator's part of a reproduction.
type simReproduction struct {
	// Profile is the engine profile (--sim-profile).
	Profile string `yaml:"profile" json:"profile"`
	// Seed is the simulator's seed (--sim-seed).
	Seed uint64 `yaml:"seed" json:"seed"`
	// Speedup is how many times faster than wall time simulated time ran (--speedup).
	Speedup float64 `yaml:"speedup" json:"speedup"`
	// Faults are the faults injected (--sim-fault), with their parameters (--sim-fault-param).
	Faults      []string `yaml:"faults" json:"faults"`
	FaultParams []string `yaml:"fault_params" json:"fault_params"`
}

// newReproduction gathers a run's reproduction from its command line (args, without the
// program name), its environment and the settings it resolved.
func newReproduction(args, env []string, seed int64, t targetConfig, embedded bool) reproduction {
	r := reproduction{Agentsim: buildinfo.Read(), Command: commandLine(args), Env: agentsimEnv(env),
		Seed: seed, Server: "external"}
	if embedded {
		r.Server = "embedded"
		r.Simulator = &simReproduction{Profile: t.SimProfile, Seed: t.SimSeed, Speedup: t.Speedup,
			Faults: nonNil(t.SimFaults), FaultParams: nonNil(t.SimFaultParams)}
	}
	return r
}

// secretFlags are the flags whose value is a credential.
var secretFlags = []string{"--api-key"}

// commandLine renders args as one shell-quoted command line starting with "agentsim", the
// value of every secret flag replaced by workloads.RedactedValue and URL credentials masked.
func commandLine(args []string) string {
	out := []string{"agentsim"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, inline := strings.Cut(a, "=")
		switch {
		case slices.Contains(secretFlags, name) && inline:
			a = name + "=" + workloads.RedactedValue
		case slices.Contains(secretFlags, a) && i+1 < len(args):
			out = append(out, a)
			i++
			a = workloads.RedactedValue
		default:
			a = redact.Text(a)
		}
		out = append(out, shellQuote(a))
	}
	return strings.Join(out, " ")
}

// agentsimEnv returns env's AGENTSIM_ variables, sorted, the API key's value replaced by
// workloads.RedactedValue and URL credentials masked.
func agentsimEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, workloads.EnvPrefix) {
			continue
		}
		if name == workloads.EnvName("api-key") {
			val = workloads.RedactedValue
		}
		out = append(out, name+"="+redact.Text(val))
	}
	slices.Sort(out)
	return out
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain word characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
