package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Agent is how the simulated model behaves in a tool-calling loop: how many model calls a user
// request takes before the final answer, how many tool calls a reply makes, which tools it may
// call and how its streamed calls are shaped (docs/engine.md §8). Only requests that offer
// tools see it. A zero field takes its default: the figures TraceLab measured on real coding
// agents (8.8 model calls per user request; 1.2 tool calls per reply, p99 4).
type Agent struct {
	// CallsPerRequest is the mean number of model calls a user request takes, the last of them
	// the final answer: ≥ 1, 0 meaning DefaultCallsPerRequest. The number is drawn once per
	// user request (see ToolSteps).
	CallsPerRequest float64 `yaml:"calls_per_request"`
	// CallsPerRequestP50 is the median of those calls: ≥ 1 and below CallsPerRequest, 0
	// meaning DefaultCallsPerRequestP50 where that is below the mean. With a median the number
	// is a rounded lognormal through the median and the mean, as heavy-tailed as real agents'
	// requests; without one (a mean at or below the default median) it is geometric.
	CallsPerRequestP50 float64 `yaml:"calls_per_request_p50"`
	// CallsPerReply is the mean number of tool calls in a reply that calls tools: ≥ 1, 0
	// meaning DefaultCallsPerReply.
	CallsPerReply float64 `yaml:"calls_per_reply"`
	// CallsPerReplyP99 is the 99th percentile of the tool calls in such a reply: ≥ 1, 0
	// meaning DefaultCallsPerReplyP99.
	CallsPerReplyP99 int `yaml:"calls_per_reply_p99"`
	// Allow names the tools the model may call although their names say they change or run
	// things, or ask a person (bash, write, request_user_input, …), which it otherwise never
	// calls.
	Allow []string `yaml:"allow,omitempty"`
	// Weights weighs the offered tools the model chooses among, by name (a tool not named
	// weighs 1; 0 never chosen), each ≥ 0.
	Weights map[string]float64 `yaml:"weights,omitempty"`
	// ToolCallStyle is how a streamed tool call is shaped: ToolCallsOpenAI ("", the default),
	// or a variant that breaks some client parsers.
	ToolCallStyle ToolCallStyle `yaml:"tool_call_style"`
}

// The defaults of Agent, after TraceLab's measurements of real coding agents.
const (
	// DefaultCallsPerRequest is the mean model calls per user request.
	DefaultCallsPerRequest = 8.8
	// DefaultCallsPerRequestP50 is their median.
	DefaultCallsPerRequestP50 = 2
	// DefaultCallsPerReply is the mean tool calls per reply that calls tools.
	DefaultCallsPerReply = 1.2
	// DefaultCallsPerReplyP99 is the 99th percentile of the tool calls per such reply.
	DefaultCallsPerReplyP99 = 4
)

// ToolCallStyle is how a streamed tool call's deltas are shaped.
type ToolCallStyle string

// The tool-call styles.
const (
	// ToolCallsOpenAI is OpenAI's shape: the first delta of a call carries its index, id,
	// type, function name and empty arguments; later deltas its index and argument pieces.
	ToolCallsOpenAI ToolCallStyle = "openai"
	// ToolCallsRepeatIDs repeats the id and type in every delta of a call, as
	// llm-d-inference-sim does.
	ToolCallsRepeatIDs ToolCallStyle = "repeat-ids"
	// ToolCallsNameEveryChunk repeats the function name in every delta: a client that
	// concatenates names, as OpenAI's own deltas allow, reads a name that is no tool's.
	ToolCallsNameEveryChunk ToolCallStyle = "name-every-chunk"
	// ToolCallsNoID sends no id at all, in deltas or messages.
	ToolCallsNoID ToolCallStyle = "no-id"
)

// toolCallStyles lists the styles, as the profile and the fault take them.
var toolCallStyles = []string{string(ToolCallsOpenAI), string(ToolCallsRepeatIDs), string(ToolCallsNameEveryChunk), string(ToolCallsNoID)}

// Style returns ToolCallStyle, or ToolCallsOpenAI when it is unset.
func (a *Agent) Style() ToolCallStyle {
	if a.ToolCallStyle == "" {
		return ToolCallsOpenAI
	}
	return a.ToolCallStyle
}

// Allows reports whether Allow names the tool.
func (a *Agent) Allows(name string) bool { return slices.Contains(a.Allow, name) }

// Weight returns how much the tool weighs in the model's choice: its Weights entry, or 1.
func (a *Agent) Weight(name string) float64 {
	if w, ok := a.Weights[name]; ok {
		return w
	}
	return 1
}

// callsPerRequest, callsPerReply and callsPerReplyP99 are the fields with their defaults.
func (a *Agent) callsPerRequest() float64 {
	return orDefault(a.CallsPerRequest, DefaultCallsPerRequest)
}
func (a *Agent) callsPerReply() float64 { return orDefault(a.CallsPerReply, DefaultCallsPerReply) }
func (a *Agent) callsPerReplyP99() int {
	if a.CallsPerReplyP99 == 0 {
		return DefaultCallsPerReplyP99
	}
	return a.CallsPerReplyP99
}

func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

// callsPerRequestP50 is the median the calls are drawn through, 0 when they are geometric:
// CallsPerRequestP50, or the default where it is below the mean.
func (a *Agent) callsPerRequestP50() float64 {
	if a.CallsPerRequestP50 != 0 {
		return a.CallsPerRequestP50
	}
	if DefaultCallsPerRequestP50 < a.callsPerRequest() {
		return DefaultCallsPerRequestP50
	}
	return 0
}

// ToolSteps draws how many replies with tool calls a user request gets before its final
// answer: the model calls less the answer. With a median (callsPerRequestP50) the calls are
// a lognormal through it and the mean CallsPerRequest, rounded and at least 1: with
// TraceLab's mean 8.8 and median 2 that puts 43 % of the requests at one call, the 90th
// percentile at 18 and the 99th at 109 (TraceLab: 21 and 87; docs/engine.md §8). Without
// one they are geometric on 1, 2, … with that mean.
func (a *Agent) ToolSteps(r *rand.Rand) int {
	m := a.callsPerRequest()
	if m <= 1 {
		return 0
	}
	if p50 := a.callsPerRequestP50(); p50 > 0 {
		sigma := math.Sqrt(2 * math.Log(m/p50))
		calls := math.Round(p50 * math.Exp(sigma*r.NormFloat64()))
		return int(min(max(calls, 1), maxToolSteps+1)) - 1
	}
	// Inverse transform: P(calls > k) = (1 − 1/m)^k.
	u := 1 - r.Float64() // in (0, 1]
	return min(int(math.Log(u)/math.Log(1-1/m)), maxToolSteps)
}

// maxToolSteps bounds ToolSteps, far beyond any context a request can hold.
const maxToolSteps = 10_000

// CallsInReply draws how many tool calls a reply that calls tools makes: one, or with
// probability π two plus a geometric number of ratio ρ, π and ρ fitted so that the mean is
// CallsPerReply and the 99th percentile CallsPerReplyP99 (see replyFit).
func (a *Agent) CallsInReply(r *rand.Rand) int {
	pi, rho, ok := replyFit(a.callsPerReply(), a.callsPerReplyP99())
	if !ok || pi == 0 || r.Float64() >= pi {
		return 1
	}
	u := 1 - r.Float64()
	extra := 0
	if rho > 0 {
		extra = int(math.Log(u) / math.Log(rho))
	}
	return min(2+extra, maxCallsInReply)
}

// maxCallsInReply bounds CallsInReply.
const maxCallsInReply = 64

// replyFit fits the calls per reply, N = 1 with probability 1 − π and N = 2 + G otherwise, G
// geometric with P(G ≥ k) = ρ^k, to a mean m and a 99th percentile q. The mean is
// 1 + π/(1 − ρ), so π = (m − 1)(1 − ρ); the tail is P(N > k) = π·ρ^(k−1), and ρ is the smaller
// root of P(N > q − ½) = 1 %, halfway (geometrically) between P(N > q − 1) above 1 % and
// P(N > q) below it. ok is false when no such ρ gives a π ≤ 1: that mean cannot have that
// percentile in this family.
func replyFit(m float64, q int) (pi, rho float64, ok bool) {
	if m <= 1 {
		return 0, 0, true
	}
	if q < 2 {
		return 0, 0, false
	}
	e := float64(q) - 1.5
	tail := func(r float64) float64 { return (m - 1) * (1 - r) * math.Pow(r, e) }
	lo := max(0, 1-1/(m-1)) // π ≤ 1
	peak := e / (e + 1)     // where the tail is largest
	if lo >= peak || tail(peak) < 0.01 || tail(lo) > 0.01 {
		return 0, 0, false
	}
	a, b := lo, peak
	for range 60 {
		mid := (a + b) / 2
		if tail(mid) < 0.01 {
			a = mid
		} else {
			b = mid
		}
	}
	rho = (a + b) / 2
	return (m - 1) * (1 - rho), rho, true
}

// validMean reports whether v is a mean the agent section takes: 0 (the default) or a finite
// number ≥ 1.
func validMean(v float64) bool { return v == 0 || (v >= 1 && v <= math.MaxFloat64) }

// fitRange says which 99th percentiles replyFit can give the mean m.
func fitRange(m float64) string {
	lo, hi := 0, 0
	for q := 1; q <= maxCallsInReply; q++ {
		if _, _, ok := replyFit(m, q); ok {
			if lo == 0 {
				lo = q
			}
			hi = q
		}
	}
	if lo == 0 {
		return fmt.Sprintf("no number of calls per reply up to %d has that mean; want a smaller mean", maxCallsInReply)
	}
	return fmt.Sprintf("want a 99th percentile from %d to %d for that mean", lo, hi)
}

// problems lists what is wrong with the agent section, each naming its key under agent.
func (a *Agent) problems() problems {
	var ps problems
	for _, k := range []struct {
		key string
		v   float64
	}{{"agent.calls_per_request", a.CallsPerRequest}, {"agent.calls_per_reply", a.CallsPerReply}} {
		if !validMean(k.v) {
			ps = append(ps, fmt.Errorf("%s: %g is not allowed: want a number ≥ 1 (0: the default)", k.key, k.v))
		}
	}
	if p50 := a.CallsPerRequestP50; p50 != 0 && validMean(a.CallsPerRequest) && !(p50 >= 1 && p50 < a.callsPerRequest()) {
		ps = append(ps, fmt.Errorf("agent.calls_per_request_p50: %g is not allowed with agent.calls_per_request %g: "+
			"want a median from 1 up to below the mean (0: %d where the mean is above it, else a geometric draw)",
			p50, a.callsPerRequest(), DefaultCallsPerRequestP50))
	}
	ps.atLeast("agent.calls_per_reply_p99", a.CallsPerReplyP99, 0)
	if validMean(a.CallsPerReply) && a.CallsPerReplyP99 >= 0 {
		m, q := a.callsPerReply(), a.callsPerReplyP99()
		if _, _, ok := replyFit(m, q); !ok {
			ps = append(ps, fmt.Errorf("agent.calls_per_reply_p99: %d is not allowed with agent.calls_per_reply %g: %s",
				q, m, fitRange(m)))
		}
	}
	names := make([]string, 0, len(a.Weights))
	for n := range a.Weights {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		ps.finite(fmt.Sprintf("agent.weights.%s", n), a.Weights[n])
	}
	if a.ToolCallStyle != "" {
		ps.oneOf("agent.tool_call_style", string(a.ToolCallStyle), toolCallStyles...)
	}
	return ps
}

// agentKeyDocs says, for every key of the agent section in file order, its meaning.
var agentKeyDocs = []struct{ key, doc string }{
	{"calls_per_request", "mean model calls per user request, the last the answer (drawn once per request; TraceLab: 8.8)"},
	{"calls_per_request_p50", "their median: a rounded lognormal through it and the mean (0: 2 where the mean is above it, else geometric; TraceLab: 2)"},
	{"calls_per_reply", "mean tool calls per reply that calls tools (TraceLab: 1.2)"},
	{"calls_per_reply_p99", "99th percentile of the tool calls per such reply (TraceLab: 4)"},
	{"allow", "tools that change or run things, or ask a person, the model may call all the same"},
	{"weights", "weight of each tool in the model's choice, by name (others: 1)"},
	{"tool_call_style", "openai, repeat-ids (id and type in every delta), name-every-chunk, no-id"},
}
