package simserver

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/agentsim/agentsim/internal/engine"
)

// toolReply is a reply that calls tools, planned at admission: its calls in order, and the
// tokens they take after the reasoning (engine.Job.ToolCallTokens).
type toolReply struct {
	calls  []plannedCall
	tokens int
}

// plannedCall is one tool call of a reply. Its tokens are the name's (the call's first delta
// carries the name whole), then the arguments' in pieces: ends[k] is where the arguments'
// token k ends, in bytes, as CountTokens counts them.
type plannedCall struct {
	id         string
	name       string
	args       []byte
	nameTokens int
	ends       []int
}

// tokens is the call's length in tokens.
func (c *plannedCall) tokens() int { return c.nameTokens + len(c.ends) }

// admitTools checks that a named tool_choice names one of the request's tools, compiled
// already (once per distinct array, see toolCache), and plans the reply: tool calls or text.
func (s *Server) admitTools(req *chatRequest, key uint64) *apiError {
	if req.choice.mode == "named" && (req.tools == nil || req.tools.byName(req.choice.name) == nil) {
		return badRequest("tool_choice.function.name", fmt.Sprintf("tool_choice names the function %q, which tools does not offer; offered: %s",
			req.choice.name, req.tools.offered()))
	}
	reply, aerr := s.planReply(req, key)
	req.reply = reply
	return aerr
}

// offered lists the function tools' names for messages.
func (t *toolSet) offered() string {
	if t == nil || len(t.funcs) == 0 {
		return "no function tool"
	}
	names := make([]string, len(t.funcs))
	for i, f := range t.funcs {
		names[i] = f.name
	}
	return quoteAll(names)
}

// planReply decides whether the reply calls tools and which (docs/engine.md §8): never with
// tool_choice none, always with required or a named function, and otherwise while the user
// request has had fewer tool steps than the number drawn for it. A required or named choice
// that only tools the model never calls could satisfy is a 400 saying so.
func (s *Server) planReply(req *chatRequest, key uint64) (*toolReply, *apiError) {
	switch {
	case req.tools == nil && req.choice.mode == "required":
		return nil, badRequest("tool_choice", `tool_choice is "required", but the request offers no tools`)
	case req.tools == nil || req.choice.mode == "none":
		return nil, nil
	}
	agent := &s.opts.Profile.Agent
	callable := req.tools.callable(agent)
	var forced *toolFunc
	switch req.choice.mode {
	case "named":
		forced = req.tools.byName(req.choice.name)
		if forced.risky != "" && !agent.Allows(forced.name) {
			return nil, badRequest("tool_choice.function.name", fmt.Sprintf("tool_choice names the function %q, which the simulated model never calls: %s; "+
				"name it in the profile's agent.allow to let it", forced.name, forced.risky))
		}
	case "required":
		if len(callable) == 0 {
			return nil, badRequest("tool_choice", fmt.Sprintf(`tool_choice is "required", but the simulated model calls none of the tools offered (%s): `+
				"their names say they change or run things or ask a person; name them in the profile's agent.allow to let it", req.tools.offered()))
		}
	default:
		if len(callable) == 0 || toolSteps(req.Messages) >= s.drawSteps(req.Messages, req.session, agent) {
			return nil, nil
		}
	}
	r := rand.New(rand.NewPCG(s.toolSeed^0x746f6f6c63616c6c, key))
	n := 1
	if forced == nil && req.parallel {
		n = agent.CallsInReply(r)
	}
	reply := &toolReply{calls: make([]plannedCall, n)}
	for i := range reply.calls {
		f := forced
		if f == nil {
			f = pick(callable, agent, r)
		}
		reply.calls[i] = newCall(callID(r), f.name, f.write(r))
		reply.tokens += reply.calls[i].tokens()
	}
	return reply, nil
}

// callable is the function tools the model may call: those whose names say no risk or that
// agent.allow names, and that weigh more than 0.
func (t *toolSet) callable(agent *engine.Agent) []*toolFunc {
	var out []*toolFunc
	for _, f := range t.funcs {
		if (f.risky == "" || agent.Allows(f.name)) && agent.Weight(f.name) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// pick draws a tool by the profile's weights.
func pick(tools []*toolFunc, agent *engine.Agent, r *rand.Rand) *toolFunc {
	total := 0.0
	for _, f := range tools {
		total += agent.Weight(f.name)
	}
	x := r.Float64() * total
	for _, f := range tools {
		if x -= agent.Weight(f.name); x < 0 {
			return f
		}
	}
	return tools[len(tools)-1]
}

// toolSteps counts the replies with tool calls since the conversation's last user message:
// the tool steps the user request has had.
func toolSteps(msgs []chatMessage) int {
	n := 0
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role != "user"; i-- {
		if msgs[i].Role == "assistant" && msgs[i].Calls > 0 {
			n++
		}
	}
	return n
}

// drawSteps is the number of tool steps the conversation's current user request takes before
// its final answer: drawn from the profile, seeded by the conversation's first messages (up to
// its first user message) and the session the client names, if any, the server's seed and how
// many user messages it has, so every request of one user request draws the same.
func (s *Server) drawSteps(msgs []chatMessage, session string, agent *engine.Agent) int {
	h, users := uint64(fnvOffset64), uint64(0)
	if session != "" {
		h = fnvByte(fnvString(h, session), messageSeparator)
	}
	for _, m := range msgs {
		if m.Role == "user" {
			users++
		}
		if users <= 1 && (users == 0 || m.Role == "user") {
			h = fnvString(h, m.Role)
			h = fnvByte(fnvUint64(h, m.Text.hash), messageSeparator)
		}
	}
	return agent.ToolSteps(rand.New(rand.NewPCG(s.toolSeed^0x7374657073, h^users*0x9e3779b97f4a7c15)))
}

// callIDChars are the characters of a tool call's id.
const callIDChars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// callID draws an id in OpenAI's shape, "call_" and 24 letters and digits.
func callID(r *rand.Rand) string {
	var b strings.Builder
	b.WriteString("call_")
	for range 24 {
		b.WriteByte(callIDChars[r.IntN(len(callIDChars))])
	}
	return b.String()
}

// newCall plans a call: its name's tokens and where its arguments' tokens end.
func newCall(id, name string, args []byte) plannedCall {
	return plannedCall{id: id, name: name, args: args, nameTokens: max(CountTokens(name), 1), ends: tokenEnds(args)}
}

// tokenEnds cuts text into its tokens as CountTokens counts them: each run of non-space bytes
// in pieces of bytesPerToken, the whitespace after a run in its last piece (before the first,
// in the first). The pieces put together are the text.
func tokenEnds(text []byte) []int {
	var ends []int
	i := 0
	for i < len(text) {
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		if len(ends) > 0 {
			ends[len(ends)-1] = i
		}
		if i == len(text) {
			break
		}
		j := i
		for j < len(text) && !isSpace(text[j]) {
			j++
		}
		for k := i + bytesPerToken; k < j; k += bytesPerToken {
			ends = append(ends, k)
		}
		ends = append(ends, j)
		i = j
	}
	return slices.Clip(ends)
}
