// Package harnesstest runs agentsim's harness in a Go test: a built-in or custom workload,
// behind a pacer of the test's own, against the embedded simulated inference server with any
// profile and faults, inside a testing/synctest bubble. It returns the run's results, its
// verdict and its events, so a harness team can keep a pacer-design regression test in its
// own CI:
//
//	func TestMyPacerSurvivesTheWedge(t *testing.T) {
//		res := harnesstest.Run(t, harnesstest.Config{
//			Workload: "ocbrowse",
//			Faults:   []string{"long-context-wedge"},
//			Pacer: func(clk *clock.Clock) (pacer.Pacer, error) {
//				return pacer.NewCustom(&MyDesign{}, clk)
//			},
//		})
//		if res.Verdict.Kind == results.Deadlock {
//			t.Errorf("%s: %s", res.Verdict.Kind, res.Verdict.Summary)
//		}
//	}
//
// In the bubble, simulated time advances only when every goroutine waits, so a run takes as
// long as its computation — the ocbrowse wedge, about 1 230 simulated seconds to its verdict,
// about 2 s of CPU (BenchmarkWedgeToVerdict) — and the same Config gives the same events and
// samples, apart from their wall times.
//
// A pacer of one's own implements pacer.Decider (may this request go now?) and pacer.NewCustom
// makes it a pacer.Pacer with the permits and bookkeeping the verdict reads; a design that
// does its own waiting may implement pacer.Pacer directly, with permits from a pacer it wraps.
package harnesstest

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/agentsim/agentsim/agents"
	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/pacer"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
	"github.com/agentsim/agentsim/workloads"
)

// Config is one run. The zero value runs the ocbrowse workload behind its own pacer (30
// slots) against a healthy dsv4-pd simulator.
type Config struct {
	// Workload names a built-in workload (see workloads.Names: "ocbrowse", "smoke",
	// "synthetic"…) or a workload YAML file; "" means ocbrowse. Unused when Spec is set.
	Workload string
	// Spec is a workload built in code, used instead of Workload; it is validated, and Set
	// does not apply to it.
	Spec *workloads.Workload
	// Set overrides workload keys as agentsim's --set does, e.g. {"pacer.slots": "16",
	// "request.idle_timeout": "60s"}; unknown keys and bad values fail the test.
	Set map[string]string
	// Pacer builds the run's pacer on the run's clock (simulated time); nil uses the
	// workload's pacer section. It is called once per run.
	Pacer func(clk *clock.Clock) (pacer.Pacer, error)
	// Profile names the simulator's engine profile (see simserver.ProfileNames); "" means
	// dsv4-pd.
	Profile string
	// Faults name the simulator's faults, as agentsim's --sim-fault does (see
	// simserver.FaultNames), e.g. "long-context-wedge"; FaultParams set their parameters as
	// "name.key=value" (or "key=value" with one fault), e.g. "long-context-wedge.threshold_tokens=500".
	Faults      []string
	FaultParams []string
	// Seed, when not 0, is the workload's seed (its seed key) and the simulator's; 0 keeps the
	// workload's seed and the simulator's default, 1.
	Seed uint64
	// Scripts, when set, replace the workload's rounds with one script per agent, in agent
	// order, as `agentsim replay` runs a trace's sessions (harness.Options.Scripts).
	Scripts []*agents.Script
	// Transport, when set, wraps the transport that carries the run's requests to the
	// simulator, for a test that looks at what was sent (nil: the simulator's own).
	Transport func(next http.RoundTripper) http.RoundTripper
	// Dir, when set, is the run directory, created if missing, for a test that lays out runs
	// of its own (the parts of a compare directory, say); "" means a new directory under the
	// test's t.TempDir, removed when the test ends.
	Dir string
}

// Result is what a run produced.
type Result struct {
	// Results is results.json: counts, latencies in simulated seconds, the verdict.
	Results *results.Results
	// Verdict is Results.Verdict: what went wrong, if anything, with its evidence.
	Verdict results.Verdict
	// Events are the records of events.jsonl, in the order they were written; times are
	// simulated seconds since the run started.
	Events []events.Event
	// Samples are the records of samples.jsonl, one per sample interval.
	Samples []events.Sample
	// Dir is the run directory (events.jsonl, samples.jsonl, results.json, config.yaml):
	// Config.Dir, or a temporary directory removed when the test ends.
	Dir string
}

// Run runs cfg to its verdict and returns the result; configuration errors and harness
// faults fail the test at once. Called outside a synctest bubble, Run makes one of its own
// with synctest.Test; called inside one, it runs there (and must be called from a goroutine
// of the bubble, not concurrently with synctest.Wait).
func Run(t *testing.T, cfg Config) *Result {
	t.Helper()
	if inBubble() {
		return run(t, cfg, t.TempDir())
	}
	dir := t.TempDir() // the outer test's, so that it outlives the bubble
	var res *Result
	synctest.Test(t, func(t *testing.T) { res = run(t, cfg, dir) })
	return res
}

// inBubble reports whether the calling goroutine is in a synctest bubble: synctest.Wait
// panics outside one.
func inBubble() (in bool) {
	defer func() {
		if recover() != nil {
			in = false
		}
	}()
	synctest.Wait()
	return true
}

// run runs cfg in the current bubble, writing to cfg.Dir or a new directory under parent.
func run(t *testing.T, cfg Config, parent string) *Result {
	t.Helper()
	w := loadWorkload(t, cfg)
	clk, err := clock.New(1) // in a bubble, simulated time is the bubble's virtual time
	if err != nil {
		t.Fatalf("harnesstest: %v", err)
	}
	sim, target := startSim(t, cfg, clk)
	defer sim.Close()
	dir := cfg.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp(parent, "run-"); err != nil {
			t.Fatalf("harnesstest: %v", err)
		}
	}
	var (
		mu      sync.Mutex
		samples []events.Sample // as samples.jsonl records them, without reading it back
	)
	o := harness.Options{
		Command:  "harnesstest",
		Workload: w, Clock: clk, Dir: dir, Observer: testLog{t.Output()},
		Target: target, HTTPClient: httpClient(sim, cfg.Transport),
		NewPacer: cfg.Pacer, Scripts: cfg.Scripts,
		Sampled: func(s events.Sample, _ string) {
			mu.Lock()
			samples = append(samples, s)
			mu.Unlock()
		},
	}
	if o.Prepared, err = harness.Prepare(t.Context(), o); err != nil {
		t.Fatalf("harnesstest: prepare %s: %v", w.Name, err)
	}
	for _, n := range o.Prepared.Said() {
		fmt.Fprintln(t.Output(), n)
	}
	res, err := harness.Run(t.Context(), o)
	if err != nil {
		t.Fatalf("harnesstest: run %s: %v", w.Name, err)
	}
	evs, err := rundir.ReadEvents(dir)
	if err != nil {
		t.Fatalf("harnesstest: %v", err)
	}
	return &Result{Results: res, Verdict: res.Verdict, Events: evs, Samples: samples, Dir: dir}
}

// httpClient is the simulator's client, its transport wrapped by wrap when set.
func httpClient(sim *simtest.Server, wrap func(http.RoundTripper) http.RoundTripper) *http.Client {
	c := sim.Client()
	if wrap == nil {
		return c
	}
	wrapped := *c
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	wrapped.Transport = wrap(next)
	return &wrapped
}

// startSim starts the simulator cfg describes in-process (simtest.NewLocalServer, as commands
// serve their embedded simulator), on clk, and returns it and the target that describes it to
// the harness.
func startSim(t *testing.T, cfg Config, clk *clock.Clock) (*simtest.Server, harness.Target) {
	t.Helper()
	name := cfg.Profile
	if name == "" {
		name = "dsv4-pd"
	}
	prof, err := simserver.LookupProfile(name)
	if err != nil {
		t.Fatalf("harnesstest: Config.Profile: %v", err)
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = 1
	}
	faults, err := simserver.ParseFaults(cfg.Faults, cfg.FaultParams, seed)
	if err != nil {
		t.Fatalf("harnesstest: Config.Faults, Config.FaultParams: %v", err)
	}
	sim := simtest.NewLocalServer(t, simserver.Options{Clock: clk, Profile: prof, Faults: faults})
	return sim, harness.Target{URL: sim.URL, Kind: results.Embedded, Profile: prof.Name, Faults: faults.Names(), SimLag: sim.Sim.Engine()}
}

// loadWorkload resolves cfg's workload: Spec validated, or Workload with Set applied.
func loadWorkload(t *testing.T, cfg Config) *workloads.Workload {
	t.Helper()
	if cfg.Spec != nil {
		if len(cfg.Set) > 0 {
			t.Fatalf("harnesstest: Config.Set does not apply to Config.Spec: set the fields of Spec instead")
		}
		w := *cfg.Spec
		if cfg.Seed != 0 {
			w.Seed = int64(cfg.Seed)
		}
		if err := w.Validate(); err != nil {
			t.Fatalf("harnesstest: Config.Spec: %v", err)
		}
		return &w
	}
	var over []workloads.Override
	for _, k := range slices.Sorted(maps.Keys(cfg.Set)) {
		over = append(over, workloads.Override{Key: k, Value: cfg.Set[k], Source: "Config.Set"})
	}
	if cfg.Seed != 0 {
		over = append(over, workloads.Override{Key: "seed", Value: fmt.Sprint(cfg.Seed), Source: "Config.Seed"})
	}
	name := cfg.Workload
	if name == "" {
		name = "ocbrowse"
	}
	w, err := workloads.Load(workloads.LoadOptions{Workload: name, Overrides: over})
	if err != nil {
		t.Fatalf("harnesstest: workload %q: %v", name, err)
	}
	return w
}

// testLog is the harness.Observer of a test's run: the warnings the run gives go to the test's
// output, as a command prints them on its console.
type testLog struct{ out io.Writer }

func (l testLog) Warned(msg string)                   { fmt.Fprintln(l.out, msg) }
func (testLog) Ticked(events.Sample, float64, string) {}
func (testLog) Stopped()                              {}
