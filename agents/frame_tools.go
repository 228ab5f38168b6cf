package agents

import (
	"reflect"
)

// toolDelta is one element of a delta's tool_calls array: a piece of a streamed tool call.
// String values alias the line, as frame's do.
type toolDelta struct {
	// index is the call the piece belongs to; hasIndex reports it was present and not null.
	index    int
	hasIndex bool
	// id, name and args are the element's id, function.name and function.arguments.
	id, name, args jstr
}

// toolCalls reads a delta's tool_calls array into f.tools; null elements are skipped.
func (s *scanner) toolCalls(f *frame) {
	f.tools = f.tools[:0]
	if s.null() || !s.open('[') {
		return
	}
	for n := 0; s.next(']', n); n++ {
		if s.null() {
			continue
		}
		var d toolDelta
		s.toolCall(&d)
		f.tools = append(f.tools, d)
	}
}

// toolCall reads one tool_calls element.
func (s *scanner) toolCall(d *toolDelta) {
	if !s.open('{') {
		return
	}
	for n := 0; s.next('}', n); n++ {
		switch string(s.key()) {
		case "index":
			d.hasIndex = !s.null()
			d.index = 0
			if d.hasIndex {
				d.index = s.intOrNull()
			}
		case "id":
			d.id = s.strOrNull()
		case "function":
			s.function(d)
		default:
			s.skip()
		}
	}
}

// function reads a tool call's function object: its name and argument piece.
func (s *scanner) function(d *toolDelta) {
	d.name, d.args = jstr{}, jstr{}
	if s.null() || !s.open('{') {
		return
	}
	for n := 0; s.next('}', n); n++ {
		switch string(s.key()) {
		case "name":
			d.name = s.strOrNull()
		case "arguments":
			d.args = s.strOrNull()
		default:
			s.skip()
		}
	}
}

// decodeToolCalls is the reference reading of a delta's tool_calls (see decodeFrame).
func decodeToolCalls(v any, f *frame) error {
	if v == nil {
		return nil
	}
	elems, ok := v.([]any)
	if !ok {
		return typeError("choices.0.delta.tool_calls", v, reflect.TypeFor[[]any]())
	}
	for _, e := range elems {
		if e == nil {
			continue
		}
		m, ok := e.(map[string]any)
		if !ok {
			return typeError("choices.0.delta.tool_calls", e, reflect.TypeFor[map[string]any]())
		}
		d, err := decodeToolCall(m)
		if err != nil {
			return err
		}
		f.tools = append(f.tools, d)
	}
	return nil
}

// decodeToolCall reads one tool_calls element.
func decodeToolCall(m map[string]any) (toolDelta, error) {
	const path = "choices.0.delta.tool_calls"
	var d toolDelta
	var err error
	if m["index"] != nil {
		d.hasIndex = true
		if d.index, err = intField(m, "index", path); err != nil {
			return d, err
		}
	}
	if d.id, err = strField(m, "id", path+".id"); err != nil {
		return d, err
	}
	fn, ok := m["function"].(map[string]any)
	if m["function"] != nil && !ok {
		return d, typeError(path+".function", m["function"], reflect.TypeFor[map[string]any]())
	}
	if d.name, err = strField(fn, "name", path+".function.name"); err != nil {
		return d, err
	}
	d.args, err = strField(fn, "arguments", path+".function.arguments")
	return d, err
}
