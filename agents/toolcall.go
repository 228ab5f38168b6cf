package agents

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ToolCall is one tool call of a reply, assembled from its streamed deltas.
type ToolCall struct {
	// ID is the call's id, which the tool message answering it quotes as tool_call_id.
	ID string
	// Name is the function called.
	Name string
	// Arguments is the JSON text of the call's arguments, as received.
	Arguments string
}

// ErrMalformedToolCall is wrapped by Result.Err when a reply's tool calls cannot be assembled:
// a call without an id or a name, two calls of one id, a call whose id changes, arguments
// that are not JSON. The call's Class is then events.ClassMalformedToolCall.
var ErrMalformedToolCall = errors.New("malformed tool call")

// toolBuild is a tool call being assembled from its deltas.
type toolBuild struct {
	id, name string
	args     []byte
	problem  string // why the call cannot be assembled; "" while it can
}

// toolDelta applies one streamed piece to the call it belongs to. OpenAI's shape gives the
// index, id, type and name in a call's first delta and the index and an argument piece in
// the later ones; a repeated id or name equal to the call's own (the repeat-ids and
// name-every-chunk variants) is a repetition, not a new piece.
func (k *call) toolDelta(d *toolDelta) {
	i := k.toolIndex(d)
	if i < 0 {
		return
	}
	for len(k.tools) <= i {
		k.tools = append(k.tools, toolBuild{})
	}
	b := &k.tools[i]
	if len(d.id.raw) > 0 {
		id := string(d.id.appendTo(k.scratch[:0]))
		switch {
		case b.id == "":
			b.id = id
		case b.id != id && b.problem == "":
			b.problem = fmt.Sprintf("its id changes from %q to %q", b.id, id)
		}
	}
	if len(d.name.raw) > 0 && !d.name.equals(b.name) {
		b.name += string(d.name.appendTo(k.scratch[:0]))
	}
	b.args = d.args.appendTo(b.args)
}

// toolIndex is the call a delta belongs to: its index, or, without one, the latest call (a
// new one when the delta brings an id the latest call does not have). -1 marks a negative
// index, which makes the reply malformed.
func (k *call) toolIndex(d *toolDelta) int {
	if d.hasIndex {
		if d.index < 0 {
			k.toolProblem = fmt.Sprintf("a tool call delta has index %d", d.index)
			return -1
		}
		return d.index
	}
	n := len(k.tools)
	if n == 0 || (len(d.id.raw) > 0 && k.tools[n-1].id != "" && !d.id.equals(k.tools[n-1].id)) {
		return n
	}
	return n - 1
}

// assembleTools sets the result's ToolCalls from the deltas received, or returns why they
// cannot be assembled.
func (k *call) assembleTools() error {
	if k.toolProblem != "" {
		return fmt.Errorf("%w: %s", ErrMalformedToolCall, k.toolProblem)
	}
	if len(k.tools) == 0 {
		return nil
	}
	calls := make([]ToolCall, len(k.tools))
	for i := range k.tools {
		b := &k.tools[i]
		calls[i] = ToolCall{ID: b.id, Name: b.name, Arguments: string(b.args)}
		if p := k.toolFault(i, b); p != "" {
			return fmt.Errorf("%w: tool call %d (%q): %s", ErrMalformedToolCall, i, b.name, p)
		}
	}
	k.res.ToolCalls = calls
	return nil
}

// toolFault says what is wrong with call i, or "".
func (k *call) toolFault(i int, b *toolBuild) string {
	switch {
	case b.problem != "":
		return b.problem
	case b.id == "" && b.name == "" && len(b.args) == 0:
		return "no delta carried it (the indexes skip it)"
	case b.id == "":
		return "it has no id, so no tool message can answer it"
	case b.name == "":
		return "it names no function"
	case len(b.args) > 0 && !json.Valid(b.args):
		return fmt.Sprintf("its arguments are not JSON: %s", quoteShort(b.args))
	}
	for j := range i {
		if k.tools[j].id == b.id {
			return fmt.Sprintf("its id %q is call %d's too", b.id, j)
		}
	}
	return ""
}
