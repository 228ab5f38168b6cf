package harness

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/fakeserver"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
	"github.com/agentsim/agentsim/workloads"
)

// TestDiagnoseDerivesTheRunsWarnings: for runs that warn, the warnings results.json records
// — its warnings and the lag's — are the ones diagnose.FromDir derives again from the run
// directory, in the same order, so that `agentsim diagnose DIR` says what the run said.
func TestDiagnoseDerivesTheRunsWarnings(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, check func(t *testing.T, dir string)) // runs the scenario and checks its directory
		want string                                                   // a warning the run must give
	}{
		// The model sent is not the workload's, said before the run.
		{"model note", fakeDir(&fakeserver.Server{Models: []string{"some/model"}, Tokens: 8},
			append([]string{"request.force_output_length=false", "request.output_tokens=8", "request.reasoning_effort=none"}, quick...), nil),
			"model: the server does not serve the workload's model"},
		// The outputs are far shorter than the workload asks (8 tokens against 64–128).
		{"output shorter than asked", fakeDir(&fakeserver.Server{Models: []string{"deepseek-v4-flash"}, Tokens: 8},
			append([]string{"request.force_output_length=false", "request.reasoning_effort=none"}, quick...), nil),
			"output lengths: completed requests averaged 8.0 output tokens"},
		// Reasoning asked for, none streamed.
		{"no reasoning", fakeDir(&fakeserver.Server{Models: []string{"deepseek-v4-flash"}}, quick, nil),
			"reasoning: the workload asks for reasoning_effort low"},
		// A window listed below the workload's requests: said before the run, and the
		// refusals that follow are not said again.
		{"context window listed", fakeDir(&fakeserver.Server{Models: []string{"deepseek-v4-flash"}, MaxModelLen: 512, Window: 512, Tokens: 8}, quick, nil),
			"context: the server's context window is 512 tokens (max_model_len)"},
		// Refused for their length by a server that lists no window.
		{"context refused", fakeDir(&fakeserver.Server{Models: []string{"deepseek-v4-flash"}, Window: 512, Tokens: 8}, quick, nil),
			"— rerun with --fit-context=512 to scale the workload's context keys to fit"},
		// Refused for their length although fitted: the server counts three tokens a word.
		{"context refused after a fit", fakeDir(&fakeserver.Server{Models: []string{"deepseek-v4-flash"}, Window: 512, Tokens: 8, TokensPerWord: 3}, quick,
			func(o *Options) { o.FitContext = 512 }),
			"although the workload was fitted to a window of 512 tokens: the server counted"},
		// vLLM's generation counter, bumped when a request ends, contradicts the harness's rate.
		{"gauge contradiction", gaugeDir, "server gauge gen_tok_s (rate(vllm:generation_tokens_total)) contradicts the harness"},
		// The embedded simulator 40 s behind its model: the lag warning.
		{"simulator lag", simLagDir, "simulator lag p99 40 s (simulated) exceeds 1.0 s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, func(t *testing.T, dir string) {
				onDisk, err := results.Read(dir)
				require.NoError(t, err)
				recorded := diagnose.AllWarnings(onDisk)
				require.NotEmpty(t, recorded, "the scenario warns")
				assert.True(t, containsPart(recorded, tc.want), "no warning has %q in\n%q", tc.want, recorded)
				_, derived, err := diagnose.FromDir(dir)
				require.NoError(t, err)
				assert.Equal(t, recorded, diagnose.AllWarnings(derived), "diagnose.FromDir(%s) and results.json disagree", tc.name)
			})
		})
	}
}

// fakeDir runs smoke with overrides against f (see runFake) and checks its directory.
func fakeDir(f *fakeserver.Server, overrides []string, edit func(*Options)) func(*testing.T, func(*testing.T, string)) {
	return func(t *testing.T, check func(*testing.T, string)) {
		ts := f.Start(t)
		r := runFake(t, ts.URL, ts.Client(), clock.Real(), "smoke", overrides, edit)
		require.NoError(t, r.err)
		check(t, r.dir)
	}
}

// gaugeDir runs smoke against a vLLM-shaped server whose generation counter grows only as
// requests end (as TestGaugesAreEvidence) and checks its directory.
func gaugeDir(t *testing.T, check func(*testing.T, string)) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeserver.Server{Models: []string{"deepseek-v4-flash"}, Tokens: 400, ITL: 25 * time.Millisecond, Metrics: fakeserver.VLLM}
		_, hc := f.StartInMemory(t)
		clk, err := clock.New(1)
		require.NoError(t, err)
		r := runFake(t, "http://fake", hc, clk, "smoke", []string{"start_jitter=0s", "request.force_output_length=false",
			"request.output_tokens={dist: uniform, min: 300, max: 500}", "request.max_tokens=1000"}, nil)
		require.NoError(t, r.err)
		check(t, r.dir)
	})
}

// simLagDir runs smoke against the embedded simulator with every request reaching it 40 s
// late (as TestSimulatorLagIsNotTheServer) and checks its directory.
func simLagDir(t *testing.T, check func(*testing.T, string)) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "run")
		w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke"})
		require.NoError(t, err)
		clk, err := clock.New(20)
		require.NoError(t, err)
		sim := simtest.NewServer(t, simserver.Options{Clock: clk, Profile: simserver.DSV4PD()})
		defer sim.Close()
		client := *sim.Client()
		client.Transport = lateTransport{next: client.Transport, clk: clk, delay: 40 * time.Second}
		_, err = Run(t.Context(), Options{Command: "run", Workload: w, Clock: clk, Dir: dir, HTTPClient: &client,
			Target: Target{URL: sim.URL, Kind: results.Embedded, Profile: "dsv4-pd", SimLag: sim.Sim.Engine()}})
		require.NoError(t, err)
		check(t, dir)
	})
}

// containsPart reports whether one of lines contains part.
func containsPart(lines []string, part string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, part) })
}
