package harness

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
	"github.com/agentsim/agentsim/workloads"
)

// TestBusyServerAtStartWarns runs against a simulator already decoding another client's
// long request: the run warns, from the gauges it read before sending anything, that the
// server was busy and its rates are not the run's alone.
func TestBusyServerAtStartWarns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.New(1)
		require.NoError(t, err)
		sim := simtest.NewLocalServer(t, simserver.Options{Clock: clk})
		defer sim.Close()
		ctx, cancel := context.WithCancel(t.Context())
		other := make(chan struct{})
		go func() { // another client's request, decoding for the whole run
			defer close(other)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, sim.URL+"/v1/chat/completions", strings.NewReader(
				`{"model":"deepseek-v4-flash","stream":true,"max_tokens":100000,"ignore_eos":true,"messages":[{"role":"user","content":"go on"}]}`))
			if resp, err := sim.Client().Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		require.NoError(t, clk.Sleep(ctx, 5*time.Second)) // it is decoding by now
		w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke"})
		require.NoError(t, err)
		dir := filepath.Join(t.TempDir(), "run")
		_, err = Run(t.Context(), Options{Command: "run", Workload: w, Clock: clk, Dir: dir, HTTPClient: sim.Client(),
			Target: Target{URL: sim.URL, Kind: results.External}})
		require.NoError(t, err)
		cancel()
		<-other
		evs, err := events.ReadFile[events.Event](filepath.Join(dir, "events.jsonl"))
		require.NoError(t, err)
		var warned []string
		for _, e := range evs {
			if e.Kind == events.Warning && strings.HasPrefix(e.Message, "the server was already busy") {
				warned = append(warned, e.Message)
			}
		}
		require.Len(t, warned, 1)
		assert.Contains(t, warned[0], "decode_running 1")
	})
}
