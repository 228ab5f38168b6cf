package simserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
)

// toolSet is a request's tools array, read and compiled: the function tools the simulated
// model may call, each with its compiled parameters, and what the definitions cost in the
// prompt. Tools of other kinds (web_search, namespace, custom, …) are accepted, counted in
// the prompt, and never called. A toolSet is shared between the requests that send the same
// array (toolCache) and never changed.
type toolSet struct {
	// tokens is the prompt tokens the definitions take, as a chat template renders them
	// into the prompt; hash identifies them for the prefix cache.
	tokens int
	hash   uint64
	funcs  []*toolFunc
}

// toolFunc is one function tool.
type toolFunc struct {
	name string
	// schema is the compiled parameters; nil when the tool takes none.
	schema *schemaNode
	// witness is arguments found valid when the schema was compiled, written when the
	// request's own draws fail.
	witness any
	// risky says why the model never calls the tool unless the profile's agent.allow names
	// it ("" when it may): its name says it changes or runs things, or asks a person.
	risky string
}

// byName returns the function tool called name, or nil.
func (t *toolSet) byName(name string) *toolFunc {
	for _, f := range t.funcs {
		if f.name == name {
			return f
		}
	}
	return nil
}

// rawTool and rawFunction are the wire form of one tools entry: chat completions nest the
// function under "function", the Responses API writes its members beside "type" (rawTool's
// own Name, Description and Parameters).
type rawTool struct {
	Type     json.RawMessage `json:"type"`
	Function json.RawMessage `json:"function"`
	rawFunction
}

type rawFunction struct {
	Name        json.RawMessage `json:"name"`
	Description json.RawMessage `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// parseTools reads and compiles a tools array: each entry an object with a type; a function
// tool with a unique name, a string description if any, and parameters the simulator can
// satisfy, nested under "function" (chat completions) or, when flat, beside "type" (the
// Responses API). Its error is a 400 naming the entry and what is wrong.
func parseTools(raw []json.RawMessage, flat bool) (*toolSet, *apiError) {
	set := &toolSet{hash: fnvOffset64}
	for i, item := range raw {
		set.tokens += CountTokens(string(item))
		set.hash = fnvByte(fnvString(set.hash, string(item)), messageSeparator)
		f, aerr := parseTool(i, item, flat)
		if aerr != nil {
			return nil, aerr
		}
		if f == nil {
			continue
		}
		if set.byName(f.name) != nil {
			param := functionParam(i, flat) + ".name"
			return nil, badRequest(param, fmt.Sprintf("%s %q is offered twice: each function tool needs its own name", param, f.name))
		}
		set.funcs = append(set.funcs, f)
	}
	return set, nil
}

// functionParam is the path of tools entry i's function members: the entry itself when flat.
func functionParam(i int, flat bool) string {
	if flat {
		return fmt.Sprintf("tools[%d]", i)
	}
	return fmt.Sprintf("tools[%d].function", i)
}

// parseTool reads tools entry i: nil for a tool that is not a function.
func parseTool(i int, item json.RawMessage, flat bool) (*toolFunc, *apiError) {
	param, fp := fmt.Sprintf("tools[%d]", i), functionParam(i, flat)
	shape := `{"type":"function","function":{"name":…,"parameters":…}}`
	if flat {
		shape = `{"type":"function","name":…,"parameters":…}`
	}
	var t rawTool
	if !isObject(item) || json.Unmarshal(item, &t) != nil {
		return nil, badRequest(param, param+" must be an object "+shape)
	}
	var kind string
	if json.Unmarshal(t.Type, &kind) != nil || kind == "" {
		return nil, badRequest(param+".type", param+`.type is required: "function", or another tool kind such as "web_search"`)
	}
	if kind != "function" {
		return nil, nil
	}
	fn := t.rawFunction
	if !flat {
		fn = rawFunction{}
		if !isObject(t.Function) || json.Unmarshal(t.Function, &fn) != nil {
			return nil, badRequest(fp, fp+` is required for a function tool: an object {"name":…,"description":…,"parameters":…}`)
		}
	}
	var name, desc string
	if json.Unmarshal(fn.Name, &name) != nil || name == "" {
		return nil, badRequest(fp+".name", fp+".name is required: a non-empty string")
	}
	if !isNull(fn.Description) && json.Unmarshal(fn.Description, &desc) != nil {
		return nil, badRequest(fp+".description", fp+".description must be a string")
	}
	f := &toolFunc{name: name, risky: riskOf(name), witness: jsonObject{}}
	if isNull(fn.Parameters) {
		return f, nil
	}
	pp := fp + ".parameters"
	doc, err := decodeOrdered(fn.Parameters)
	if _, ok := doc.(jsonObject); err != nil || !ok {
		return nil, badRequest(pp, pp+" must be a JSON Schema object")
	}
	if f.schema, err = compileSchema(doc, "parameters"); err != nil {
		return nil, badRequest(pp, fmt.Sprintf("tool %q: %v", name, err))
	}
	if t := f.schema.types; t != 0 && t&typeObject == 0 {
		return nil, badRequest(pp, fmt.Sprintf(`tool %q: parameters: type must be "object": a tool's arguments are a JSON object`, name))
	}
	var why string
	if f.witness, why = findWitness(f.schema); f.witness == nil {
		return nil, badRequest(pp, fmt.Sprintf("tool %q: the simulator cannot satisfy its parameters: %s", name, why))
	}
	return f, nil
}

// isObject reports whether a raw JSON value is an object.
func isObject(data json.RawMessage) bool {
	d := bytes.TrimSpace(data)
	return len(d) > 0 && d[0] == '{'
}

// witnessTries is how many seeded attempts findWitness makes.
const witnessTries = 32

// findWitness looks for arguments the schema accepts, from fixed seeds, half of the attempts
// writing only what it requires. It returns them, or nil and why there are none: the
// keyword the last attempt failed, or the bound it met.
func findWitness(s *schemaNode) (any, string) {
	why := fmt.Sprintf("it found no value to write within its bounds (%d values, %d levels of nesting and $ref)", maxGenValues, maxGenDepth)
	for i := range witnessTries {
		g := &argGen{r: rand.New(rand.NewPCG(uint64(i), 0x77697467)), minimal: i%2 == 0, budget: maxGenValues}
		v, ok := g.arguments(s)
		if !ok {
			continue
		}
		failed := s.check(v)
		if failed == "" {
			return v, ""
		}
		why = "every value it wrote failed " + failed
	}
	return nil, why
}

// arguments writes one argument object for the schema.
func (g *argGen) arguments(s *schemaNode) (any, bool) {
	obj := newNode(s.path)
	obj.types = typeObject
	v, ok := g.value(both(s, obj), "", 0)
	if _, isObj := v.(jsonObject); !isObj {
		return nil, false
	}
	return v, ok
}

// argTries is how many times a request's own draws may fail before its arguments are the
// witness.
const argTries = 4

// write writes the tool's arguments from the request's random source, as compact ASCII JSON.
func (f *toolFunc) write(r *rand.Rand) []byte {
	if f.schema == nil {
		return []byte("{}")
	}
	for range argTries {
		g := &argGen{r: r, budget: maxGenValues}
		if v, ok := g.arguments(f.schema); ok && f.schema.check(v) == "" {
			return appendJSON(nil, v)
		}
	}
	return appendJSON(nil, f.witness)
}

// toolCache keeps the compiled tools arrays of recent requests: an agent sends the same
// definitions with every request, which are then read and compiled once.
type toolCache struct {
	mu    sync.Mutex
	sets  map[uint64]cachedTools
	bytes int // of the keys held
}

// cachedTools is one cached array: its bytes, to tell it from another of the same hash, and
// what reading it gave.
type cachedTools struct {
	raw  []byte
	set  *toolSet
	aerr *apiError
}

// Bounds of the cache: arrays larger than maxCachedTools are compiled each time; past
// maxToolCacheBytes of arrays the cache starts again empty.
const (
	maxCachedTools    = 1 << 20
	maxToolCacheBytes = 16 << 20
)

// get returns the compiled array, compiling it the first time it is seen; flat says its
// function tools are in the Responses API's shape (parseTools).
func (c *toolCache) get(raw []json.RawMessage, flat bool) (*toolSet, *apiError) {
	// The shape is the key's first byte: the same bytes read in the other shape give
	// other errors.
	key := []byte{'c'}
	if flat {
		key[0] = 'r'
	}
	for _, item := range raw {
		key = append(append(key, item...), messageSeparator)
	}
	h := fnvString(fnvOffset64, string(key))
	c.mu.Lock()
	e, ok := c.sets[h]
	c.mu.Unlock()
	if ok && bytes.Equal(e.raw, key) {
		return e.set, e.aerr
	}
	set, aerr := parseTools(raw, flat)
	if len(key) > maxCachedTools {
		return set, aerr
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sets == nil || c.bytes+len(key) > maxToolCacheBytes {
		c.sets, c.bytes = map[uint64]cachedTools{}, 0
	}
	c.sets[h] = cachedTools{raw: key, set: set, aerr: aerr}
	c.bytes += len(key)
	return set, aerr
}
