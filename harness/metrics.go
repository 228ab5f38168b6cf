package harness

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agentsim/agentsim/events"
)

// MetricsEndpoint serves the Prometheus metrics of the run in progress at /metrics, so a long
// run can be watched live (docs/files.md §6 lists the metrics). One endpoint outlives the runs
// of a command: each run registers a fresh registry of its own when it starts, and the
// endpoint serves the latest run's until the next one starts or the endpoint is closed. Before
// the first run it serves an empty page.
type MetricsEndpoint struct {
	mu  sync.Mutex
	reg *prometheus.Registry

	srv  *http.Server
	addr string
	done chan struct{} // closed when Serve has returned
}

// ServeMetrics serves /metrics on ln until Close. The goroutine serving it belongs to the
// endpoint and ends with Close.
func ServeMetrics(ln net.Listener) *MetricsEndpoint {
	m := &MetricsEndpoint{reg: prometheus.NewRegistry(), addr: ln.Addr().String(), done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m)
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(m.done)
		_ = m.srv.Serve(ln) // returns http.ErrServerClosed on Close
	}()
	return m
}

// Addr is the address the endpoint listens on, host:port.
func (m *MetricsEndpoint) Addr() string { return m.addr }

// ServeHTTP serves the current run's registry in the Prometheus text format.
func (m *MetricsEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	reg := m.reg
	m.mu.Unlock()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}

// Close stops serving, waiting up to a second for scrapes in progress, and returns when the
// serving goroutine has ended. It is safe to call twice, and on a nil endpoint (nothing served).
func (m *MetricsEndpoint) Close() error {
	if m == nil { // no --metrics-addr: nothing is served
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := m.srv.Shutdown(ctx)
	<-m.done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// use makes reg the registry served.
func (m *MetricsEndpoint) use(reg *prometheus.Registry) {
	m.mu.Lock()
	m.reg = reg
	m.mu.Unlock()
}

// runMetrics is one run's metrics, fed from the same events and samples the run records:
// counters from events as they are recorded, gauges from each sample.
type runMetrics struct {
	stallAfterS float64

	agents       *prometheus.GaugeVec
	sent         prometheus.Counter
	requests     *prometheus.CounterVec
	retries      prometheus.Counter
	inFlight     prometheus.Gauge
	silent       prometheus.Gauge
	oldest       prometheus.Gauge
	maxGap       prometheus.Histogram
	tokens       *prometheus.CounterVec
	chunks       prometheus.Gauge
	pacerHolders prometheus.Gauge
	pacerWaiters prometheus.Gauge
	pacerLongest prometheus.Gauge
	pacerLimit   prometheus.Gauge
	pacerLeaked  prometheus.Gauge
	pacerWait    prometheus.Histogram
	simSeconds   prometheus.Gauge
	lag          prometheus.Gauge
	simLag       prometheus.Gauge
}

// The agent states, so every state is exported (as 0) from the first scrape on.
var metricStates = []events.State{events.StateStarting, events.StateReading, events.StatePacerWait,
	events.StateRequesting, events.StateTool, events.StateBackoff, events.StateThinking, events.StateDone}

// newRunMetrics registers one run's metrics in a registry of their own; stallAfterS is the
// silence, in simulated seconds, after which an open stream counts as silent.
func newRunMetrics(stallAfterS float64) (*runMetrics, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	g := func(name, help string) prometheus.Gauge {
		x := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
		f(x)
		return x
	}
	m := &runMetrics{stallAfterS: stallAfterS}
	m.agents = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "agentsim_agents",
		Help: "Agents per state (starting, reading, pacer_wait, requesting, backoff, thinking, done) at the last sample."}, []string{"state"})
	m.sent = prometheus.NewCounter(prometheus.CounterOpts{Name: "agentsim_requests_sent_total", Help: "Requests sent, every attempt."})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agentsim_requests_total",
		Help: "Requests ended, by outcome (success, error, timeout, cancelled); every attempt."}, []string{"outcome"})
	m.retries = prometheus.NewCounter(prometheus.CounterOpts{Name: "agentsim_retries_total", Help: "Failed attempts that were retried."})
	m.maxGap = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "agentsim_stream_max_gap_seconds",
		Help:    "Longest silence between two bytes of each ended request, in simulated seconds.",
		Buckets: []float64{0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600}})
	m.pacerWait = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "agentsim_pacer_wait_seconds",
		Help:    "Time each acquisition waited in the pacer, in simulated seconds.",
		Buckets: []float64{0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600}})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agentsim_output_tokens_total",
		Help: "Output tokens of successful requests as the server counted them, by kind (reasoning, content)."}, []string{"kind"})
	f(m.agents)
	f(m.sent)
	f(m.requests)
	f(m.retries)
	f(m.maxGap)
	f(m.pacerWait)
	f(m.tokens)
	m.inFlight = g("agentsim_requests_in_flight", "Requests sent without a terminal event at the last sample.")
	m.silent = g("agentsim_streams_silent", "Open requests that have gone at least the watchdog's stall_after without a byte, at the last sample.")
	m.oldest = g("agentsim_stream_oldest_silence_seconds", "Longest time any open request has gone without a byte at the last sample, in simulated seconds.")
	m.chunks = g("agentsim_chunks_received", "Stream chunks received so far, by every request.")
	m.pacerHolders = g("agentsim_pacer_holders", "Pacer permits held at the last sample.")
	m.pacerWaiters = g("agentsim_pacer_waiters", "Agents waiting in the pacer at the last sample.")
	m.pacerLongest = g("agentsim_pacer_longest_wait_seconds", "Longest current wait in the pacer at the last sample, in simulated seconds.")
	m.pacerLimit = g("agentsim_pacer_limit", "The pacer's current limit on permits held; 0 when unbounded or unknown.")
	m.pacerLeaked = g("agentsim_pacer_leaked_permits", "Permits never released (leak_on_timeout) so far.")
	m.simSeconds = g("agentsim_sim_seconds", "Simulated seconds since the run started, at the last sample.")
	m.lag = g("agentsim_scheduling_lag_seconds",
		"Largest scheduling lag of the harness between the last two samples: how much later than due a wait it scheduled ended, in simulated seconds.")
	m.simLag = g("agentsim_simulator_lag_sample_seconds",
		"The embedded simulator's own lag at the last sample (sim_lag_s): how much later than its model it delivered tokens since the sample before, or how far behind its model it is, the larger, in simulated seconds.")
	for _, s := range metricStates {
		m.agents.WithLabelValues(string(s))
	}
	for _, o := range events.RequestOutcomes {
		m.requests.WithLabelValues(string(o))
	}
	m.tokens.WithLabelValues("reasoning")
	m.tokens.WithLabelValues("content")
	return m, reg
}

// event counts one recorded event.
func (m *runMetrics) event(e events.Event) {
	switch {
	case e.Kind == events.RequestSent:
		m.sent.Inc()
	case e.Kind.Terminal():
		m.requests.WithLabelValues(string(e.Kind.RequestOutcome())).Inc()
		m.maxGap.Observe(max(e.MaxGapS, e.SinceLastByteS))
		if e.Kind == events.Done {
			m.tokens.WithLabelValues("reasoning").Add(float64(e.ReasoningTokens))
			m.tokens.WithLabelValues("content").Add(float64(max(e.CompletionTokens-e.ReasoningTokens, 0)))
		}
	case e.Kind == events.Retry:
		m.retries.Inc()
	case e.Kind == events.PacerAcquired:
		m.pacerWait.Observe(e.PacerWaitS)
	}
}

// sample sets the gauges from one sample.
func (m *runMetrics) sample(s events.Sample) {
	m.simSeconds.Set(s.TS)
	m.lag.Set(s.LagS)
	m.simLag.Set(s.SimLagS)
	for _, st := range metricStates {
		m.agents.WithLabelValues(string(st)).Set(float64(s.Agents[st]))
	}
	m.inFlight.Set(float64(s.InFlight))
	m.oldest.Set(s.OldestSilenceS)
	m.chunks.Set(float64(s.ChunksIn))
	m.silent.Set(float64(s.SilentStreams(m.stallAfterS)))
	if p := s.Pacer; p != nil {
		m.pacerHolders.Set(float64(p.InUse))
		m.pacerWaiters.Set(float64(p.Waiting))
		m.pacerLongest.Set(p.LongestWaitS)
		m.pacerLimit.Set(float64(p.Limit))
		m.pacerLeaked.Set(float64(p.Leaked))
	}
}
