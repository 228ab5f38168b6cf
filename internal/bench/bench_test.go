package bench

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// resultLine matches the RESULT line and captures N, max_tokens, wall, ok, sent and the three
// latencies, then, at a speedup other than 1, the speedup and the real wall time.
var resultLine = regexp.MustCompile(`(?m)^RESULT N=(\d+) max_tokens=(\d+) wall=([\d.]+)s ok=(\d+)/(\d+) lat_min=([\d.]+)s lat_max=([\d.]+)s lat_mean=([\d.]+)s(?: speedup=([\d.]+) wall_real=([\d.]+)s)?$`)

// sampleLine matches a sample line in the incident's shape.
var sampleLine = regexp.MustCompile(`(?m)^t=[ \d]{2}\.\ds decode_running=\d+\.\d prefill_inflight=\d+\.\d queued=\d+\.\d kv_usage=\d\.\d{3}$`)

// parsed is a RESULT line's figures.
type parsed struct {
	n, maxTokens, ok, sent        int
	wall, latMin, latMax, latMean float64
	speedup, wallReal             float64 // 0 at speedup 1, where the line has neither
}

func parseResult(t *testing.T, out string) parsed {
	t.Helper()
	m := resultLine.FindStringSubmatch(out)
	require.NotNil(t, m, "no RESULT line in:\n%s", out)
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	atof := func(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }
	return parsed{n: atoi(m[1]), maxTokens: atoi(m[2]), wall: atof(m[3]), ok: atoi(m[4]), sent: atoi(m[5]),
		latMin: atof(m[6]), latMax: atof(m[7]), latMean: atof(m[8]), speedup: atof(m[9]), wallReal: atof(m[10])}
}

// TestDecisiveBatchingTest runs the incident's test (16 × 128 tokens, ~200-token prompts)
// against the embedded dsv4-pd simulator and checks the RESULT line against the incident's figures
// (wall 5.4 s, lat_mean 5.1 s within 10 %, lat_min 3.9 s within 15 %) and the samples: the
// metrics line first, then decode_running climbing from 0 to 16.
func TestDecisiveBatchingTest(t *testing.T) {
	for _, speedup := range []float64{1, 20} {
		t.Run(fmt.Sprintf("speedup=%g", speedup), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rep, out := simRun(t, speedup, nil, Options{})
				r := parseResult(t, out)
				assert.Equal(t, parsed{n: 16, maxTokens: 128, ok: 16, sent: 16}, parsed{n: r.n, maxTokens: r.maxTokens, ok: r.ok, sent: r.sent}, out)
				assert.InEpsilon(t, 5.4, r.wall, 0.10, "wall_s\n%s", out)
				assert.InEpsilon(t, 5.1, r.latMean, 0.10, "lat_mean_s\n%s", out)
				assert.InEpsilon(t, 3.9, r.latMin, 0.15, "lat_min_s\n%s", out)
				assert.LessOrEqual(t, r.latMax, r.wall, "no latency exceeds the wall")
				if speedup == 1 {
					assert.Zero(t, r.speedup, "at speedup 1 the times are wall times: %s", out)
				} else {
					assert.Equal(t, speedup, r.speedup, "the line says its times are simulated")
					assert.InDelta(t, r.wall/speedup, r.wallReal, 0.06, "wall_real is the simulated wall over the speedup")
				}

				for _, row := range []string{"ttft", "tpot", "itl", "e2e"} {
					assert.Regexp(t, `(?m)^\s+`+row+`(\s+[\d.]+ m?s){4}$`, out, "the %s percentiles", row)
				}
				lines := strings.Split(out, "\n")
				assert.True(t, strings.HasPrefix(lines[0], "server metrics: decode_running ← decode_running"), "first line: %q", lines[0])
				assert.GreaterOrEqual(t, len(sampleLine.FindAllString(out, -1)), 7, "sample lines every 0.75 s over 5.4 s:\n%s", out)

				samples := rep.Points[0].Samples
				require.NotEmpty(t, samples)
				assert.Equal(t, 0.0, samples[0].Server[events.DecodeRunning], "idle at t=0")
				peakAt := -1
				for i, s := range samples {
					if s.Server[events.DecodeRunning] == 16 {
						peakAt = i
						break
					}
				}
				require.Positive(t, peakAt, "decode_running reaches 16:\n%s", out)
				for i := 1; i <= peakAt; i++ {
					assert.GreaterOrEqual(t, samples[i].Server[events.DecodeRunning], samples[i-1].Server[events.DecodeRunning], "decode_running climbs: sample %d", i)
				}
				assert.True(t, rep.AllOK())
			})
		})
	}
}

// TestSweepThroughput checks the throughput curve at 64 and 96 concurrent requests against the
// calibration's pure-decode aggregate rates, 812 and 845 tok/s, within 5 %.
func TestSweepThroughput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rep, out := simRun(t, 20, nil, Options{Concurrency: []int{64, 96}, Sweep: true})
		res := rep.Results()
		require.Len(t, res.Bench.Sweep, 2, out)
		for i, want := range []struct {
			n   int
			tok float64
		}{{64, 812}, {96, 845}} {
			sp := res.Bench.Sweep[i]
			assert.Equal(t, want.n, sp.Concurrency)
			assert.Equal(t, want.n, sp.OK, "all ok")
			assert.InEpsilon(t, want.tok, sp.OutputTokPerS, 0.05, "aggregate tok/s at %d concurrent\n%s", want.n, out)
			assert.Less(t, sp.PerRequestTokPerS, sp.OutputTokPerS/4, "each request gets a small share of the aggregate")
		}
		assert.Contains(t, out, "throughput curve")
		assert.Contains(t, out, "scaling: aggregate ")
		assert.NotRegexp(t, `(?m)^t=`, out, "a sweep prints no sample lines")
		assert.Len(t, resultLine.FindAllString(out, -1), 2, "one RESULT line per concurrency")
		assert.Regexp(t, `(?m)^test 1/2: 64 requests at once, 0 s simulated so far\n(?s:.*)^test 2/2: 96 requests at once, \d+ s simulated so far$`, out, "progress before each test")
	})
}

// TestSerializedServerShowsFlatCurve checks that a server whose decode batch is one request
// gives a flat curve and says so.
func TestSerializedServerShowsFlatCurve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rep, out := simRun(t, 20, []string{"serialize"}, Options{Concurrency: []int{1, 4}, Sweep: true, MaxTokens: 32})
		require.Len(t, rep.Points, 2)
		assert.Equal(t, 1, rep.Points[1].Decode().Peak, "one stream decodes at a time")
		assert.Contains(t, out, "flat: the server is not batching", out)
	})
}

// TestHealthyServerShowsScalingCurve checks that the healthy simulator's curve grows from 1 to
// 16 concurrent requests and says so.
func TestHealthyServerShowsScalingCurve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rep, out := simRun(t, 20, nil, Options{Concurrency: []int{1, 16}, Sweep: true})
		require.Len(t, rep.Points, 2)
		assert.Greater(t, rep.Points[1].Decode().TokPerS, 4*rep.Points[0].Decode().TokPerS, out)
		assert.Contains(t, out, "decode batches concurrent requests", out)
	})
}

// TestResultsJSON checks what results.json gets from a bench run.
func TestResultsJSON(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rep, _ := simRun(t, 20, nil, Options{})
		res := rep.Results()
		assert.Equal(t, "bench", res.Command)
		assert.Equal(t, results.Requests{Sent: 16, OK: 16}, res.Requests)
		assert.Equal(t, results.Healthy, res.Verdict.Kind, "%+v", res.Verdict)
		for name, s := range map[string]results.Summary{"ttft": res.Latency.TTFT, "ttft_content": res.Latency.TTFTContent,
			"itl": res.Latency.ITL, "tpot": res.Latency.TPOT, "e2e": res.Latency.E2E} {
			assert.Equal(t, 16, s.N, "%s observations", name)
			assert.Positive(t, s.Mean, name)
		}
		assert.Equal(t, int64(16*128), res.Tokens.Content+res.Tokens.Reasoning, "forced output length")
		assert.InDelta(t, 16*200, res.Tokens.Prompt, 16*20, "server-counted prompt tokens near the requested ones")
		b := res.Bench
		assert.Equal(t, 16, b.Concurrency)
		assert.Equal(t, 16, b.OK)
		assert.Zero(t, b.Failed)
		assert.Positive(t, b.OutputTokPerS)
		assert.Positive(t, b.PerRequestTokPerS)
		assert.NotEmpty(t, b.Samples)
		assert.Equal(t, 16.0, res.Server.DecodeRunning.Max)
		assert.InDelta(t, rep.Points[0].WallS(), res.SimSeconds, 1e-9, "sim seconds is the test's wall")
	})
}
