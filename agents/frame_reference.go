package agents

import (
	"encoding/json"
	"reflect"
)

// decodeFrame is the reference reading of a data line, with encoding/json: exact key names,
// the last of duplicate keys wins, null counts as absent. scanFrame must agree with it on
// every line it accepts (FuzzScanFrame), and a call decodes with it every line scanFrame
// declines (call.decode). A line that is not JSON yields a *json.SyntaxError; a field of the
// wrong type (content that is not a string, a top level that is not an object) yields a
// *json.UnmarshalTypeError naming the field.
func decodeFrame(line []byte) (frame, error) {
	var f frame
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		return f, err
	}
	top, ok := v.(map[string]any)
	if !ok {
		return f, typeError("", v, reflect.TypeFor[map[string]any]())
	}
	var err error
	if f.object, err = strField(top, "object", "object"); err != nil {
		return f, err
	}
	f.hasError = top["error"] != nil
	if err := decodeChoices(top["choices"], &f); err != nil {
		return f, err
	}
	return f, decodeUsage(top["usage"], &f)
}

// decodeChoices reads choices[0].delta, its tool calls included, and choices[0].finish_reason.
func decodeChoices(v any, f *frame) error {
	choices, ok := v.([]any)
	if v == nil || (ok && (len(choices) == 0 || choices[0] == nil)) {
		return nil
	}
	if !ok {
		return typeError("choices", v, reflect.TypeFor[[]any]())
	}
	choice, ok := choices[0].(map[string]any)
	if !ok {
		return typeError("choices.0", choices[0], reflect.TypeFor[map[string]any]())
	}
	var err error
	if f.finish, err = strField(choice, "finish_reason", "choices.0.finish_reason"); err != nil {
		return err
	}
	if choice["delta"] == nil {
		return nil
	}
	delta, ok := choice["delta"].(map[string]any)
	if !ok {
		return typeError("choices.0.delta", choice["delta"], reflect.TypeFor[map[string]any]())
	}
	for _, fl := range []struct {
		key string
		dst *jstr
	}{{"content", &f.content}, {"reasoning_content", &f.reasoningContent}, {"reasoning", &f.reasoning}, {"role", &f.role}} {
		if *fl.dst, err = strField(delta, fl.key, "choices.0.delta."+fl.key); err != nil {
			return err
		}
	}
	return decodeToolCalls(delta["tool_calls"], f)
}

// decodeUsage reads the usage object.
func decodeUsage(v any, f *frame) error {
	if v == nil {
		return nil
	}
	u, ok := v.(map[string]any)
	if !ok {
		return typeError("usage", v, reflect.TypeFor[map[string]any]())
	}
	f.hasUsage = true
	var err error
	if f.usage.Prompt, err = intField(u, "prompt_tokens", "usage"); err != nil {
		return err
	}
	if f.usage.Completion, err = intField(u, "completion_tokens", "usage"); err != nil {
		return err
	}
	if f.usage.Cached, err = detailField(u, "prompt_tokens_details", "cached_tokens"); err != nil {
		return err
	}
	f.usage.Reasoning, err = detailField(u, "completion_tokens_details", "reasoning_tokens")
	return err
}

// detailField reads the integer m[obj][key]; absent or null counts 0.
func detailField(m map[string]any, obj, key string) (int, error) {
	v := m[obj]
	if v == nil {
		return 0, nil
	}
	d, ok := v.(map[string]any)
	if !ok {
		return 0, typeError("usage."+obj, v, reflect.TypeFor[map[string]any]())
	}
	return intField(d, key, "usage."+obj)
}

// strField reads the string m[key]; absent or null is the zero jstr.
func strField(m map[string]any, key, path string) (jstr, error) {
	switch v := m[key].(type) {
	case nil:
		return jstr{}, nil
	case string:
		return jstr{raw: []byte(v), set: true}, nil
	default:
		return jstr{}, typeError(path, v, reflect.TypeFor[string]())
	}
}

// intField reads the number m[key] as an int; absent or null counts 0.
func intField(m map[string]any, key, path string) (int, error) {
	switch v := m[key].(type) {
	case nil:
		return 0, nil
	case float64:
		return int(v), nil
	default:
		return 0, typeError(path+"."+key, v, reflect.TypeFor[int]())
	}
}

// typeError reports that the field at path holds v where want was expected.
func typeError(path string, v any, want reflect.Type) error {
	return &json.UnmarshalTypeError{Value: jsonKind(v), Type: want, Field: path}
}

// jsonKind names the JSON kind of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}
