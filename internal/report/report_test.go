package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/harnesstest"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// smokeRun runs the smoke workload against the simulator into dir/name and returns the
// directory; in a synctest bubble, it runs there.
func smokeRun(t *testing.T, dir, name string, over ...workloads.Override) string {
	t.Helper()
	set := map[string]string{}
	for _, o := range over {
		set[o.Key] = o.Value
	}
	return harnesstest.Run(t, harnesstest.Config{Workload: "smoke", Set: set, Dir: filepath.Join(dir, name)}).Dir
}

// remote matches anything in a page that would make a browser fetch from elsewhere: a source
// or link to another host or protocol-relative, a CSS url() or @import, a script.
var remote = regexp.MustCompile(`(?i)(\b(src|href|action|poster|data)\s*=\s*["']?\s*(https?:|//|ftp:))|url\(\s*["']?\s*(https?:|//)|@import|<script|<link\b|<iframe|<object|<embed`)

// TestRenderIsSelfContained renders two runs overlaid and checks the page holds the verdict,
// the charts as inline SVG, and nothing that a browser would fetch.
func TestRenderIsSelfContained(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		base := smokeRun(t, dir, "base")
		slow := smokeRun(t, dir, "new", workloads.Override{Key: "think_time", Value: "{dist: const, value: 3s}", Source: "--set"})
		runs, err := Load(base, slow)
		require.NoError(t, err)
		require.Len(t, runs, 2)
		var b bytes.Buffer
		require.NoError(t, Render(&b, runs, Options{Version: "test"}))
		page := b.String()

		assert.Empty(t, remote.FindAllString(page, -1), "the report must not fetch anything")
		for _, want := range []string{"Verdict and evidence", "healthy", filepath.Clean(base), filepath.Clean(slow),
			"Agents per state", "Open and silent streams", "Pacer: permits held and agents waiting", "Server gauges",
			"Output rate", "Requests per agent", "Latency distributions", "end-to-end latency", "<svg"} {
			assert.Contains(t, page, want)
		}
		// One states chart and one Gantt chart per run, five latency distributions, the overlays.
		assert.GreaterOrEqual(t, bytes.Count(b.Bytes(), []byte("<svg")), 2+2+5+3)
	})
}

// TestRemoteMatches makes sure the self-containment check can fail.
func TestRemoteMatches(t *testing.T) {
	for _, bad := range []string{`<img src="https://x.example/a.png">`, `<a href='//cdn.example/x'>`,
		`style="background: url(http://x.example/i.png)"`, `<script>1</script>`, `@import "x.css";`, `<link rel=stylesheet href=x.css>`} {
		assert.NotEmpty(t, remote.FindAllString(bad, -1), "%s", bad)
	}
	for _, good := range []string{`<svg xmlns="http://www.w3.org/2000/svg">`, `<a href="#latency">`} {
		assert.Empty(t, remote.FindAllString(good, -1), "%s", good)
	}
}

// TestBuildGantt derives the phases of hand-written requests.
func TestBuildGantt(t *testing.T) {
	ev := func(ts float64, k events.Kind, agent int, req string) events.Event {
		return events.Event{TS: ts, Kind: k, Agent: agent, Request: req}
	}
	done := ev(40, events.Done, 0, "a0-r1-0")
	fail := ev(300, events.Timeout, 1, "a1-r1-0")
	fail.SinceLastByteS = 150
	stop := ev(310, events.Stop, -1, "")
	stop.Reason = events.EndGrace
	r := &Run{Agents: 2, StallAfterS: 120, Events: []events.Event{
		ev(0, events.PacerWait, 0, ""), ev(2, events.PacerAcquired, 0, ""),
		ev(2, events.RequestSent, 0, "a0-r1-0"), ev(3, events.Headers, 0, "a0-r1-0"),
		ev(5, events.FirstReasoning, 0, "a0-r1-0"), ev(30, events.FirstContent, 0, "a0-r1-0"), done,
		// Agent 1 waits 130 s for its first byte (silence), reasons, then goes silent for 150 s
		// until its timeout.
		ev(10, events.RequestSent, 1, "a1-r1-0"), ev(140, events.FirstReasoning, 1, "a1-r1-0"), fail,
		// Agent 0 sends a request the record ends before answering.
		ev(305, events.RequestSent, 0, "a0-r2-0"), stop, ev(320, events.RunEnd, -1, ""),
	}}
	g := BuildGantt(r)
	type ph struct {
		from, to float64
		p        Phase
	}
	got := func(a int) []ph {
		var out []ph
		for _, s := range g.Spans[a] {
			out = append(out, ph{s.StartS, s.EndS, s.Phase})
		}
		return out
	}
	assert.Equal(t, []ph{{0, 2, PhasePacerWait}, {2, 5, PhaseFirstByte}, {5, 30, PhaseReasoning}, {30, 40, PhaseContent},
		{305, 320, PhaseFirstByte}}, got(0))
	assert.Equal(t, []ph{{10, 140, PhaseFirstByte}, {10, 140, PhaseSilence}, {140, 300, PhaseReasoning},
		{150, 300, PhaseSilence}, {300, 300, PhaseFailed}}, got(1))
	assert.Equal(t, []Stop{{TS: 310, Reason: events.EndGrace}}, g.Stops)
	assert.True(t, g.Spans[0][4].Unfinished, "a request without a terminal event is unfinished")
}

// TestAggregate: 1,000 agents fold into at most MaxAgentLanes lanes whose shares add up to 1
// where every agent is busy, and failures are counted in their bin.
func TestAggregate(t *testing.T) {
	g := &Gantt{Agents: 1000, EndS: 100, Spans: make([][]Span, 1000)}
	for a := range g.Agents {
		// Every agent waits in the pacer for the first half, then streams content; odd agents fail at the end.
		g.Spans[a] = []Span{{Agent: a, StartS: 0, EndS: 50, Phase: PhasePacerWait}, {Agent: a, StartS: 50, EndS: 100, Phase: PhaseContent}}
		if a%2 == 1 {
			g.Spans[a] = append(g.Spans[a], Span{Agent: a, StartS: 99, EndS: 99, Phase: PhaseFailed})
		}
	}
	lanes, binS := g.Aggregate(MaxAgentLanes, 10)
	assert.LessOrEqual(t, len(lanes), MaxAgentLanes)
	assert.InDelta(t, 10, binS, 1e-9)
	assert.Equal(t, 0, lanes[0].First)
	assert.Equal(t, 999, lanes[len(lanes)-1].Last)
	for _, l := range lanes {
		assert.InDelta(t, 1, l.Share[0][PhasePacerWait], 1e-9, "lane %d–%d bin 0", l.First, l.Last)
		assert.InDelta(t, 1, l.Share[9][PhaseContent], 1e-9, "lane %d–%d bin 9", l.First, l.Last)
		odd := (l.Last+1)/2 - l.First/2 // odd agents in First..Last
		assert.Equal(t, odd, l.Failed[9], "lane %d–%d failures", l.First, l.Last)
	}
}

// TestLoad: a compare directory stands for its parts, synthetic first; a directory that is not
// a run is refused naming it.
func TestLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		smokeRun(t, dir, "agentic")
		smokeRun(t, dir, "synthetic")
		runs, err := Load(dir)
		require.NoError(t, err)
		require.Len(t, runs, 2)
		assert.Equal(t, filepath.Join(dir, "synthetic"), runs[0].Label)
		assert.Equal(t, filepath.Join(dir, "agentic"), runs[1].Label)
		assert.InDelta(t, 20, runs[0].StallAfterS, 1e-9, "smoke's stall_after, from config.yaml")
	})
	empty := t.TempDir()
	_, err := Load(empty)
	assert.ErrorContains(t, err, empty+": not a run directory")
	_, err = Load(filepath.Join(empty, "missing"))
	assert.ErrorContains(t, err, "missing: no such file or directory")
}

// TestLoadKilledRun: a run killed before results.json is judged from its files.
func TestLoadKilledRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := smokeRun(t, t.TempDir(), "killed")
		require.NoError(t, os.Remove(filepath.Join(dir, "results.json")))
		runs, err := Load(dir)
		require.NoError(t, err)
		assert.Equal(t, results.Healthy, runs[0].Results.Verdict.Kind)
	})
}

// TestRenderManyAgents: a run of more agents than MaxAgentLanes is drawn in aggregate lanes,
// and says so.
func TestRenderManyAgents(t *testing.T) {
	r := &Run{Label: "many", Agents: 1000, Rounds: 1, StallAfterS: 120, Results: &results.Results{Command: "run"}}
	for a := range r.Agents {
		id := fmt.Sprintf("a%d-r1-0", a)
		sent := float64(a % 50)
		r.Events = append(r.Events,
			events.Event{TS: sent, Kind: events.RequestSent, Agent: a, Request: id},
			events.Event{TS: sent + 1, Kind: events.FirstContent, Agent: a, Request: id},
			events.Event{TS: sent + 10, Kind: events.Done, Agent: a, Request: id, CompletionTokens: 100, LatencyS: 10})
	}
	sort.SliceStable(r.Events, func(i, j int) bool { return r.Events[i].TS < r.Events[j].TS })
	for ts := 0.0; ts < 60; ts += 5 {
		r.Samples = append(r.Samples, events.Sample{TS: ts, InFlight: 200, Agents: map[events.State]int{events.StateRequesting: 200, events.StateStarting: 800}})
	}
	var b bytes.Buffer
	require.NoError(t, Render(&b, []*Run{r}, Options{}))
	assert.Contains(t, b.String(), fmt.Sprintf("1000 agents in %d lanes of 17", (1000+16)/17))
	assert.Contains(t, b.String(), "agents 0–16")
	assert.Empty(t, remote.FindAllString(b.String(), -1))
}

// TestBuildGanttTools: a step's tool calls are one span, from its first call to its last
// result; a step the record ends in runs to the end, unfinished.
func TestBuildGanttTools(t *testing.T) {
	ev := func(ts float64, k events.Kind, req string) events.Event {
		return events.Event{TS: ts, Kind: k, Request: req}
	}
	r := &Run{Agents: 1, Events: []events.Event{
		ev(0, events.RequestSent, "a0-r1-0"), ev(1, events.FirstContent, "a0-r1-0"), ev(2, events.Done, "a0-r1-0"),
		ev(2, events.ToolCall, "a0-r1-0"), ev(2, events.ToolCall, "a0-r1-0"),
		ev(3, events.ToolResult, "a0-r1-0"), ev(7, events.ToolResult, "a0-r1-0"), ev(7, events.RoundDone, ""),
		ev(7, events.RequestSent, "a0-r2-0"), ev(8, events.FirstContent, "a0-r2-0"), ev(9, events.Done, "a0-r2-0"),
		ev(9, events.ToolCall, "a0-r2-0"), ev(20, events.RunEnd, ""),
	}}
	r.Events[len(r.Events)-1].Agent = -1
	g := BuildGantt(r)
	var tools []Span
	for _, s := range g.Spans[0] {
		if s.Phase == PhaseTool {
			tools = append(tools, s)
		}
	}
	assert.Equal(t, []Span{{StartS: 2, EndS: 7, Phase: PhaseTool, Request: "a0-r1-0"},
		{StartS: 9, EndS: 20, Phase: PhaseTool, Request: "a0-r2-0", Unfinished: true}}, tools)
	assert.Equal(t, "tool calls", PhaseTool.String())
}

// TestBenchSweepCurve renders a bench sweep's directory — its results.json listing the tests,
// a run directory per test — and checks the page draws the throughput curve above the
// timelines of its tests, and that a directory of a plain run gets no such chart.
func TestBenchSweepCurve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		sweep := filepath.Join(dir, "sweep")
		smokeRun(t, sweep, rundir.BenchTest(1))
		smokeRun(t, sweep, rundir.BenchTest(4))
		res := &results.Results{Command: "bench", Bench: &results.Bench{MaxTokens: 128, Sweep: []results.SweepPoint{
			{Concurrency: 1, OK: 1, OutputTokPerS: 97, PerRequestTokPerS: 98},
			{Concurrency: 4, OK: 4, OutputTokPerS: 300, PerRequestTokPerS: 75},
		}}}
		require.NoError(t, results.Write(sweep, res))
		runs, err := Load(sweep)
		require.NoError(t, err)
		require.Len(t, runs, 2, "a sweep stands for its tests")
		curves := Curves(sweep)
		require.Len(t, curves, 1)
		assert.Len(t, curves[0].Points, 2)
		var b bytes.Buffer
		require.NoError(t, Render(&b, runs, Options{Version: "test", Curves: curves}))
		page := b.String()
		assert.Contains(t, page, `<h2 id="curve">Throughput curve</h2>`)
		assert.Contains(t, page, "Throughput against concurrency")
		assert.Contains(t, page, "128-token outputs")
		assert.Less(t, strings.Index(page, "Throughput curve"), strings.Index(page, `<h2 id="timelines">`), "the curve first")
		assert.Empty(t, remote.FindAllString(page, -1))

		plain := smokeRun(t, dir, "plain")
		assert.Empty(t, Curves(plain), "a run is no sweep")
		runs, err = Load(plain)
		require.NoError(t, err)
		b.Reset()
		require.NoError(t, Render(&b, runs, Options{Version: "test", Curves: Curves(plain)}))
		assert.NotContains(t, b.String(), "Throughput curve")
	})
}
