package agents

import (
	"encoding/json"
	"reflect"
)

// rframe is what one Responses API event says, as far as a call needs it. String values
// alias the line, as frame's do.
type rframe struct {
	// typ is the event's type: response.output_text.delta, response.completed, error…
	typ jstr
	// delta is a delta event's text: output text, reasoning, or a piece of arguments.
	delta jstr
	// outputIndex is the output item the event belongs to; hasOutputIndex reports it was
	// present and not null.
	outputIndex    int
	hasOutputIndex bool
	// arguments is response.function_call_arguments.done's whole arguments.
	arguments jstr
	// item is an output_item event's item; hasItem reports it was present.
	item    ritem
	hasItem bool
	// usage is response.usage (response.completed, .incomplete, .failed); hasUsage reports
	// it was present and not null.
	usage    Usage
	hasUsage bool
	// code and message are the error event's, or response.error's in response.failed: a
	// string code, or a number's text.
	code, message jstr
	// incomplete is response.incomplete_details.reason.
	incomplete jstr
}

// ritem is an output item: a message, a reasoning item or a function_call.
type ritem struct {
	typ, callID, name, arguments, role jstr
}

// scanEvent reads line into f in one pass without allocation, as scanFrame does for chat
// chunks; false when it cannot vouch for its reading, and the caller decodes with
// decodeEvent, the reference semantics.
func scanEvent(line []byte, f *rframe) bool {
	*f = rframe{}
	s := scanner{b: line}
	if !s.open('{') {
		return false
	}
	for n := 0; s.next('}', n); n++ {
		switch string(s.key()) {
		case "type":
			f.typ = s.strOrNull()
		case "delta":
			f.delta = s.strOrNull()
		case "output_index":
			f.hasOutputIndex = !s.null()
			if f.hasOutputIndex {
				f.outputIndex = s.intOrNull()
			}
		case "arguments":
			f.arguments = s.strOrNull()
		case "item":
			f.hasItem = !s.null()
			if f.hasItem {
				s.item(&f.item)
			}
		case "response":
			s.response(f)
		case "code":
			f.code = s.codeOrNull()
		case "message":
			f.message = s.strOrNull()
		default:
			s.skip()
		}
	}
	s.ws()
	return !s.bad && s.i == len(s.b)
}

// item reads an output item's type, call_id, name, arguments and role.
func (s *scanner) item(it *ritem) {
	*it = ritem{}
	if !s.open('{') {
		return
	}
	for n := 0; s.next('}', n); n++ {
		switch string(s.key()) {
		case "type":
			it.typ = s.strOrNull()
		case "call_id":
			it.callID = s.strOrNull()
		case "name":
			it.name = s.strOrNull()
		case "arguments":
			it.arguments = s.strOrNull()
		case "role":
			it.role = s.strOrNull()
		default:
			s.skip()
		}
	}
}

// response reads a response object's usage, error and incomplete_details; its output,
// which repeats what the deltas brought, is only checked.
func (s *scanner) response(f *rframe) {
	f.usage, f.hasUsage, f.code, f.message, f.incomplete = Usage{}, false, jstr{}, jstr{}, jstr{}
	if s.null() || !s.open('{') {
		return
	}
	for n := 0; s.next('}', n); n++ {
		switch string(s.key()) {
		case "usage":
			s.responseUsage(f)
		case "error":
			s.responseError(f)
		case "incomplete_details":
			f.incomplete = s.member("reason")
		default:
			s.skip()
		}
	}
}

// responseUsage reads a Responses usage object.
func (s *scanner) responseUsage(f *rframe) { f.usage, f.hasUsage = s.usageObject(responsesUsage) }

// responseError reads response.error's code and message.
func (s *scanner) responseError(f *rframe) {
	if s.null() || !s.open('{') {
		return
	}
	for n := 0; s.next('}', n); n++ {
		switch string(s.key()) {
		case "code":
			f.code = s.codeOrNull()
		case "message":
			f.message = s.strOrNull()
		default:
			s.skip()
		}
	}
}

// member reads the string member name of an object, or null (the zero jstr).
func (s *scanner) member(name string) jstr {
	var v jstr
	if s.null() || !s.open('{') {
		return v
	}
	for n := 0; s.next('}', n); n++ {
		if string(s.key()) == name {
			v = s.strOrNull()
		} else {
			s.skip()
		}
	}
	return v
}

// codeOrNull reads an error code: a string, or a number kept as its text (some servers send
// an HTTP status), or null.
func (s *scanner) codeOrNull() jstr {
	if c := s.peek(); c == '-' || (c >= '0' && c <= '9') {
		start := s.i
		s.number()
		return jstr{raw: s.b[start:s.i], set: true}
	}
	return s.strOrNull()
}

// decodeEvent is the reference reading of a Responses event, with encoding/json: scanEvent
// must agree with it on every line it accepts, and a call decodes with it every line
// scanEvent declines. A field of the wrong type yields a *json.UnmarshalTypeError naming it.
func decodeEvent(line []byte) (rframe, error) {
	var f rframe
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		return f, err
	}
	top, ok := v.(map[string]any)
	if !ok {
		return f, typeError("", v, reflect.TypeFor[map[string]any]())
	}
	var err error
	for _, fl := range []struct {
		key string
		dst *jstr
	}{{"type", &f.typ}, {"delta", &f.delta}, {"arguments", &f.arguments}, {"message", &f.message}} {
		if *fl.dst, err = strField(top, fl.key, fl.key); err != nil {
			return f, err
		}
	}
	if f.code, err = codeField(top, "code"); err != nil {
		return f, err
	}
	if f.hasOutputIndex = top["output_index"] != nil; f.hasOutputIndex {
		if f.outputIndex, err = intField(top, "output_index", ""); err != nil {
			return f, err
		}
	}
	if err := decodeItem(top["item"], &f); err != nil {
		return f, err
	}
	return f, decodeResponse(top["response"], &f)
}

// decodeItem reads an output item (see decodeEvent).
func decodeItem(v any, f *rframe) error {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return typeError("item", v, reflect.TypeFor[map[string]any]())
	}
	f.hasItem = true
	it := &f.item
	var err error
	for _, fl := range []struct {
		key string
		dst *jstr
	}{{"type", &it.typ}, {"call_id", &it.callID}, {"name", &it.name}, {"arguments", &it.arguments}, {"role", &it.role}} {
		if *fl.dst, err = strField(m, fl.key, "item."+fl.key); err != nil {
			return err
		}
	}
	return nil
}

// decodeResponse reads a response object's usage, error and incomplete_details (see
// decodeEvent).
func decodeResponse(v any, f *rframe) error {
	if v == nil {
		return nil
	}
	r, ok := v.(map[string]any)
	if !ok {
		return typeError("response", v, reflect.TypeFor[map[string]any]())
	}
	if err := decodeResponseUsage(r["usage"], f); err != nil {
		return err
	}
	if e := r["error"]; e != nil {
		m, ok := e.(map[string]any)
		if !ok {
			return typeError("response.error", e, reflect.TypeFor[map[string]any]())
		}
		var err error
		if f.code, err = codeField(m, "code"); err != nil {
			return err
		}
		if f.message, err = strField(m, "message", "response.error.message"); err != nil {
			return err
		}
	}
	if d := r["incomplete_details"]; d != nil {
		m, ok := d.(map[string]any)
		if !ok {
			return typeError("response.incomplete_details", d, reflect.TypeFor[map[string]any]())
		}
		var err error
		f.incomplete, err = strField(m, "reason", "response.incomplete_details.reason")
		return err
	}
	return nil
}

// decodeResponseUsage reads a Responses usage object (see decodeEvent).
func decodeResponseUsage(v any, f *rframe) error {
	if v == nil {
		return nil
	}
	u, ok := v.(map[string]any)
	if !ok {
		return typeError("response.usage", v, reflect.TypeFor[map[string]any]())
	}
	f.hasUsage = true
	var err error
	if f.usage.Prompt, err = intField(u, "input_tokens", "response.usage"); err != nil {
		return err
	}
	if f.usage.Completion, err = intField(u, "output_tokens", "response.usage"); err != nil {
		return err
	}
	if f.usage.Cached, err = detailField(u, "input_tokens_details", "cached_tokens"); err != nil {
		return err
	}
	f.usage.Reasoning, err = detailField(u, "output_tokens_details", "reasoning_tokens")
	return err
}

// codeField reads an error code: a string, a number as its text, or null.
func codeField(m map[string]any, key string) (jstr, error) {
	if n, ok := m[key].(float64); ok {
		b, _ := json.Marshal(n) // a decoded number always marshals
		return jstr{raw: b, set: true}, nil
	}
	return strField(m, key, key)
}
