package diagnose

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// execAnalyzer is an Analyzer of an exec run: a proxy's view with a 20 s stall_after.
func execAnalyzer() *Analyzer {
	return New(Config{Proxy: true, StallAfter: 20 * time.Second, HangAfter: 60 * time.Second})
}

// feedAll feeds evs in order.
func feedAll(a *Analyzer, evs ...events.Event) {
	for _, e := range evs {
		a.Event(e)
	}
}

func started(agent int) events.Event {
	return events.Event{TS: 0, Kind: events.AgentStart, Agent: agent, PID: 100 + agent, Command: "harness"}
}

func sent(t float64, agent int, id string) events.Event {
	return events.Event{TS: t, Kind: events.RequestSent, Agent: agent, Round: 1, Request: id, UserAgent: "OpenAI/JS 7.59.0"}
}

func ended(t float64, agent int, id string) []events.Event {
	return []events.Event{{TS: t, Kind: events.Done, Agent: agent, Round: 1, Request: id},
		{TS: t, Kind: events.RoundDone, Agent: agent, Round: 1, Outcome: events.RoundOK}}
}

// TestExecRuleSilentAndBlocked tells a process whose stream is silent from one blocked outside
// the stream, and names each.
func TestExecRuleSilentAndBlocked(t *testing.T) {
	a := execAnalyzer()
	feedAll(a, started(0), started(1), sent(1, 0, "a0-r1-0"), sent(1, 1, "a1-r1-0"),
		events.Event{TS: 1.5, Kind: events.Headers, Agent: 0, Round: 1, Request: "a0-r1-0"})
	feedAll(a, ended(2, 1, "a1-r1-0")...)
	v := a.Verdict(40)
	assert.Equal(t, results.StalledStreams, v.Kind, v.Summary)
	assert.Contains(t, v.Summary, "1 of 2 harness processes (agent 0) wait on streams silent")
	assert.Contains(t, v.Summary, "1 other process (agent 1) sent nothing while nothing of theirs was in flight")
	assert.Contains(t, strings.Join(v.Evidence, "\n"), `no guard of this harness (the OpenAI Node SDK, User-Agent "OpenAI/JS 7.59.0") ends a silent stream before 300 s`)
}

// TestExecRuleBlocked gives harness-stopped when every running process has nothing in flight,
// and nothing while a process exited is all that is left.
func TestExecRuleBlocked(t *testing.T) {
	a := execAnalyzer()
	feedAll(a, started(0), sent(1, 0, "a0-r1-0"))
	feedAll(a, ended(2, 0, "a0-r1-0")...)
	v := a.Verdict(30)
	assert.Equal(t, results.HarnessStopped, v.Kind, v.Summary)
	assert.Contains(t, v.Summary, "1 of 1 harness processes (agent 0) run but have sent nothing for ≥ 28 s")

	code := 0
	a.Event(events.Event{TS: 31, Kind: events.AgentDone, Agent: 0, ExitCode: &code, Message: "exit status 0"})
	v = a.Verdict(31)
	assert.NotEqual(t, results.HarnessStopped, v.Kind, "a harness that exited is done, not stopped: %s", v.Summary)
}

// TestExecExitRule gives the errors verdict when every process exited and one failed by itself.
func TestExecExitRule(t *testing.T) {
	a := execAnalyzer()
	ok, bad := 0, 1
	feedAll(a, started(0), started(1), sent(1, 0, "a0-r1-0"))
	feedAll(a, ended(2, 0, "a0-r1-0")...)
	feedAll(a, events.Event{TS: 3, Kind: events.AgentDone, Agent: 0, ExitCode: &ok, Message: "exit status 0"},
		events.Event{TS: 3, Kind: events.AgentDone, Agent: 1, ExitCode: &bad, Message: `exit status 1 (stderr: "error: no model")`})
	v := a.Verdict(3)
	assert.Equal(t, results.Errors, v.Kind, v.Summary)
	assert.Equal(t, `1 of 2 harness processes exited with an error: agent 1: exit status 1 (stderr: "error: no model")`, v.Summary)
	assert.Contains(t, v.Evidence, "harness processes: 2 started, 2 exited (1 with status 0, 1 with an error, 0 stopped by agentsim: none)")
}

// TestFamilyOf finds each family by its User-Agent, the most specific first.
func TestFamilyOf(t *testing.T) {
	for _, tc := range []struct{ ua, want string }{
		{"opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14", "opencode"},
		{"codex_cli_rs/0.171.0 (Linux)", "Codex"},
		{"Agents/JavaScript 0.20.0", "the OpenAI Agents SDK (JS)"},
		{"ai-sdk/openai-compatible/3.0.92", "the AI SDK (openai-compatible)"},
		{"OpenAI/JS 7.59.0", "the OpenAI Node SDK"},
		{"OpenAI/Python 1.99.0", "the OpenAI Python SDK"},
		{"Go-http-client/1.1", "go-openai"},
	} {
		f, ok := FamilyOf(tc.ua)
		assert.True(t, ok, "FamilyOf(%q)", tc.ua)
		assert.Equal(t, tc.want, f.Name, "FamilyOf(%q)", tc.ua)
	}
	_, ok := FamilyOf("curl/8.0")
	assert.False(t, ok, "FamilyOf(curl)")
}

// TestFiredGuard matches a retry's silence to the default it is close to.
func TestFiredGuard(t *testing.T) {
	opencode, _ := FamilyOf("opencode/1.18.33")
	assert.Equal(t, "opencode's provider timeout (default 300 s) fired", opencode.firedGuard(304))
	assert.Equal(t, "none of opencode's defaults (provider timeout 300 s) is ≈ 30 s: a timeout the harness was configured with fired", opencode.firedGuard(30))
	goOpenAI, _ := FamilyOf("Go-http-client/1.1")
	assert.Equal(t, "go-openai has no default guard: a timeout the harness was configured with, ≈ 12 s, fired", goOpenAI.firedGuard(12))
}

// TestExecWatchSaysWhoseTimeouts: under exec the watchdog's line about what can end a silent
// request speaks of the harness's own guards (the timeout atlas), not of the workload's
// timeouts, which no request of a real harness carries.
func TestExecWatchSaysWhoseTimeouts(t *testing.T) {
	a := execAnalyzer()
	feedAll(a, started(0), sent(1, 0, "a0-r1-0"),
		events.Event{TS: 1.5, Kind: events.Headers, Agent: 0, Round: 1, Request: "a0-r1-0"})
	st := a.Stall(40)
	assert.True(t, st.NothingCanWake, st.Message)
	assert.NotContains(t, st.Message, "no armed timeout")
	assert.Contains(t, st.Message, `agentsim arms no timeout on the harness's requests (no guard of this harness (the OpenAI Node SDK, User-Agent "OpenAI/JS 7.59.0") ends a silent stream before 300 s`)
}
