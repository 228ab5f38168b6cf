package cli

import (
	"strings"
	"testing"
)

// FuzzSetFlag parses arbitrary --set arguments as the command line does and resolves them on a
// built-in. It must not panic; every refusal is a usage error (exit 2); a value given for a key
// whose name suggests a secret is never echoed.
func FuzzSetFlag(f *testing.F) {
	for _, seed := range []string{
		"pacer.slots=16", "agents=0", "agents", "=", "=5", "agents==3", " agents =3", "AGENTS=3",
		"retry.jitter=NaN", "retry.jitter=-Inf", "pacer.rps=+Inf", "context.read_tokens={dist: normal, mean: NaN, stddev: 1}",
		"think_time={dist: exp, mean: 2s}", "request.output_tokens={dist: exp, mean: 50}", "context.initial_tokens=0",
		"api_key=sk-secret-1", "pacer.slotz=16", "pacer=x", "duration=1e400s", "seed=99999999999999999999",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		var o overrides
		if err := (&setFlag{&o}).Set(arg); err != nil {
			t.Fatalf("Set(%q) = %v; problems are collected, not returned", arg, err)
		}
		_, err := loadWorkload(nil, "smoke", "", nil, &o)
		if err == nil {
			return
		}
		if code := exitCode(err); code != ExitUsage {
			t.Fatalf("--set %q: exit %d (%v); want %d", arg, code, err, ExitUsage)
		}
		key, val, _ := strings.Cut(arg, "=")
		if val != "" && strings.Contains(strings.ToLower(key), "key") && strings.Contains(err.Error(), "="+val) {
			t.Fatalf("--set %q: the error echoes the value: %v", arg, err)
		}
	})
}
