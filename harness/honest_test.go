package harness

import (
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/fakeserver"
	"github.com/agentsim/agentsim/results"
)

// slotted is a run of more agents than a fake server has slots, stopped by its duration
// while every slot streams a long answer and the rest wait in the server's queue: as
// llama-server with 16 slots and 30 agents, or llm-d-inference-sim with --max-num-seqs 4 and
// 16 agents, were run.
func slotted(t *testing.T, metrics fakeserver.Metrics, slots, agents int, overrides ...string) fakeRun {
	t.Helper()
	f := &fakeserver.Server{Models: []string{"tiny.gguf"}, Tokens: 1000, FixedTokens: true, ITL: 250 * time.Millisecond,
		Metrics: metrics, Slots: slots}
	_, hc := f.StartInMemory(t)
	clk, err := clock.New(1)
	require.NoError(t, err)
	set := append([]string{"agents=" + strconv.Itoa(agents), "rounds=10", "duration=400s", "start_jitter=0s",
		"watchdog.stall_after=120s", "watchdog.hang_after=600s", "pacer.slots=" + strconv.Itoa(agents),
		"request.force_output_length=false", "request.max_tokens=2000", "context.max_context_tokens=100000"}, overrides...)
	r := runFake(t, "http://fake", hc, clk, "smoke", set, nil)
	require.NoError(t, r.err)
	return r
}

// TestMovingStreamNeverSilent: at the duration's stop, the streams that had been streaming
// for minutes (a chunk every 0.25 s) are not named silent for the time the queued requests
// waited: a sample that does not name a stream bounds its silence by the longest of the
// unnamed ones, which are the queued; that bound is no silence of its own. The run is judged
// the same from its files.
func TestMovingStreamNeverSilent(t *testing.T) {
	for _, c := range []struct {
		name          string
		metrics       fakeserver.Metrics
		slots, agents int
	}{
		{"llama-server, 16 slots, 30 agents", fakeserver.LlamaCpp, 16, 30},
		{"llm-d-inference-sim, 4 seqs, 16 agents", fakeserver.VLLM, 4, 16},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := slotted(t, c.metrics, c.slots, c.agents)
				v := r.res.Verdict
				assert.NotEqual(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
				for _, e := range r.evs {
					if e.Kind == events.Cancelled && e.Chunks > 100 {
						assert.NotContains(t, v.Summary+strings.Join(v.Evidence, "\n"), e.Request+" ", "a stream that moved to the stop (%d chunks, largest gap %.2f s) is named", e.Chunks, e.MaxGapS)
					}
				}
				again, _, err := diagnose.FromDir(r.dir)
				require.NoError(t, err)
				assert.Equal(t, v.Kind, again.Kind)
				assert.Equal(t, v.Summary, again.Summary)
			})
		})
	}
}

// TestCutRequestsCount: most agents are inside long answers when the duration stops the
// run, and only the short answers finished (as ocbrowse against llm-d-inference-sim: 27 of
// 30 agents inside requests 294–327 s long, p50 latency 0.8 s). The requests the stop cut
// count toward the latency at their time so far, and the verdict is slow, saying so.
func TestCutRequestsCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeserver.Server{Models: []string{"m"}, Tokens: 4, ITL: 150 * time.Millisecond, Metrics: fakeserver.VLLM}
		_, hc := f.StartInMemory(t)
		clk, err := clock.New(1)
		require.NoError(t, err)
		r := runFake(t, "http://fake", hc, clk, "smoke", []string{"agents=30", "rounds=1000", "duration=300s", "start_jitter=0s",
			"think_time=0s", "tool_time=0s", "watchdog.stall_after=120s", "watchdog.hang_after=600s", "pacer.slots=30",
			"request.output_tokens={dist: mixture, parts: [{weight: 9, dist: const, value: 4}, {weight: 1, dist: const, value: 2400}]}",
			"request.max_tokens=2400", "request.reasoning_effort=none", "context.max_context_tokens=1000000"}, nil)
		require.NoError(t, r.err)
		v := r.res.Verdict
		assert.Equal(t, results.Slow, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
		assert.Less(t, r.res.Latency.E2E.P50, 5.0, "the finished requests are the short ones")
		assert.Contains(t, v.Summary, "requests cut before their end had run ≥ 60 s (longest ")
		assert.Contains(t, strings.Join(v.Evidence, "\n"), "cut before their end (censored: counted at their time so far)")
		again, _, err := diagnose.FromDir(r.dir)
		require.NoError(t, err)
		assert.Equal(t, v.Summary, again.Summary)
	})
}

// TestErrorsLead: most requests are refused for their length while the few that fit wait
// minutes for the server's one slot (as compare against llama-server: 48 of 60 agentic
// requests failed, "Context size has been exceeded", and the headline was stalled-streams for
// the slow prefills). The refusals lead, in the server's words; the stalls follow as evidence.
func TestErrorsLead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeserver.Server{Models: []string{"m"}, Window: 1500, ITL: 250 * time.Millisecond, Slots: 1}
		_, hc := f.StartInMemory(t)
		clk, err := clock.New(1)
		require.NoError(t, err)
		r := runFake(t, "http://fake", hc, clk, "smoke", []string{"agents=8", "rounds=4", "duration=10m", "start_jitter=0s", "request.output_tokens=200"}, nil)
		require.NoError(t, r.err)
		v := r.res.Verdict
		require.Equal(t, results.Errors, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
		assert.Regexp(t, `^\d+ of \d+ finished requests failed \(\d+\.\d %\): http_status 400 "This model's maximum context length is 1500 tokens\. `, v.Summary)
		assert.Contains(t, strings.Join(v.Evidence, "\n"), "besides the errors, the run was stalled-streams: ")
		again, _, err := diagnose.FromDir(r.dir)
		require.NoError(t, err)
		assert.Equal(t, v.Summary, again.Summary)
	})
}

// TestWatchdogStopIsAVerdict: a rate pacer far too slow for the run (pacer.rps 0.01, one
// permit per 100 s) leaves every agent waiting in it for longer than hang_after, and the
// watchdog ends the run with most rounds never started. That is no healthy run, and its exit
// code is not 0.
func TestWatchdogStopIsAVerdict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeserver.Server{Models: []string{"m"}, ITL: 50 * time.Millisecond}
		_, hc := f.StartInMemory(t)
		clk, err := clock.New(1)
		require.NoError(t, err)
		r := runFake(t, "http://fake", hc, clk, "smoke", []string{"pacer.kind=rate", "pacer.rps=0.01", "pacer.slots=0", "pacer.burst=1"}, nil)
		require.NoError(t, r.err)
		v := r.res.Verdict
		assert.Equal(t, 7, r.res.Rounds.NotStartedReasons["watchdog"], "%+v", r.res.Rounds)
		assert.Equal(t, results.PacerStarvation, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
		assert.False(t, v.Kind.Progressing(), "exit 3, not 0")
		assert.Regexp(t, `^the watchdog ended the run after 60 s without progress \(hang_after 60 s\) while 4/4 agents waited in the pacer for up to \d+ s: `, v.Summary)
		again, _, err := diagnose.FromDir(r.dir)
		require.NoError(t, err)
		assert.Equal(t, v.Summary, again.Summary)
	})
}

// TestTimedOutStallIsNoRecovery: every stream hangs before its first byte (a wedged
// server) and the client's own request.timeout ends each one: the streams stalled and timed
// out; they did not "go on".
func TestTimedOutStallIsNoRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeserver.Server{Models: []string{"m"}, ITL: 50 * time.Millisecond}
		f.Freeze()
		_, hc := f.StartInMemory(t)
		clk, err := clock.New(1)
		require.NoError(t, err)
		r := runFake(t, "http://fake", hc, clk, "smoke", []string{"request.timeout=100s", "watchdog.hang_after=600s", "duration=250s"}, nil)
		require.NoError(t, r.err)
		v := r.res.Verdict
		require.Equal(t, results.StalledStreams, v.Kind, "%s\n%s", v.Summary, strings.Join(v.Evidence, "\n"))
		assert.Regexp(t, `^\d+ streams stalled for ≥ 20 s \(longest 100 s\) and then timed out \(the client's own timeout ended them, not the server\): `, v.Summary)
		assert.NotContains(t, v.Summary+strings.Join(v.Evidence, "\n"), "went on")
	})
}
