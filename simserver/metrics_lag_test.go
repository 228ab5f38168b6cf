package simserver_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/wire"
	"github.com/agentsim/agentsim/simserver"
)

// TestMetricsSimulatorLag checks that /metrics shows the simulator's own lag: one delivery per
// chunk, none late when the simulator keeps up (as it always does in a synctest bubble) — and
// that a request saying, in wire.SentAtHeader, that it was sent 3 s before it reached the handler
// has every chunk delivered 3 s late, the simulator's time in between counting as its lag.
func TestMetricsSimulatorLag(t *testing.T) {
	for _, tc := range []struct {
		name string
		sent time.Duration // before the request reaches the server; 0: no header
		want float64       // seconds
	}{
		{"keeps up", 0, 0},
		{"sent 3 s before", 3 * time.Second, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				ts := startServer(t, simserver.Options{})
				var header []string
				if tc.sent > 0 {
					header = []string{wire.SentAtHeader, strconv.FormatInt(ts.clk.Now().Add(-tc.sent).UnixNano(), 10)}
				}
				resp := ts.post(context.Background(), streamBody(`,"max_tokens":100,"ignore_eos":true`), header...)
				_, err := readFrames(ts.clk, resp.Body)
				require.NoError(t, err)
				resp.Body.Close()

				chunks := ts.gaugeValue("agentsim_stream_chunks_total")
				require.Positive(t, chunks)
				assert.Equal(t, chunks, ts.gaugeValue("agentsim_simulator_lag_deliveries_total"), "one delivery per chunk")
				for _, stat := range []string{"p50", "p99", "max"} {
					assert.InDelta(t, tc.want, ts.gaugeValue("agentsim_simulator_lag_seconds", "stat", stat), 1e-9, stat)
				}
				assert.Zero(t, ts.gaugeValue("agentsim_simulator_behind_seconds"), "an idle simulator is behind nothing")
			})
		})
	}
}
