// Package harness runs a workload: it starts the agents behind the pacer against a server,
// records events.jsonl, samples.jsonl, results.json and config.yaml, watches for hangs, and
// stops in two phases (duration ends new rounds; a grace period later, requests in flight are
// cancelled).
package harness

import (
	"net/http"

	"github.com/agentsim/agentsim/agents"
	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/pacer"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// Options configures one run.
type Options struct {
	// Command names the command in results.json ("run").
	Command string
	// Workload is the resolved, validated workload.
	Workload *workloads.Workload
	// Clock is the run's single source of time (speedup > 1 only with the embedded server);
	// nil: the run adopts the speedup the server advertises (Prepare), real time for any
	// server but an agentsim one.
	Clock *clock.Clock
	// Target is the server and how to reach it.
	Target Target
	// Dir is the run directory; it is created if missing.
	Dir string
	// Observer, when set, is told the warnings the run gives and how it stands after each
	// sample, for a console; the run prints nothing.
	Observer Observer
	// HTTPClient carries the requests (nil: a client sized for the workload's agents).
	HTTPClient *http.Client
	// Sampled, when set, is a live view: it is called with every sample as it is taken (the
	// first at the start of the run, the last at its end) and the one-line description of the
	// server gauges found so far, on the sampler's goroutine; it must return quickly.
	Sampled func(s events.Sample, metrics string)
	// NewPacer, when set, builds the run's pacer on the clock it is given (the run's, which
	// measures its waits) instead of the workload's pacer section. The run's events name the
	// pacer by its String, and its verdict assumes nothing of the design beyond what its Stats
	// show; config.yaml still records the workload's pacer section, so `agentsim diagnose`
	// of the directory judges by that. A pacer that is an io.Closer is closed when the run
	// ends.
	NewPacer func(clk *clock.Clock) (pacer.Pacer, error)
	// Reproduce, when set, says how to make the run again; it is written to config.yaml's
	// reproduce section and to results.json.
	Reproduce *results.Reproduction
	// Metrics, when set, serves the run's own Prometheus metrics while it runs (see
	// ServeMetrics); the caller owns it and closes it after the run.
	Metrics *MetricsEndpoint

	// Prepared, when set, is what Prepare settled for these options — the workload sent, the
	// model, the clock, the notes — and the run asks the server nothing; nil: Run prepares
	// the run itself, RunChecked from Served alone.
	Prepared *Prepared
	// Served is what the server said on GET /v1/models (AskServer) when the caller has it
	// already: Prepare then does not ask again, so GET /v1/models is asked once per command
	// however many runs it makes. nil: Prepare asks (RunChecked: nothing is known, the
	// workload is sent as it is).
	Served *Served
	// Model, when set, is the model a command making several runs has already chosen
	// (Prepared.Model of its first); nil: Prepare chooses from the workload's model and
	// Served (ChooseModel).
	Model *ModelChoice
	// PinModel says the user named the workload's model (the workload key model): a server
	// that does not serve it is a *ModelError, never replaced by the one it serves.
	PinModel bool
	// AnyModel says the workload's model is no preference: the model the server serves is
	// sent, the first it lists when it serves several (agentsim bench without a model).
	AnyModel bool
	// FitContext scales the workload's context keys and output lengths to fit the server's
	// context window: 0 does not (a workload too large for the window is only warned
	// about), FitToServer fits the window /v1/models lists, > 0 that many tokens.
	FitContext int

	// Scripts, when set, replace the workload's rounds with one script per agent, in agent
	// order: a replayed trace's sessions (agentsim replay). The workload then says only how
	// many agents there are and how each request is sent.
	Scripts []*agents.Script
	// Load, when set, is what the run_start event says of the agents' load, in place of
	// "30 agents × 8 rounds", or with Scripts "30 agents replaying recorded sessions" (bench's
	// open-loop test, whose scripts are its schedule).
	Load string
	// Tap, when set, is called with every request's result and the arrival times of its
	// frames, on the agent's goroutine, as each request ends (agentsim bench).
	Tap agents.Tap
}

// NewHTTPClient returns a client for conns concurrent requests: one idle connection each kept
// for reuse, no overall timeout (request timeouts are simulated time, enforced by the caller)
// and HTTP/1.1 as inference servers speak it. Its connections buffer 1 KiB each way instead of
// 4 KiB: a stream's frames are a few hundred bytes, a request body is written through in one
// piece, and at thousands of agents the buffers are much of the harness's memory.
func NewHTTPClient(conns int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = conns + 16
	t.MaxIdleConnsPerHost = conns + 16
	t.ForceAttemptHTTP2 = false
	t.ReadBufferSize, t.WriteBufferSize = connBufferBytes, connBufferBytes
	return &http.Client{Transport: t}
}

// connBufferBytes is the read and the write buffer of each client connection, in bytes.
const connBufferBytes = 1 << 10
