package simserver

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
)

// schemaNode is one compiled JSON Schema, as a tool's parameters give it: the keywords the
// simulator checks values against (check) and writes values from (argGen). Keywords it does
// not know are annotations and ignored, as JSON Schema says; the few whose meaning it cannot
// honour ($dynamicRef, unevaluatedProperties, …) make the schema one it cannot satisfy.
type schemaNode struct {
	path  string // where the schema is, for errors: "parameters.properties.path"
	never bool   // the false schema: no value is valid

	types    jsonTypes // allowed types; 0: any
	enum     []any
	hasEnum  bool
	konst    any
	hasConst bool

	min, max         *big.Rat // nil: unbounded
	exclMin, exclMax bool
	multipleOf       *big.Rat

	minLength, maxLength int // maxLength < 0: none
	pattern              *regexp.Regexp
	patternSyntax        *syntax.Regexp
	format               string

	prefix                   []*schemaNode
	items                    *schemaNode // nil: any
	minItems, maxItems       int         // maxItems < 0: none
	unique                   bool
	contains                 *schemaNode
	minContains, maxContains int // maxContains < 0: none

	props              []schemaProp
	required           []string
	additional         *schemaNode // nil: any
	patternProps       []patternProp
	propertyNames      *schemaNode
	minProps, maxProps int // maxProps < 0: none
	dependentRequired  []dependent
	dependentSchemas   []dependent

	allOf, anyOf, oneOf []*schemaNode
	not                 *schemaNode
	ifS, thenS, elseS   *schemaNode
	ref                 *schemaNode
}

// schemaProp is one entry of properties.
type schemaProp struct {
	name string
	node *schemaNode
}

// patternProp is one entry of patternProperties.
type patternProp struct {
	re   *regexp.Regexp
	node *schemaNode
}

// dependent is one entry of dependentRequired (names) or dependentSchemas (node).
type dependent struct {
	prop  string
	names []string
	node  *schemaNode
}

// jsonTypes is a set of JSON Schema types.
type jsonTypes uint8

// The JSON Schema types.
const (
	typeNull jsonTypes = 1 << iota
	typeBoolean
	typeObject
	typeArray
	typeNumber
	typeString
	typeInteger
)

var typeNames = map[string]jsonTypes{
	"null": typeNull, "boolean": typeBoolean, "object": typeObject, "array": typeArray,
	"number": typeNumber, "string": typeString, "integer": typeInteger,
}

// schemaError is a schema the simulator cannot satisfy: where, and which keyword says what.
type schemaError struct {
	path, msg string
}

func (e *schemaError) Error() string { return e.path + ": " + e.msg }

// unsupportedKeywords are keywords whose meaning the simulator cannot honour.
var unsupportedKeywords = []string{"$dynamicRef", "$recursiveRef", "unevaluatedProperties", "unevaluatedItems"}

// maxSchemaDepth bounds how deeply schemas nest, against a body built to exhaust the stack.
const maxSchemaDepth = 64

// schemaCompiler compiles one tool's parameters, resolving $ref within them.
type schemaCompiler struct {
	root  any
	refs  map[string]*schemaNode // compiled targets by JSON pointer
	depth int
}

// compileSchema compiles a tool's parameters schema (decoded by decodeOrdered), whose errors
// say where under path it is.
func compileSchema(doc any, path string) (*schemaNode, error) {
	c := &schemaCompiler{root: doc, refs: map[string]*schemaNode{}}
	return c.compile(doc, path)
}

// compile compiles the schema v found at path.
func (c *schemaCompiler) compile(v any, path string) (*schemaNode, error) {
	n := &schemaNode{}
	return n, c.compileInto(n, v, path)
}

// compileInto compiles the schema v into n.
func (c *schemaCompiler) compileInto(n *schemaNode, v any, path string) error {
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxSchemaDepth {
		return &schemaError{path, fmt.Sprintf("schemas nest more than %d deep", maxSchemaDepth)}
	}
	n.path, n.maxLength, n.maxItems, n.maxProps, n.maxContains, n.minContains = path, -1, -1, -1, -1, 1
	switch s := v.(type) {
	case bool:
		n.never = !s
		return nil
	case jsonObject:
		for _, k := range unsupportedKeywords {
			if w, ok := s.get(k); ok && w != true {
				return &schemaError{path, fmt.Sprintf("%s is a keyword the simulator cannot honour", k)}
			}
		}
		for _, step := range []func(*schemaNode, jsonObject, string) error{
			c.compileRef, compileType, compileValues, compileNumber, compileString, c.compileArray,
			c.compileObject, c.compileLogic,
		} {
			if err := step(n, s, path); err != nil {
				return err
			}
		}
		return nil
	}
	return &schemaError{path, "a schema must be an object or a boolean"}
}

// compileRef resolves $ref to a pointer within the tool's parameters.
func (c *schemaCompiler) compileRef(n *schemaNode, s jsonObject, path string) error {
	v, ok := s.get("$ref")
	if !ok {
		return nil
	}
	ref, ok := v.(string)
	if !ok {
		return &schemaError{path, "$ref must be a string"}
	}
	if !strings.HasPrefix(ref, "#") {
		return &schemaError{path, fmt.Sprintf("$ref %q: only references within the schema (#/…) are supported", ref)}
	}
	if t, ok := c.refs[ref]; ok {
		n.ref = t
		return nil
	}
	target, err := resolvePointer(c.root, ref)
	if err != nil {
		return &schemaError{path, fmt.Sprintf("$ref %q: %v", ref, err)}
	}
	t := &schemaNode{}
	c.refs[ref] = t // before compiling it, so that a recursive schema refers to itself
	n.ref = t
	return c.compileInto(t, target, "parameters"+strings.ReplaceAll(strings.TrimPrefix(ref, "#"), "/", "."))
}

// resolvePointer returns the value a "#/a/b" JSON pointer names in doc.
func resolvePointer(doc any, ref string) (any, error) {
	frag, err := url.PathUnescape(strings.TrimPrefix(ref, "#"))
	if err != nil {
		return nil, err
	}
	if frag == "" {
		return doc, nil
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, fmt.Errorf("anchors are not supported, only JSON pointers")
	}
	cur := doc
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case jsonObject:
			v, ok := x.get(tok)
			if !ok {
				return nil, fmt.Errorf("no %q here", tok)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("no item %q here", tok)
			}
			cur = x[i]
		default:
			return nil, fmt.Errorf("no %q here", tok)
		}
	}
	return cur, nil
}

// compileType reads type: one name or an array of names.
func compileType(n *schemaNode, s jsonObject, path string) error {
	v, ok := s.get("type")
	if !ok {
		return nil
	}
	names, _ := v.([]any)
	if name, ok := v.(string); ok {
		names = []any{name}
	}
	for _, x := range names {
		name, _ := x.(string)
		t, ok := typeNames[name]
		if !ok {
			return &schemaError{path, fmt.Sprintf("type %s is not a JSON Schema type: want object, array, string, number, integer, boolean or null", jsonText(x))}
		}
		n.types |= t
	}
	if n.types == 0 {
		return &schemaError{path, "type must be a type name or a non-empty array of them"}
	}
	return nil
}

// compileValues reads enum and const.
func compileValues(n *schemaNode, s jsonObject, path string) error {
	if v, ok := s.get("enum"); ok {
		vals, ok := v.([]any)
		if !ok || len(vals) == 0 {
			return &schemaError{path, "enum must be a non-empty array: an empty one allows no value"}
		}
		n.enum, n.hasEnum = vals, true
	}
	n.konst, n.hasConst = s.get("const")
	return nil
}

// compileNumber reads the numeric keywords, in their draft 4 forms too (exclusiveMinimum as a
// boolean beside minimum).
func compileNumber(n *schemaNode, s jsonObject, path string) error {
	var err error
	get := func(key string) *big.Rat {
		v, ok := s.get(key)
		if !ok || err != nil {
			return nil
		}
		num, ok := v.(json.Number)
		r, ok2 := rat(num)
		if !ok || !ok2 {
			err = &schemaError{path, key + " must be a number"}
			return nil
		}
		return r
	}
	n.min, n.max = get("minimum"), get("maximum")
	for _, e := range []struct {
		key   string
		bound **big.Rat
		excl  *bool
	}{{"exclusiveMinimum", &n.min, &n.exclMin}, {"exclusiveMaximum", &n.max, &n.exclMax}} {
		v, ok := s.get(e.key)
		if b, isBool := v.(bool); ok && isBool {
			*e.excl = b && *e.bound != nil
			continue
		}
		if r := get(e.key); r != nil {
			tighter := *e.bound == nil || (e.key == "exclusiveMinimum" && r.Cmp(*e.bound) >= 0) ||
				(e.key == "exclusiveMaximum" && r.Cmp(*e.bound) <= 0)
			if tighter {
				*e.bound, *e.excl = r, true
			}
		}
	}
	if n.multipleOf = get("multipleOf"); n.multipleOf != nil && n.multipleOf.Sign() <= 0 {
		return &schemaError{path, "multipleOf must be above 0"}
	}
	if err != nil {
		return err
	}
	if n.min != nil && n.max != nil {
		if c := n.min.Cmp(n.max); c > 0 || (c == 0 && (n.exclMin || n.exclMax)) {
			return &schemaError{path, fmt.Sprintf("maximum %s leaves no number from minimum %s", n.max.RatString(), n.min.RatString())}
		}
	}
	return nil
}

// count reads a non-negative integer keyword; def when absent.
func count(s jsonObject, key string, def int, path string) (int, error) {
	v, ok := s.get(key)
	if !ok {
		return def, nil
	}
	num, _ := v.(json.Number)
	r, ok := rat(num)
	if !ok || !r.IsInt() || r.Sign() < 0 || !r.Num().IsInt64() || r.Num().Int64() > 1<<30 {
		return 0, &schemaError{path, key + " must be a non-negative integer"}
	}
	return int(r.Num().Int64()), nil
}

// compileString reads the string keywords.
func compileString(n *schemaNode, s jsonObject, path string) error {
	var err error
	if n.minLength, err = count(s, "minLength", 0, path); err != nil {
		return err
	}
	if n.maxLength, err = count(s, "maxLength", -1, path); err != nil {
		return err
	}
	if n.minLength > maxGenString {
		return &schemaError{path, fmt.Sprintf("minLength %d is more than the simulator writes (%d)", n.minLength, maxGenString)}
	}
	if n.maxLength >= 0 && n.maxLength < n.minLength {
		return &schemaError{path, fmt.Sprintf("maxLength %d is below minLength %d", n.maxLength, n.minLength)}
	}
	if v, ok := s.get("format"); ok {
		n.format, _ = v.(string)
	}
	v, ok := s.get("pattern")
	if !ok {
		return nil
	}
	src, ok := v.(string)
	if !ok {
		return &schemaError{path, "pattern must be a string"}
	}
	if n.pattern, n.patternSyntax, err = compilePattern(src); err != nil {
		return &schemaError{path, fmt.Sprintf("pattern %q is not a regular expression the simulator can read: %v", src, err)}
	}
	return nil
}

// compilePattern compiles a pattern for matching and for writing strings that match it.
func compilePattern(src string) (*regexp.Regexp, *syntax.Regexp, error) {
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, nil, err
	}
	parsed, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, nil, err
	}
	return re, parsed.Simplify(), nil
}

// compileArray reads the array keywords: items (a schema, or in drafts before 2020 an array
// of them, with additionalItems for the rest), prefixItems, the counts, uniqueItems, contains.
func (c *schemaCompiler) compileArray(n *schemaNode, s jsonObject, path string) error {
	var err error
	if n.minItems, err = count(s, "minItems", 0, path); err != nil {
		return err
	}
	if n.maxItems, err = count(s, "maxItems", -1, path); err != nil {
		return err
	}
	if n.maxItems >= 0 && n.maxItems < n.minItems {
		return &schemaError{path, fmt.Sprintf("maxItems %d is below minItems %d", n.maxItems, n.minItems)}
	}
	n.unique = s.has("uniqueItems", true)
	rest := "items"
	if v, ok := s.get("prefixItems"); ok {
		if n.prefix, err = c.compileList(v, path+".prefixItems"); err != nil {
			return err
		}
	} else if v, ok := s.get("items"); ok {
		if _, tuple := v.([]any); tuple {
			if n.prefix, err = c.compileList(v, path+".items"); err != nil {
				return err
			}
			rest = "additionalItems"
		}
	}
	if n.items, err = c.optional(s, rest, path); err != nil {
		return err
	}
	if n.contains, err = c.optional(s, "contains", path); err != nil {
		return err
	}
	if n.minContains, err = count(s, "minContains", 1, path); err != nil {
		return err
	}
	n.maxContains, err = count(s, "maxContains", -1, path)
	return err
}

// has reports whether the object's key holds the value v.
func (o jsonObject) has(key string, v any) bool {
	w, ok := o.get(key)
	return ok && w == v
}

// optional compiles the subschema under key, or returns nil when there is none.
func (c *schemaCompiler) optional(s jsonObject, key, path string) (*schemaNode, error) {
	v, ok := s.get(key)
	if !ok {
		return nil, nil
	}
	return c.compile(v, path+"."+key)
}

// compileList compiles an array of schemas.
func (c *schemaCompiler) compileList(v any, path string) ([]*schemaNode, error) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, &schemaError{path, "must be a non-empty array of schemas"}
	}
	nodes := make([]*schemaNode, len(list))
	for i, item := range list {
		var err error
		if nodes[i], err = c.compile(item, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

// compileLogic reads allOf, anyOf, oneOf, not and if/then/else.
func (c *schemaCompiler) compileLogic(n *schemaNode, s jsonObject, path string) error {
	for _, l := range []struct {
		key  string
		dest *[]*schemaNode
	}{{"allOf", &n.allOf}, {"anyOf", &n.anyOf}, {"oneOf", &n.oneOf}} {
		if v, ok := s.get(l.key); ok {
			var err error
			if *l.dest, err = c.compileList(v, path+"."+l.key); err != nil {
				return err
			}
		}
	}
	var err error
	for _, o := range []struct {
		key  string
		dest **schemaNode
	}{{"not", &n.not}, {"if", &n.ifS}, {"then", &n.thenS}, {"else", &n.elseS}} {
		if *o.dest, err = c.optional(s, o.key, path); err != nil {
			return err
		}
	}
	return nil
}

// jsonText renders a decoded value as JSON, for messages.
func jsonText(v any) string { return string(appendJSON(nil, v)) }
