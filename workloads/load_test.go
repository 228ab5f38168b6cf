package workloads

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentsim/agentsim/pacer"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// writeFile writes content to name in a fresh temporary directory and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// TestPrecedence sets one key at every level of the chain, then removes levels from the top:
// the highest level present must win each time.
func TestPrecedence(t *testing.T) {
	tests := []struct {
		key string
		// values at: workload file, --config file, environment, --set.
		file, config, env, set string
		// get reads the key from the result; want lists what it must be with the top
		// level being --set, env, config, file, and none (the default).
		get  func(*Workload) any
		want [5]any
	}{
		{"agents", "2", "3", "4", "5", func(w *Workload) any { return w.Agents }, [5]any{5, 4, 3, 2, 1}},
		{"model", "f", "c", "e", "s", func(w *Workload) any { return w.Model }, [5]any{"s", "e", "c", "f", "deepseek-v4-flash"}},
		{"request.force_output_length", "true", "false", "true", "false", func(w *Workload) any { return w.Request.ForceOutputLength }, [5]any{false, true, false, true, false}},
		{"request.idle_timeout", "1s", "2s", "3s", "4s", func(w *Workload) any { return w.Request.Idle },
			[5]any{4 * time.Second, 3 * time.Second, 2 * time.Second, time.Second, time.Duration(0)}},
		{"retry.jitter", "0.1", "0.2", "0.3", "0.4", func(w *Workload) any { return w.Retry.Jitter }, [5]any{0.4, 0.3, 0.2, 0.1, 0.0}},
		{"tools.parallel", "false", "true", "false", "true", func(w *Workload) any { return w.Tools.Parallel }, [5]any{true, false, true, false, true}},
		{"tools.set", "coding", "browse", "coding", "browse", func(w *Workload) any { return w.Tools.Set },
			[5]any{"browse", "coding", "browse", "coding", "none"}},
		{"context.read_tokens", "100", "{dist: uniform, min: 1, max: 2}", "{dist: exp, mean: 50}", "300",
			func(w *Workload) any { return w.Context.ReadTokens },
			[5]any{Const(300), Dist{Kind: DistExp, Avg: 50}, Dist{Kind: DistUniform, Min: 1, Max: 2}, Const(100), Const(0)}},
		{"think_time", "1s", "{dist: exp, mean: 2s}", "3s", "{dist: uniform, min: 1s, max: 4s}",
			func(w *Workload) any { return w.ThinkTime },
			[5]any{DurationDist{Kind: DistUniform, Min: time.Second, Max: 4 * time.Second}, ConstDuration(3 * time.Second),
				DurationDist{Kind: DistExp, Avg: 2 * time.Second}, ConstDuration(time.Second), ConstDuration(0)}},
	}
	for _, tt := range tests {
		yamlOf := func(v string) string { return nestYAML(tt.key, v) }
		for top := range 5 { // 0: --set is the top level … 4: only the default
			opts := LoadOptions{Workload: writeFile(t, "w.yaml", "name: w\n")}
			if top <= 3 {
				opts.Workload = writeFile(t, "w.yaml", "name: w\n"+yamlOf(tt.file))
			}
			if top <= 2 {
				opts.ConfigFile = writeFile(t, "c.yaml", yamlOf(tt.config))
			}
			if top <= 1 {
				opts.Env = []string{"HOME=/x", EnvName(tt.key) + "=" + tt.env}
			}
			if top == 0 {
				opts.Overrides = []Override{{Key: tt.key, Value: tt.set, Source: "--set"}}
			}
			w, err := Load(opts)
			require.NoError(t, err, "%s, top level %d", tt.key, top)
			assert.Equal(t, tt.want[top], tt.get(w), "%s with top level %d", tt.key, top)
		}
	}
}

// nestYAML writes "a.b: v" as a nested YAML mapping.
func nestYAML(key, value string) string {
	parts := strings.Split(key, ".")
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(strings.Repeat("  ", i) + p + ":")
		if i < len(parts)-1 {
			b.WriteString("\n")
		}
	}
	b.WriteString(" " + value + "\n")
	return b.String()
}

// TestStrictness checks that an unknown key is an error in every layer, naming the layer.
func TestStrictness(t *testing.T) {
	cfg := writeFile(t, "c.yaml", "pacer:\n  kind: slots\n  slotz: 16\n")
	_, err := Load(LoadOptions{
		Workload:   "smoke",
		ConfigFile: cfg, ConfigSource: "--config " + cfg,
		Env: []string{"AGENTSIM_AGENTZ=8", "AGENTSIM_REQUEST_IDLE_TIMEOUT=1s", "PATH=/bin"},
		Overrides: []Override{
			{Key: "pacer.slotz", Value: "16", Source: "--set"},
			{Key: "context", Value: "5", Source: "--set"},
			{Key: "context.read_tokens.max", Value: "5", Source: "--set"},
		},
	})
	var ce *ConfigError
	require.True(t, errors.As(err, &ce), "Load error %v; want a *ConfigError", err)
	want := []string{
		"--config " + cfg + `: unknown key "pacer.slotz"; did you mean "pacer.slots"?`,
		`AGENTSIM_AGENTZ: unknown key: no workload key is named AGENTSIM_AGENTZ; did you mean AGENTSIM_AGENTS (agents)?`,
		`--set pacer.slotz=16: unknown key "pacer.slotz"; did you mean "pacer.slots"?`,
		`--set context=5: unknown key "context": it is a section; set one of its keys, such as "context.system_tokens"`,
		`--set context.read_tokens.max=5: unknown key "context.read_tokens.max": context.read_tokens is a distribution; set it whole, e.g. context.read_tokens='{dist: uniform, min: 1000, max: 2000}'`,
	}
	assert.Equal(t, strings.Join(want, "\n"), err.Error())
}

// TestOverrideTypeErrors checks that a bad value names the flag that gave it.
func TestOverrideTypeErrors(t *testing.T) {
	_, err := Load(LoadOptions{Workload: "smoke", Overrides: []Override{
		{Key: "agents", Value: "eight", Source: "--agents"},
		{Key: "request.idle_timeout", Value: "60", Source: "--set"},
	}, Env: []string{"AGENTSIM_PACER_SLOTS=many"}})
	want := `AGENTSIM_PACER_SLOTS=many: pacer.slots: "many" is not allowed: want an integer` + "\n" +
		`--agents=eight: agents: "eight" is not allowed: want an integer` + "\n" +
		`--set request.idle_timeout=60: request.idle_timeout: "60" is not allowed: want a duration such as 200ms, 90s or 5m`
	assert.EqualError(t, err, want)
}

// TestEnvIgnored checks that AGENTSIM_API_KEY and non-AGENTSIM variables do not count as
// unknown keys, and that the documented examples work. (AGENTSIM_SERVER and the other
// variables of command flags never reach Load: the command takes them; see the command
// layer's TestEnvSettings.)
func TestEnvIgnored(t *testing.T) {
	w, err := Load(LoadOptions{
		Env: []string{"AGENTSIM_API_KEY=sk-1", "GOPATH=/go",
			"AGENTSIM_AGENTS=8", "AGENTSIM_PACER_SLOTS=16", "AGENTSIM_REQUEST_IDLE_TIMEOUT=60s"},
	})
	require.NoError(t, err)
	assert.Equal(t, "ocbrowse", w.Name, "default workload")
	assert.Equal(t, 8, w.Agents)
	assert.Equal(t, 16, w.Pacer.Slots)
	assert.Equal(t, time.Minute, w.Request.Idle)
}

// TestPacerKindChange checks that naming another pacer kind drops the parameters lower layers
// set for the old kind, and that restating the same kind keeps them.
func TestPacerKindChange(t *testing.T) {
	w, err := Load(LoadOptions{Workload: "ocbrowse", Overrides: []Override{
		{Key: "pacer.kind", Value: "rate"}, {Key: "pacer.rps", Value: "2"}, {Key: "pacer.burst", Value: "4"}}})
	require.NoError(t, err)
	assert.Equal(t, 0, w.Pacer.Slots, "ocbrowse's slots belong to kind slots")
	assert.Equal(t, 2.0, w.Pacer.RPS)

	w, err = Load(LoadOptions{Workload: "ocbrowse", Env: []string{"AGENTSIM_PACER_KIND=slots"}})
	require.NoError(t, err)
	assert.Equal(t, 30, w.Pacer.Slots, "same kind restated keeps slots")
}

// TestPacerKindDefaults checks that a pacer kind named without its parameters takes the
// kind's defaults, while a parameter given as zero is still refused.
func TestPacerKindDefaults(t *testing.T) {
	w, err := Load(LoadOptions{Workload: "ocbrowse", Overrides: []Override{{Key: "pacer.kind", Value: "aimd"}}})
	require.NoError(t, err)
	assert.Equal(t, pacer.Defaults(pacer.KindAIMD), w.Pacer)

	_, err = Load(LoadOptions{Workload: "ocbrowse", Overrides: []Override{
		{Key: "pacer.kind", Value: "aimd"}, {Key: "pacer.max_limit", Value: "0"}}})
	assert.ErrorContains(t, err, "pacer.max_limit: 0 is not allowed")
}

// TestOverridesLaterWins checks that of two overrides of one key the later wins.
func TestOverridesLaterWins(t *testing.T) {
	w, err := Load(LoadOptions{Workload: "smoke", Overrides: []Override{
		{Key: "agents", Value: "3", Source: "--agents"}, {Key: "AGENTS", Value: "7", Source: "--set"}}})
	require.NoError(t, err)
	assert.Equal(t, 7, w.Agents)
}

// TestFileNameDefault checks that a workload file without a name is named after the file.
func TestFileNameDefault(t *testing.T) {
	path := writeFile(t, "my long run.yaml", "agents: 2\n")
	w, err := Load(LoadOptions{Workload: path})
	require.NoError(t, err)
	assert.Equal(t, "my-long-run", w.Name)
	assert.Equal(t, 2, w.Agents)
	assert.Equal(t, Defaults().Watchdog, w.Watchdog, "unset keys keep their defaults")
}

// TestEmptyFile checks that a workload file that sets no key is refused (the defaults alone
// are no workload: the path is wrong or the file truncated), while an empty --config file
// sets nothing.
func TestEmptyFile(t *testing.T) {
	for _, body := range []string{"", "\n\n", "# only a comment\n", "{}\n"} {
		path := writeFile(t, "empty.yaml", body)
		_, err := Load(LoadOptions{Workload: path})
		assert.EqualError(t, err, path+": the file sets no key: want a workload, such as the output of agentsim workloads show smoke",
			"workload file %q", body)
	}
	w, err := Load(LoadOptions{Workload: "smoke", ConfigFile: writeFile(t, "empty.yaml", "")})
	require.NoError(t, err)
	smoke, err := Load(LoadOptions{Workload: "smoke"})
	require.NoError(t, err)
	assert.Equal(t, smoke, w)
}

// TestMissingConfigFile checks that a --config file that cannot be read is reported with the
// other problems.
func TestMissingConfigFile(t *testing.T) {
	_, err := Load(LoadOptions{Workload: "smoke", ConfigFile: "testdata/none.yaml",
		Overrides: []Override{{Key: "agents", Value: "0"}}})
	assert.EqualError(t, err, "config file testdata/none.yaml: cannot read the file: no such file or directory\n"+
		"agents: 0 is not allowed: want an integer from 1 to 10000")
}

// TestYAMLRoundTrip checks that YAML renders every built-in so that loading it back gives
// the same workload.
func TestYAMLRoundTrip(t *testing.T) {
	for _, name := range Names() {
		w, err := Load(LoadOptions{Workload: name})
		require.NoError(t, err)
		b, err := w.YAML()
		require.NoError(t, err)
		back, err := Load(LoadOptions{Workload: writeFile(t, "rt.yaml", string(b))})
		require.NoError(t, err, "yaml:\n%s", b)
		assert.Equal(t, w, back, "yaml:\n%s", b)
	}
}

// TestYAMLForm pins the rendering of durations and distributions.
func TestYAMLForm(t *testing.T) {
	w, err := Load(LoadOptions{Workload: "ocbrowse"})
	require.NoError(t, err)
	b, err := w.YAML()
	require.NoError(t, err)
	for _, line := range []string{
		"duration: 1h\n",
		"  read_tokens: {dist: uniform, min: 2000, max: 12000}\n",
		"think_time: {dist: exp, mean: 2s}\n",
		"  stall_after: 2m\n",
		"sample_interval: 750ms\n",
		"pacer:\n  kind: slots\n  slots: 30\n",
	} {
		assert.Contains(t, string(b), line)
	}
}

// TestRedacted checks that extra keys are written as <redacted> (or "" when unset) and never
// with their value.
func TestRedacted(t *testing.T) {
	w, err := Load(LoadOptions{Workload: "smoke"})
	require.NoError(t, err)
	b, err := w.Redacted(map[string]string{"api_key": "sk-secret", "proxy_password": ""})
	require.NoError(t, err)
	assert.NotContains(t, string(b), "sk-secret")
	assert.Contains(t, string(b), "api_key: <redacted>\nproxy_password: \"\"\n")
	assert.True(t, strings.HasPrefix(string(b), "name: smoke\n"), "workload first:\n%s", b)

	_, err = w.Redacted(map[string]string{"pacer": "x"})
	assert.EqualError(t, err, `redacted key "pacer" is a workload key`)
}

// TestRedactedURL checks that a URL setting is written with its credentials masked and
// nothing else changed, so that the embedded simulator's loopback URL stays readable.
func TestRedactedURL(t *testing.T) {
	w, err := Load(LoadOptions{Workload: "smoke"})
	require.NoError(t, err)
	b, err := w.Redacted(map[string]string{"server": "http://alice:hunter2@gpu-box:8000/?api_key=sk-9&x=1",
		"sim": "http://127.0.0.1:41234"})
	require.NoError(t, err)
	assert.NotContains(t, string(b), "hunter2")
	assert.NotContains(t, string(b), "sk-9")
	assert.Contains(t, string(b), "server: http://redacted@gpu-box:8000/?api_key=redacted&x=1\nsim: http://127.0.0.1:41234\n")
}

// TestRecordedReproduce checks that the reproduce section is written after the settings and
// that LoadRecorded skips it, giving back the workload.
func TestRecordedReproduce(t *testing.T) {
	w, err := Load(LoadOptions{Workload: "smoke"})
	require.NoError(t, err)
	type repro struct {
		Version string   `yaml:"version"`
		Command []string `yaml:"command"`
		SimSeed uint64   `yaml:"sim_seed"`
	}
	b, err := w.Recorded(map[string]string{"server": "http://127.0.0.1:1"},
		repro{Version: "v1.2.3", Command: []string{"agentsim", "run"}, SimSeed: 7})
	require.NoError(t, err)
	assert.Contains(t, string(b), "server: http://127.0.0.1:1\nreproduce:\n  version: v1.2.3\n  command:\n    - agentsim\n    - run\n  sim_seed: 7\n")
	back, err := LoadRecorded(b)
	require.NoError(t, err, "config.yaml:\n%s", b)
	assert.Equal(t, w, back)

	_, err = w.Recorded(map[string]string{ReproduceKey: "x"}, nil)
	assert.EqualError(t, err, `redacted key "reproduce" is a workload key`)
}

// TestKeysAndEnvNames checks that every key has a distinct environment variable and that the
// documented names exist.
func TestKeysAndEnvNames(t *testing.T) {
	seen := map[string]string{}
	for _, k := range Keys() {
		name := EnvName(k)
		if other, dup := seen[name]; dup {
			t.Errorf("keys %q and %q share the variable %s", other, k, name)
		}
		seen[name] = k
	}
	for _, name := range []string{"AGENTSIM_AGENTS", "AGENTSIM_PACER_SLOTS", "AGENTSIM_REQUEST_IDLE_TIMEOUT",
		"AGENTSIM_CONTEXT_READ_TOKENS", "AGENTSIM_WATCHDOG_HANG_AFTER", "AGENTSIM_SAMPLE_INTERVAL", "AGENTSIM_GRACE"} {
		if _, ok := seen[name]; !ok {
			t.Errorf("no key for %s", name)
		}
	}
	assert.Equal(t, fmt.Sprint(len(Keys())), fmt.Sprint(len(schema.byKey)), "keys are unique")
}

// TestUnknownKeysDoNotEchoSecrets checks that a mistyped secret variable or flag is reported
// without its value.
func TestUnknownKeysDoNotEchoSecrets(t *testing.T) {
	_, err := Load(LoadOptions{Workload: "smoke", Env: []string{"AGENTSIM_API_KEYS=sk-live-1"},
		Overrides: []Override{{Key: "api_key", Value: "sk-live-2", Source: "--set"}}})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "sk-live")
	assert.Contains(t, err.Error(), `--set api_key=<redacted>: unknown key "api_key"`)
}

// TestLoadRecorded checks that a run's config.yaml, as Redacted writes it, loads back to the
// same workload, skipping the redacted settings, and that anything else unknown in it is an
// error listed with the other problems.
func TestLoadRecorded(t *testing.T) {
	for _, name := range Names() {
		w, err := Load(LoadOptions{Workload: name})
		require.NoError(t, err)
		b, err := w.Redacted(map[string]string{"server": "http://x", "api_key": "sk-1", "proxy": ""})
		require.NoError(t, err)
		back, err := LoadRecorded(b)
		require.NoError(t, err, "config.yaml:\n%s", b)
		assert.Equal(t, w, back, "config.yaml:\n%s", b)
	}

	_, err := LoadRecorded([]byte("name: r\nagents: 0\nserver: http://x\ncolour: blue\nreproduce: 3\npacer: {kind: slots, slotz: 2}\n"))
	assert.EqualError(t, err, `unknown key "colour"`+"\n"+
		`unknown key "pacer.slotz"; did you mean "pacer.slots"?`+"\n"+
		`unknown key "reproduce"`+"\n"+
		"agents: 0 is not allowed: want an integer from 1 to 10000\n"+
		`pacer.slots: 0 is not allowed: want an integer ≥ 1 for kind "slots"`)
}

// TestKeyType checks the type names command-line help shows for workload keys.
func TestKeyType(t *testing.T) {
	for key, want := range map[string]string{"agents": "int", "seed": "int", "duration": "duration",
		"retry.jitter": "float", "request.stream": "bool", "model": "string",
		"context.read_tokens": "dist", "think_time": "duration-dist", "pacer": "", "agentz": "",
		"tools.latency": "duration-dist", "task.steps": "dist", "pacer.hold_across_tools": "bool"} {
		assert.Equal(t, want, KeyType(key), "KeyType(%q)", key)
	}
}

// TestOverrideString checks how an override is named in messages: by the source its caller
// gave, never by a flag the caller did not name.
func TestOverrideString(t *testing.T) {
	for _, tc := range []struct {
		o    Override
		want string
	}{
		{Override{Key: "pacer.slots", Value: "16"}, "pacer.slots=16"},                                  // no source known
		{Override{Key: "pacer.slots", Value: "16", Source: "--set"}, "--set pacer.slots=16"},           // the command line's --set
		{Override{Key: "agents", Value: "8", Source: "--agents"}, "--agents=8"},                        // a flag that stands for the key
		{Override{Key: "pacer.slots", Value: "16", Source: "Config.Set"}, "Config.Set pacer.slots=16"}, // a test's setting
	} {
		if got := tc.o.String(); got != tc.want {
			t.Errorf("%+v.String() = %q; want %q", tc.o, got, tc.want)
		}
	}
}
