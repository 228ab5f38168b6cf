package cli

import (
	"slices"
	"strings"

	"github.com/agentsim/agentsim/internal/buildinfo"
	"github.com/agentsim/agentsim/internal/redact"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// newReproduction gathers a run's reproduction from its command line (args, without the
// program name), its environment and the settings it resolved.
func newReproduction(args, env []string, seed int64, t targetConfig, embedded bool) *results.Reproduction {
	b := buildinfo.Read()
	r := &results.Reproduction{Agentsim: results.Build{Version: b.Version, Revision: b.Revision, Go: b.Go}, Command: commandLine(args), Env: agentsimEnv(env),
		Seed: seed, Server: results.External}
	if embedded {
		r.Server = results.Embedded
		sim := t.sim()
		r.Simulator = &results.SimulatorSettings{Profile: t.SimProfile, Seed: t.SimSeed, Speedup: sim.Speedup, SpeedupMax: sim.SpeedupMax,
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
