package console

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
	"github.com/agentsim/agentsim/workloads"
)

// progressLine matches one progress line.
var progressLine = regexp.MustCompile(`^progress (\d+) s wall: t=\s*\d+s \| agents: .* \| in flight \d+, oldest silence \d+ s \| out \d+ tok streamed`)

// TestProgressLines runs the smoke workload (10 rounds) at speedup 1 with an output that is not a terminal
// (a CI log): it prints a whole progress line every 10 s of wall time — no carriage return —
// and nothing of the kind when progress is off or when the output is a terminal (live).
func TestProgressLines(t *testing.T) {
	for _, tc := range []struct {
		name           string
		progress, live bool
		want           bool
	}{
		{"log", true, false, true},
		{"off", false, false, false},
		{"terminal", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w, err := workloads.Load(workloads.LoadOptions{Workload: "smoke",
					Overrides: []workloads.Override{{Key: "rounds", Value: "10", Source: "--set"}}})
				require.NoError(t, err)
				clk := clock.Real()
				sim := simtest.NewServer(t, simserver.Options{Clock: clk})
				defer sim.Close()
				var out bytes.Buffer
				res, err := harness.Run(t.Context(), harness.Options{Command: "run", Workload: w, Clock: clk,
					Target: harness.Target{URL: "http://sim", Kind: results.Embedded, Profile: "dsv4-pd"},
					Dir:    filepath.Join(t.TempDir(), "run"), Observer: NewObserver(&out, clk, tc.live, tc.progress),
					HTTPClient: sim.Client()})
				require.NoError(t, err)
				var lines []string
				for _, l := range strings.Split(out.String(), "\n") {
					if strings.HasPrefix(l, "progress ") {
						lines = append(lines, l)
					}
				}
				if !tc.want {
					assert.Empty(t, lines)
					return
				}
				assert.NotContains(t, out.String(), "\r", "a log gets whole lines")
				require.GreaterOrEqual(t, res.SimSeconds, 20.0, "the smoke run should last over 20 s of wall time at speedup 1")
				want := int(res.SimSeconds / 10)
				assert.InDelta(t, want, len(lines), 1, "one line per 10 s of a %.0f s run:\n%s", res.SimSeconds, out.String())
				prev := 0
				for _, l := range lines {
					m := progressLine.FindStringSubmatch(l)
					require.NotNil(t, m, "progress line %q", l)
					var s int
					_, _ = fmt.Sscan(m[1], &s)
					assert.GreaterOrEqual(t, s-prev, 10, "lines at least 10 s of wall time apart: %q", l)
					prev = s
				}
			})
		})
	}
}

// TestStreamedTokens checks that the status line counts tokens as they stream — finished
// requests' usage plus the chunks of the open ones — not only those of finished requests.
func TestStreamedTokens(t *testing.T) {
	s := events.Sample{TokensOut: 100, InFlight: 2, Streams: []events.Stream{{Chunks: 30}, {Chunks: 12}}}
	assert.Equal(t, int64(142), streamedTokens(s))
	assert.Contains(t, formatStatus(s, 5), "out 142 tok streamed")
	assert.Contains(t, formatStatus(events.Sample{}, 0), "out 0 tok streamed")
}
