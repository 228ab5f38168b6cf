package simserver

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentsim/agentsim/internal/engine"
)

// lagCollector exports the simulator's own lag (engine.Engine.Lag and Behind, see
// docs/engine.md): how late, in simulated seconds, the engine delivers tokens compared with
// its model. At a --speedup the machine cannot keep up with, it grows with the speedup, and
// the server's latencies measure the simulator rather than the server it models.
type lagCollector struct {
	engine                  *engine.Engine
	lag, deliveries, behind *prometheus.Desc
}

var _ prometheus.Collector = (*lagCollector)(nil)

func newLagCollector(e *engine.Engine, model string) *lagCollector {
	labels := prometheus.Labels{"model_name": model}
	return &lagCollector{
		engine: e,
		lag: prometheus.NewDesc("agentsim_simulator_lag_seconds",
			"How late the simulator delivered tokens compared with when its model generated them, simulated seconds, since start: the median (stat=\"p50\", within 12.5 % above), the 99th percentile (stat=\"p99\") and the maximum (stat=\"max\").",
			[]string{"stat"}, labels),
		deliveries: prometheus.NewDesc("agentsim_simulator_lag_deliveries_total",
			"Deliveries of tokens whose lateness agentsim_simulator_lag_seconds summarises.", nil, labels),
		behind: prometheus.NewDesc("agentsim_simulator_behind_seconds",
			"How far behind its model the simulator is now, simulated seconds: the largest lateness carried by a request in a step or a due hand-off.", nil, labels),
	}
}

// Describe sends the descriptions of the lag series.
func (c *lagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lag
	ch <- c.deliveries
	ch <- c.behind
}

// Collect reads the engine's lag once per scrape.
func (c *lagCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.engine.Lag().Stats()
	ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, s.P50.Seconds(), "p50")
	ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, s.P99.Seconds(), "p99")
	ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, s.Max.Seconds(), "max")
	ch <- prometheus.MustNewConstMetric(c.deliveries, prometheus.CounterValue, float64(s.N))
	ch <- prometheus.MustNewConstMetric(c.behind, prometheus.GaugeValue, c.engine.Behind().Seconds())
}
