package replay_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/agents"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/harnesstest"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/replay"
	"github.com/agentsim/agentsim/internal/traceimport"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/trace"
	"github.com/agentsim/agentsim/workloads"
)

// runOn runs w (with scripts, when given) against a fresh simulator and returns the results
// and the run directory; in a synctest bubble, it runs there.
func runOn(t *testing.T, w *workloads.Workload, scripts []*agents.Script) (*results.Results, string) {
	t.Helper()
	res := harnesstest.Run(t, harnesstest.Config{Spec: w, Scripts: scripts})
	return res.Results, res.Dir
}

// load resolves a built-in workload with overrides.
func load(t *testing.T, name string, kv ...string) *workloads.Workload {
	t.Helper()
	var over []workloads.Override
	for i := 0; i+1 < len(kv); i += 2 {
		over = append(over, workloads.Override{Key: kv[i], Value: kv[i+1], Source: "--set"})
	}
	w, err := workloads.Load(workloads.LoadOptions{Workload: name, Overrides: over})
	require.NoError(t, err)
	return w
}

// planOf writes tr as a trace file and loads it for replay.
func planOf(t *testing.T, tr *traceimport.Trace, o replay.Options) *replay.Plan {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, tr.Write(&buf))
	p, err := replay.Load(&buf, "trace.jsonl", o)
	require.NoError(t, err)
	return p
}

// TestRoundTrip runs a workload, imports its run directory as a trace and replays it in
// sessions mode against the same simulator: the same requests, each with the recorded prompt
// and output tokens, the prefix cache hit as often, and latencies close to the original's.
func TestRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		orig, dir := runOn(t, load(t, "smoke", "agents", "6", "rounds", "4", "duration", "0s", "pacer.kind", "unlimited"), nil)
		require.Equal(t, 24, orig.Requests.OK)
		tr, err := traceimport.Run(dir)
		require.NoError(t, err)
		require.Len(t, tr.Requests, 24)
		assert.Equal(t, 6, tr.Header.Sessions)

		p := planOf(t, tr, replay.Options{})
		assert.Equal(t, replay.Sessions, p.Mode)
		w := load(t, "smoke", "agents", "6", "duration", "0s", "pacer.kind", "unlimited")
		res, rdir := runOn(t, w, p.Scripts)
		cmp, err := replay.Compare(rdir, p)
		require.NoError(t, err)

		assert.Equal(t, 24, res.Requests.OK, "%+v", res.Requests)
		assert.Equal(t, 24, res.Rounds.Planned)
		assert.Equal(t, 24, cmp.Compared)
		assert.Equal(t, 24, cmp.SameTokens, "every request has the recorded prompt and output tokens")
		assert.Equal(t, orig.Tokens.Prompt, res.Tokens.Prompt)
		assert.Equal(t, orig.Tokens.Cached, res.Tokens.Cached, "the prefix cache sees the same reuse")
		assert.InDelta(t, 1, cmp.E2ERatio.P50, 0.1, "e2e ratio %+v", cmp.E2ERatio)
		assert.Nil(t, cmp.ScheduleLag, "sessions mode has no schedule")
	})
}

// mooncakeLike is a small Mooncake trace: two conversations behind a shared two-block
// system prompt, and a request of its own, timestamps in ms.
const mooncakeLike = `{"timestamp":0,"input_length":2000,"output_length":40,"hash_ids":[1,2,10,11]}
{"timestamp":500,"input_length":1400,"output_length":30,"hash_ids":[1,2,20]}
{"timestamp":4000,"input_length":2600,"output_length":50,"hash_ids":[1,2,10,12,13,14]}
{"timestamp":6000,"input_length":1900,"output_length":20,"hash_ids":[1,2,22,23]}
{"timestamp":7000,"input_length":700,"output_length":60,"hash_ids":[30,31]}
`

// TestTimestampsMode replays an imported Mooncake trace open-loop: every request is sent at
// its time (lag recorded), with the recorded prompt and output lengths, and requests that share
// leading hash ids share a prefix the simulator's cache finds.
func TestTimestampsMode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, err := traceimport.Mooncake(bytes.NewBufferString(mooncakeLike), "mc.jsonl")
		require.NoError(t, err)
		p := planOf(t, tr, replay.Options{Mode: replay.Timestamps, TimeScale: 2})
		require.Equal(t, 5, p.Requests)
		w := load(t, "smoke", "agents", "1", "duration", "0s", "pacer.kind", "unlimited", "request.reasoning_effort", "none")
		w.Agents = len(p.Scripts)
		res, dir := runOn(t, w, p.Scripts)
		cmp, err := replay.Compare(dir, p)
		require.NoError(t, err)

		assert.Equal(t, 5, res.Requests.OK, "%+v", res.Requests)
		require.NotNil(t, cmp.ScheduleLag)
		assert.Equal(t, 5, cmp.ScheduleLag.N)
		assert.Less(t, cmp.ScheduleLag.Max, 0.1, "an idle simulator takes every request on time")
		assert.NotEmpty(t, cmp.Note, "a Mooncake trace has no outcomes")

		evs, err := events.ReadFile[events.Event](filepath.Join(dir, "events.jsonl"))
		require.NoError(t, err)
		var sent []float64
		prompts, outputs, cached := map[int]int{}, 0, 0
		for _, e := range evs {
			switch e.Kind {
			case events.RequestSent:
				sent = append(sent, e.TS)
			case events.Done:
				prompts[e.PromptTokens]++
				outputs += e.CompletionTokens
				cached += e.CachedTokens
			}
		}
		// Sends at t_s × 2: 0, 1, 8, 12, 14 s after the start.
		require.Len(t, sent, 5)
		for i, want := range []float64{0, 1, 8, 12, 14} {
			assert.InDelta(t, want, sent[i], 0.05, "send %d", i)
		}
		assert.Equal(t, map[int]int{2000: 1, 1400: 1, 2600: 1, 1900: 1, 700: 1}, prompts)
		assert.Equal(t, 40+30+50+20+60, outputs)
		// The second and fourth requests find the shared system blocks (2 × 512 tokens), the
		// third also its conversation's complete block 10 (a partial last block, like 11,
		// is a different text once complete, as its hash id says).
		assert.Equal(t, 1024+1536+1024, cached)
	})
}

// TestSessionsBehindThePacer replays four one-request sessions sent at once through a
// one-slot pacer: the pacer holds them, so they never overlap, and each waits its turn.
func TestSessionsBehindThePacer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tr traceimport.Trace
		for i := range 4 {
			tr.Requests = append(tr.Requests, trace.Request{Session: fmt.Sprintf("s%d", i), TS: 0, PromptTokens: 300, OutputTokens: 20, Status: 200, E2ES: 1})
		}
		tr.Header = trace.Header{Source: "test", Created: "2026-11-30T00:00:00Z"}
		p := planOf(t, &tr, replay.Options{Mode: replay.Sessions})
		w := load(t, "smoke", "agents", "4", "duration", "0s", "pacer.kind", "slots", "pacer.slots", "1")
		res, dir := runOn(t, w, p.Scripts)
		cmp, err := replay.Compare(dir, p)
		require.NoError(t, err)
		assert.Equal(t, 4, res.Requests.OK)
		assert.Equal(t, 1, cmp.Concurrency.Replay.Max, "one slot: one request at a time")
		assert.Equal(t, 4, cmp.Concurrency.Original.Max, "the trace sent all four at once")
		assert.Greater(t, res.Latency.PacerWait.Max, 0.0)
	})
}

// TestCompareTokens: a prompt within the tolerance counts as the recorded one, its difference
// is in prompt_tokens_diff either way; an output other than the forced length is counted and
// warned about.
func TestCompareTokens(t *testing.T) {
	var tr traceimport.Trace
	tr.Header = trace.Header{Source: "test", Created: "2026-11-30T00:00:00Z"}
	for i, prompt := range []int{500, 500, 3000, 3000} {
		tr.Requests = append(tr.Requests, trace.Request{Session: fmt.Sprintf("s%d", i), PromptTokens: prompt, OutputTokens: 50, Status: 200, E2ES: 1})
	}
	p := planOf(t, &tr, replay.Options{})
	dir := t.TempDir()
	w, err := events.Create[events.Event](filepath.Join(dir, "events.jsonl"))
	require.NoError(t, err)
	// Replayed prompts: +16 of 500 (within 16 tokens), +17 (beyond), −60 (within 2 % of 3000),
	// +61 (beyond); the last request ends 2 tokens short of its forced 50.
	for i, got := range [][2]int{{516, 50}, {517, 50}, {2940, 50}, {3061, 48}} {
		id := fmt.Sprintf("a%d-r1-0", i)
		w.Write(events.Event{Kind: events.RequestSent, Agent: i, Round: 1, Request: id, TS: 0})
		w.Write(events.Event{Kind: events.Done, Agent: i, Round: 1, Request: id, TS: 1, LatencyS: 1, PromptTokens: got[0], CompletionTokens: got[1]})
	}
	require.NoError(t, w.Close())
	cmp, err := replay.Compare(dir, p)
	require.NoError(t, err)
	assert.Equal(t, 4, cmp.Compared)
	assert.Equal(t, 2, cmp.SameTokens, "+16 of 500 and −60 of 3000 are within the tolerance")
	require.NotNil(t, cmp.PromptDiff)
	assert.Equal(t, []float64{-60, 61}, []float64{cmp.PromptDiff.Min, cmp.PromptDiff.Max})
	assert.Equal(t, []int{4, 1}, []int{cmp.OutputForced, cmp.OutputMissed})
	assert.Contains(t, replay.Lines(cmp), "4 requests compared, 2 with the recorded token counts (output exact, prompt within 2 % or 16 tokens)")
	assert.Contains(t, replay.Lines(cmp), "prompt tokens replay − recorded: p50 +16, p90 +61, min -60, max +61")
	warns := diagnose.ReplayWarnings(cmp)
	require.Len(t, warns, 1)
	assert.Contains(t, warns[0], "output lengths: 1 of the 4 completed requests forced to their recorded output length (max_tokens with ignore_eos) ended at another (replay − recorded: min -2, max -2 tokens)")
}

// TestReplayOutputLengths: a replay forces each request's recorded output length, so the
// run's warnings do not hold the outputs against the workload's request.output_tokens (smoke's
// 64–128 tokens here, against recorded 20s); the simulator gives every forced length.
func TestReplayOutputLengths(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tr traceimport.Trace
		tr.Header = trace.Header{Source: "test", Created: "2026-11-30T00:00:00Z"}
		for i := range 3 {
			tr.Requests = append(tr.Requests, trace.Request{Session: fmt.Sprintf("s%d", i), PromptTokens: 300, OutputTokens: 20, Status: 200, E2ES: 1})
		}
		p := planOf(t, &tr, replay.Options{})
		res, dir := runOn(t, load(t, "smoke", "agents", "3", "duration", "0s", "pacer.kind", "unlimited"), p.Scripts)
		cmp, err := replay.Compare(dir, p)
		require.NoError(t, err)
		assert.Equal(t, 3, res.Requests.OK)
		for _, w := range res.Warnings {
			assert.NotContains(t, w, "output lengths")
		}
		assert.Equal(t, []int{3, 0}, []int{cmp.OutputForced, cmp.OutputMissed})
		assert.Empty(t, diagnose.ReplayWarnings(cmp))
	})
}
