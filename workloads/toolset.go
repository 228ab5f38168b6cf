package workloads

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"

	"github.com/sashabaranov/go-openai"
)

// The built-in tool sets, as tools.set names them (docs/agentic.md).
const (
	// ToolSetNone sends no tools: agents read as they do without tools, a read step each round.
	ToolSetNone = "none"
	// ToolSetCoding is a coding agent's ten tools, after opencode's: bash, edit, webfetch, glob,
	// grep, list, read, write, todowrite and todoread, about 21,000 characters of JSON.
	ToolSetCoding = "coding"
	// ToolSetBrowse is page reading, after ocbrowse's harness: search, open_page, read_page,
	// scroll and find_in_page.
	ToolSetBrowse = "browse"
)

// ToolSetNames lists the built-in tool sets in the order messages show them.
var ToolSetNames = []string{ToolSetNone, ToolSetCoding, ToolSetBrowse}

// toolsFS holds the built-in tool sets but none, one OpenAI tools array each, <name>.json.
//
//go:embed tools/*.json
var toolsFS embed.FS

// ToolSet is a checked OpenAI tools array: the tool definitions each request of a workload
// carries. It is immutable and safe for concurrent use; what its methods return is shared and
// must not be modified.
type ToolSet struct {
	source    string
	raw       json.RawMessage
	tools     []openai.Tool
	functions []string
}

// Source names the set: a built-in's name or the file it was read from.
func (s *ToolSet) Source() string { return s.source }

// JSON is the tools array as the file holds it, without insignificant white space; nil for
// the set none. Its length is the size of the definitions a request carries, in bytes.
func (s *ToolSet) JSON() json.RawMessage { return s.raw }

// Tools is the array as go-openai's ChatCompletionRequest.Tools takes it: each function's
// name, description, strict flag and parameters (the JSON Schema, as a json.RawMessage); a
// tool of another type with its other keys in Parameters. Keys of a function object beyond
// those four are not kept. nil for the set none.
func (s *ToolSet) Tools() []openai.Tool { return s.tools }

// Functions lists the names of the set's function tools, in the order the array holds them.
func (s *ToolSet) Functions() []string { return s.functions }

// HasFunction reports whether the set has a function tool of that name.
func (s *ToolSet) HasFunction(name string) bool { return slices.Contains(s.functions, name) }

// builtinToolSets parses the embedded sets once.
var builtinToolSets = sync.OnceValue(func() map[string]*ToolSet {
	sets := map[string]*ToolSet{ToolSetNone: {source: ToolSetNone}}
	for _, name := range ToolSetNames[1:] {
		data, err := toolsFS.ReadFile("tools/" + name + ".json")
		if err != nil {
			panic("workloads: embedded tool set missing: " + err.Error())
		}
		s, err := ParseToolSet(name, data)
		if err != nil {
			panic("workloads: embedded tool set " + name + ": " + err.Error())
		}
		sets[name] = s
	}
	return sets
})

// BuiltinToolSet returns the built-in tool set of that name (see ToolSetNames).
func BuiltinToolSet(name string) (*ToolSet, bool) {
	s, ok := builtinToolSets()[name]
	return s, ok
}

// ReadToolSet reads and checks a file holding an OpenAI tools array, as Load does for a
// tools.set that names no built-in: a regular file of at most MaxFileSize bytes.
func ReadToolSet(path string) (*ToolSet, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", path, toolFileReason(err))
	}
	s, err := ParseToolSet(path, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// toolFileReason says why a tools file could not be read.
func toolFileReason(err error) string {
	if errors.Is(err, errNotRegular) {
		return "not a regular file"
	}
	return readError(err)
}

// functionName is what OpenAI allows a function to be named.
var functionName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ParseToolSet checks data, the JSON of an OpenAI tools array, and returns it as the set
// named source. The array holds at least one object, each with a string type; a function tool
// ("type": "function") has a function object with a name OpenAI allows, unique in the array,
// and parameters that are a JSON Schema object. The error names the element and what is wrong
// with it: `tools[2].function.parameters: "none" is not allowed: want a JSON Schema object`.
func ParseToolSet(source string, data []byte) (*ToolSet, error) {
	if !json.Valid(data) {
		var v any
		return nil, fmt.Errorf("not JSON: %v", json.Unmarshal(data, &v))
	}
	var elems []json.RawMessage
	if json.Unmarshal(data, &elems) != nil || elems == nil {
		return nil, fmt.Errorf(`%s is not allowed: want a JSON array of tools, such as [{"type": "function", "function": {…}}]`, clip(data))
	}
	if len(elems) == 0 {
		return nil, fmt.Errorf("[] is not allowed: want at least one tool (tools.set none sends none)")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return nil, err // cannot happen: data parsed
	}
	s := &ToolSet{source: source, raw: compact.Bytes(), tools: make([]openai.Tool, 0, len(elems))}
	for i, elem := range elems {
		tool, err := parseTool(fmt.Sprintf("tools[%d]", i), elem)
		if err != nil {
			return nil, err
		}
		if tool.Function != nil {
			if s.HasFunction(tool.Function.Name) {
				return nil, fmt.Errorf("tools[%d].function.name: %q is not allowed: want a name no other tool of the array has", i, tool.Function.Name)
			}
			s.functions = append(s.functions, tool.Function.Name)
		}
		s.tools = append(s.tools, tool)
	}
	return s, nil
}

// parseTool checks one element of a tools array, found at at.
func parseTool(at string, elem json.RawMessage) (openai.Tool, error) {
	obj, ok := jsonObject(elem)
	if !ok {
		return openai.Tool{}, fmt.Errorf("%s: %s is not allowed: want an object with a type, such as {\"type\": \"function\", \"function\": {…}}", at, clip(elem))
	}
	var typ string
	if raw, ok := obj["type"]; !ok {
		return openai.Tool{}, fmt.Errorf("%s.type: missing: want the tool's type, such as \"function\"", at)
	} else if json.Unmarshal(raw, &typ) != nil || typ == "" {
		return openai.Tool{}, fmt.Errorf("%s.type: %s is not allowed: want a string, such as \"function\"", at, clip(raw))
	}
	tool := openai.Tool{Type: openai.ToolType(typ)}
	for k, v := range obj {
		if k == "type" || k == "function" && tool.Type == openai.ToolTypeFunction {
			continue
		}
		if tool.Parameters == nil {
			tool.Parameters = map[string]any{}
		}
		tool.Parameters[k] = v
	}
	if tool.Type != openai.ToolTypeFunction {
		return tool, nil
	}
	fn, err := parseFunction(at+".function", obj["function"])
	tool.Function = fn
	return tool, err
}

// parseFunction checks a function tool's function object, found at at.
func parseFunction(at string, raw json.RawMessage) (*openai.FunctionDefinition, error) {
	const wantFunction = "an object with the function's name, description and parameters"
	const wantSchema = `a JSON Schema object, such as {"type": "object", "properties": {}}`
	if raw == nil {
		return nil, fmt.Errorf("%s: missing: want %s", at, wantFunction)
	}
	obj, ok := jsonObject(raw)
	if !ok {
		return nil, fmt.Errorf("%s: %s is not allowed: want %s", at, clip(raw), wantFunction)
	}
	def := &openai.FunctionDefinition{}
	for _, err := range []error{
		field(at, obj, "name", &def.Name, "a string"),
		field(at, obj, "description", &def.Description, "a string"),
		field(at, obj, "strict", &def.Strict, "true or false"),
	} {
		if err != nil {
			return nil, err
		}
	}
	if _, ok := obj["name"]; !ok {
		return nil, fmt.Errorf("%s.name: missing: want the function's name", at)
	}
	if !functionName.MatchString(def.Name) {
		return nil, fmt.Errorf("%s.name: %q is not allowed: want letters, digits, '_' or '-', at most 64", at, def.Name)
	}
	params, ok := obj["parameters"]
	if !ok {
		return nil, fmt.Errorf("%s.parameters: missing: want %s", at, wantSchema)
	}
	if _, ok := jsonObject(params); !ok {
		return nil, fmt.Errorf("%s.parameters: %s is not allowed: want %s", at, clip(params), wantSchema)
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, params) // params parsed as an object: cannot fail
	def.Parameters = json.RawMessage(compact.Bytes())
	return def, nil
}

// jsonObject parses raw as a JSON object.
func jsonObject(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	return obj, json.Unmarshal(raw, &obj) == nil && obj != nil
}

// field decodes obj[key], when present, into dst, or says what it wants.
func field(at string, obj map[string]json.RawMessage, key string, dst any, want string) error {
	v, ok := obj[key]
	if !ok || json.Unmarshal(v, dst) == nil {
		return nil
	}
	return fmt.Errorf("%s.%s: %s is not allowed: want %s", at, key, clip(v), want)
}

// clip renders a piece of JSON for a message: on one line, at most 60 bytes.
func clip(data []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, data) != nil {
		b.Reset()
		b.Write(bytes.TrimSpace(data))
	}
	if b.Len() > 60 {
		return string(b.Bytes()[:57]) + "..."
	}
	if b.Len() == 0 {
		return "nothing"
	}
	return b.String()
}
