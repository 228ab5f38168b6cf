package diagnose

import (
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// Analyzer accumulates a run's events and samples and judges, at any simulated time, whether
// the run is healthy, slow or stuck and why. Feed it every event and sample in time order —
// live from the harness, offline through Replay — then ask Verdict or Stall. It is not safe
// for concurrent use; every call is cheap enough to make on every sample.
type Analyzer struct {
	cfg                  Config
	stallS, hangS, slowS float64 // thresholds, simulated seconds
	builder              *results.Builder
	agents               []agentView
	open                 map[string]*request
	sent, ended          int // request_sent and matching terminal events
	ledger               ledger
	failures             map[string]int // failed requests by "class status"
	inv                  invariants
	serial               serialView
	gauges               map[string]*gaugeRun
	scrape               scrapeHealth
	lastProgressS        float64   // last byte or request end, simulated seconds
	busyS                float64   // request-seconds spent by requests that ended
	cut                  []float64 // time so far of each request the run's stop cancelled, seconds
	chunksIn             int64
	samples              int
	inFlightSum          float64
	pacerLimit           int     // the pacer's current limit, from samples; 0 unknown
	lastS                float64 // time of the latest record
	warnedFor            float64 // lastProgressS of the stall episode last warned about
	stop                 *stopMark
	stalls               []pastStall // silences ≥ StallAfter, before lag, of requests that ended
	settled              int         // stalls before this index have their lag measured
	queuedNow            bool        // the server's queued gauge read above 0 in the latest sample
	lagNowS              float64     // the latest sample's lag_s or late_s, the larger, seconds
	lagMaxS              float64     // the largest lag_s or sim_lag_s of any sample so far, seconds
	doing                prompts     // what the requests' prompts tell of the server's work (doing.go)
	sim                  simLag      // the embedded simulator's lag, from the samples
	sampleS              float64     // time of the latest sample, simulated seconds
	run                  runMarks
	proxy                proxyMarks
	exec                 execMarks
}

// New returns an Analyzer for a run configured as c; zero thresholds take their defaults.
func New(c Config) *Analyzer {
	c = c.withDefaults()
	a := &Analyzer{
		cfg:       c,
		stallS:    c.StallAfter.Seconds(),
		hangS:     c.HangAfter.Seconds(),
		slowS:     c.SlowAfter.Seconds(),
		builder:   results.NewBuilder(),
		open:      map[string]*request{},
		ledger:    newLedger(),
		failures:  map[string]int{},
		gauges:    map[string]*gaugeRun{},
		warnedFor: -1,
	}
	for i := 0; i < c.Agents; i++ {
		a.agent(i)
	}
	return a
}

// Event adds one event of events.jsonl.
func (a *Analyzer) Event(e events.Event) {
	a.lastS = max(a.lastS, e.TS)
	if e.Agent < 0 {
		a.onExecStop(e)
		a.builder.Event(e)
		a.onRunEvent(e)
		return
	}
	// Order matters: the stop is judged before its first record counts anywhere; the pacer
	// ledger reads the agent's permit before a round's end clears it, and request_sent reads
	// it to tie the request to its permit.
	a.onStop(e)
	a.builder.Event(e)
	a.onPacerEvent(e)
	a.onRequestEvent(e)
	a.onProxyEvent(e)
	a.onExecEvent(e)
	a.onAgentEnd(e)
	if s, ok := nextState(e); ok {
		a.agent(e.Agent).enter(s, e.TS)
	}
}

// Sample adds one sample of samples.jsonl.
func (a *Analyzer) Sample(s events.Sample) {
	a.lastS = max(a.lastS, s.TS)
	a.builder.Sample(s)
	a.samples++
	a.inFlightSum += float64(s.InFlight)
	a.onStreams(s)
	a.onPacerSample(s)
	a.onGauges(s)
	a.serial.observe(s)
	a.checkSample(s)
}

// LastS returns the time of the latest event or sample fed, in simulated seconds.
func (a *Analyzer) LastS() float64 { return a.lastS }

// LastProgressS returns when a byte last arrived or a request last ended, in simulated seconds
// since the run started (0 before any): as measured, with no lag taken off.
func (a *Analyzer) LastProgressS() float64 { return a.lastProgressS }

// Fill writes into r what the events and samples tell: counts, latencies, tokens, server
// gauges (through results.Builder), the number of agents, the simulated duration nowS and
// the verdict at nowS — once the harness has begun stopping the run, the verdict judged just
// before the stop if that one found work stuck (see stopMark). The fields about the command,
// the server and the wall clock are the caller's.
func (a *Analyzer) Fill(r *results.Results, nowS float64) {
	a.counts(r, nowS)
	r.Requests.Stalled = a.stalledCount(nowS)
	r.SimSeconds = nowS
	r.Agents = len(a.agents)
	r.Verdict = a.judge(nowS, r)
}

// meanInFlight returns the mean number of requests in flight: over the samples when there
// are any, else from the events (request-seconds ÷ elapsed seconds).
func (a *Analyzer) meanInFlight(nowS float64) float64 {
	if a.samples > 0 {
		return a.inFlightSum / float64(a.samples)
	}
	if nowS <= 0 {
		return 0
	}
	busy := a.busyS
	for _, r := range a.open {
		busy += nowS - r.sentS
	}
	return busy / nowS
}
