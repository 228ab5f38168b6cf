package simserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validSchemas are tool parameters of every shape the simulator satisfies, as harnesses and
// their schema libraries write them.
var validSchemas = map[string]string{
	// opencode's read: camelCase path key, optional numbers with descriptions.
	"read": `{"type":"object","properties":{"filePath":{"type":"string","description":"The path to the file to read"},
		"offset":{"type":"number","description":"The line number to start reading from (0-based)"},
		"limit":{"type":"number"}},"required":["filePath"],"additionalProperties":false,
		"$schema":"http://json-schema.org/draft-07/schema#"}`,
	// enum, const, booleans, nested objects and arrays with counts.
	"nested": `{"type":"object","properties":{
		"mode":{"enum":["fast","slow","auto"]},"kind":{"const":"search"},"dry":{"type":"boolean"},
		"filter":{"type":"object","properties":{"dir":{"type":"string"},"depth":{"type":"integer","minimum":1,"maximum":3}},"required":["dir","depth"]},
		"paths":{"type":"array","items":{"type":"string"},"minItems":2,"maxItems":4},
		"tags":{"type":"array","items":{"enum":["a","b","c"]},"minItems":2,"uniqueItems":true}},
		"required":["mode","kind","dry","filter","paths","tags"]}`,
	// Numeric bounds of both drafts, multipleOf with a decimal, nullable types.
	"numbers": `{"type":"object","properties":{
		"a":{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":5},
		"b":{"type":"number","minimum":0.5,"maximum":0.75},
		"c":{"type":"number","multipleOf":0.1,"minimum":1,"maximum":2},
		"d":{"type":"integer","multipleOf":7,"minimum":10},
		"e":{"type":["integer","null"],"maximum":-3},
		"f":{"type":"number","exclusiveMinimum":2.5}},
		"required":["a","b","c","d","e","f"]}`,
	// Strings: lengths, patterns, formats.
	"strings": `{"type":"object","properties":{
		"short":{"type":"string","minLength":2,"maxLength":3},
		"long":{"type":"string","minLength":40},
		"id":{"type":"string","pattern":"^[A-Z]{3}-[0-9]{4}$"},
		"slug":{"type":"string","pattern":"^[a-z0-9]+(?:-[a-z0-9]+)*$","maxLength":20},
		"when":{"type":"string","format":"date-time"},"day":{"type":"string","format":"date"},
		"mail":{"type":"string","format":"email"},"uuid":{"type":"string","format":"uuid"},
		"site":{"type":"string","format":"uri"},"host":{"type":"string","format":"hostname"},
		"ip":{"type":"string","format":"ipv4"}},
		"required":["short","long","id","slug","when","day","mail","uuid","site","host","ip"]}`,
	// $ref to $defs, a recursive tree, anyOf with null (pydantic's Optional), allOf with one
	// $ref and a description beside it (pydantic's field with a description).
	"refs": `{"$defs":{"Node":{"type":"object","properties":{"name":{"type":"string"},
		"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}},"required":["name"]},
		"Color":{"type":"string","enum":["red","green"]}},
		"type":"object","properties":{
		"root":{"$ref":"#/$defs/Node"},"color":{"allOf":[{"$ref":"#/$defs/Color"}],"description":"a color"},
		"note":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null}},
		"required":["root","color","note"]}`,
	// oneOf as a discriminated union, as zod writes it.
	"union": `{"type":"object","properties":{"action":{"oneOf":[
		{"type":"object","properties":{"type":{"type":"string","const":"open"},"url":{"type":"string","format":"uri"}},"required":["type","url"],"additionalProperties":false},
		{"type":"object","properties":{"type":{"type":"string","const":"find"},"pattern":{"type":"string"}},"required":["type","pattern"],"additionalProperties":false}]}},
		"required":["action"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`,
	// Draft 4: definitions, boolean exclusiveMinimum, items as a tuple with additionalItems.
	"draft4": `{"$schema":"http://json-schema.org/draft-04/schema#","definitions":{"pos":{"type":"integer","minimum":0,"exclusiveMinimum":true}},
		"type":"object","properties":{"line":{"$ref":"#/definitions/pos"},
		"pair":{"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false,"minItems":2}},
		"required":["line","pair"]}`,
	// What the generator does not heed but check does: not, if/then/else, dependentRequired,
	// minProperties, patternProperties, contains.
	"judged": `{"type":"object","properties":{
		"x":{"type":"string","not":{"const":"the"}},
		"y":{"type":"integer","minimum":0,"maximum":9,"if":{"minimum":5},"then":{"multipleOf":2}},
		"z":{"type":"array","contains":{"const":3},"items":{"type":"integer","minimum":1,"maximum":4},"minItems":1}},
		"required":["x","y","z"],"dependentRequired":{"x":["w"]},"minProperties":5,
		"patternProperties":{"^w":{"type":"string"}}}`,
	// No parameters at all, and an empty object.
	"empty": `{}`,
	"bare":  `{"type":"object"}`,
}

// validator compiles a schema with a real JSON Schema validator, formats asserted.
func validator(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	require.NoError(t, c.AddResource("tool.json", doc))
	s, err := c.Compile("tool.json")
	require.NoError(t, err, schema)
	return s
}

// compileTool compiles a schema as a tool's parameters.
func compileTool(t *testing.T, schema string) *toolFunc {
	t.Helper()
	set, aerr := parseTools([]json.RawMessage{json.RawMessage(`{"type":"function","function":{"name":"t","parameters":` + schema + `}}`)}, false)
	require.Nil(t, aerr, "parseTools: %v", aerr)
	return set.funcs[0]
}

// TestArgumentsSatisfyTheirSchemas: for every schema shape, arguments written from many seeds
// are JSON objects a real JSON Schema validator accepts; the same seed writes the same bytes;
// and the arguments are ASCII, as the stream cuts them between any two bytes.
func TestArgumentsSatisfyTheirSchemas(t *testing.T) {
	for name, schema := range validSchemas {
		t.Run(name, func(t *testing.T) {
			v := validator(t, schema)
			f := compileTool(t, schema)
			distinct := map[string]bool{}
			for seed := range uint64(300) {
				args := f.write(rand.New(rand.NewPCG(seed, 1)))
				distinct[string(args)] = true
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
				require.NoError(t, err, "seed %d: %s", seed, args)
				require.NoError(t, v.Validate(inst), "seed %d: %s", seed, args)
				for _, c := range args {
					require.Less(t, c, byte(0x80), "seed %d: %s is not ASCII", seed, args)
				}
				assert.Equal(t, args, f.write(rand.New(rand.NewPCG(seed, 1))), "seed %d writes the same again", seed)
			}
			if name != "empty" && name != "bare" {
				assert.Greater(t, len(distinct), 5, "arguments vary with the seed")
			}
		})
	}
}

// TestArgumentShapes: keys that name paths get paths, links get URLs, the rest words of the
// vocabulary.
func TestArgumentShapes(t *testing.T) {
	f := compileTool(t, `{"type":"object","properties":{"file_path":{"type":"string"},"directory":{"type":"string"},
		"url":{"type":"string"},"query":{"type":"string"}},"required":["file_path","directory","url","query"]}`)
	var args struct{ FilePath, Directory, URL, Query string }
	for seed := range uint64(50) {
		b := f.write(rand.New(rand.NewPCG(seed, 2)))
		require.NoError(t, json.Unmarshal(b, &struct {
			FilePath  *string `json:"file_path"`
			Directory *string `json:"directory"`
			URL       *string `json:"url"`
			Query     *string `json:"query"`
		}{&args.FilePath, &args.Directory, &args.URL, &args.Query}))
		assert.Regexp(t, `^[a-z]+(/[a-z]+)+\.[a-z]+$`, args.FilePath, "a relative path with an extension")
		assert.Regexp(t, `^[a-z]+(/[a-z]+)*$`, args.Directory)
		assert.Regexp(t, `^https://example\.invalid/[a-z]+(/[a-z]+)*$`, args.URL, "a link that resolves nowhere")
		for _, w := range strings.Fields(args.Query) {
			assert.Contains(t, vocabulary, w)
		}
	}
}

// TestUnsatisfiableSchemas: a schema the simulator cannot satisfy is refused with the tool's
// name, where in the schema, and the keyword.
func TestUnsatisfiableSchemas(t *testing.T) {
	for _, tc := range []struct{ name, schema, want string }{
		{"lengths", `{"type":"object","properties":{"q":{"type":"string","minLength":5,"maxLength":2}}}`,
			"parameters.properties.q: maxLength 2 is below minLength 5"},
		{"bounds", `{"type":"object","properties":{"n":{"minimum":3,"maximum":1}}}`,
			"parameters.properties.n: maximum 1 leaves no number from minimum 3"},
		{"items", `{"type":"object","properties":{"l":{"type":"array","minItems":3,"maxItems":1}}}`, "maxItems 1 is below minItems 3"},
		{"empty enum", `{"type":"object","properties":{"e":{"enum":[]}}}`, "parameters.properties.e: enum must be a non-empty array"},
		{"required false", `{"type":"object","properties":{"a":false},"required":["a"]}`, `required names "a", but its schema is false`},
		{"required closed", `{"type":"object","required":["a"],"additionalProperties":false}`,
			`required names "a", but additionalProperties: false forbids it`},
		{"lookahead", `{"type":"object","properties":{"p":{"type":"string","pattern":"^(?=a)"}}}`,
			`parameters.properties.p: pattern "^(?=a)" is not a regular expression the simulator can read`},
		{"external ref", `{"type":"object","properties":{"r":{"$ref":"https://example.invalid/s.json"}}}`,
			"only references within the schema"},
		{"missing ref", `{"type":"object","properties":{"r":{"$ref":"#/$defs/Nope"}}}`, `$ref "#/$defs/Nope": no "$defs" here`},
		{"unevaluated", `{"type":"object","unevaluatedProperties":false}`, "unevaluatedProperties is a keyword the simulator cannot honour"},
		{"type name", `{"type":"object","properties":{"s":{"type":"strin"}}}`, `type "strin" is not a JSON Schema type`},
		{"no integer", `{"type":"object","properties":{"i":{"type":"integer","minimum":1.2,"maximum":1.8}},"required":["i"]}`,
			"the simulator cannot satisfy its parameters: every value it wrote failed parameters.properties.i: maximum"},
		{"overlapping oneOf", `{"type":"object","properties":{"o":{"oneOf":[{"type":"string"},{"type":"string"}]}},"required":["o"]}`,
			"parameters.properties.o: oneOf"},
		{"not anything", `{"type":"object","properties":{"x":{"not":{}}},"required":["x"]}`, "parameters.properties.x: not"},
		{"endless", `{"type":"object","properties":{"n":{"$ref":"#"}},"required":["n"]}`, "cannot satisfy"},
		{"root not object", `{"type":"string"}`, `parameters: type must be "object"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, aerr := parseTools([]json.RawMessage{json.RawMessage(`{"type":"function","function":{"name":"grep","parameters":` + tc.schema + `}}`)}, false)
			require.NotNil(t, aerr, "schema %s", tc.schema)
			assert.Equal(t, 400, aerr.Status)
			assert.Equal(t, "tools[0].function.parameters", aerr.Param)
			assert.Contains(t, aerr.Message, `tool "grep": `)
			assert.Contains(t, aerr.Message, tc.want)
		})
	}
}

// TestRiskyNames: tools whose names say they change or run things, or ask a person, are told
// apart from those that read.
func TestRiskyNames(t *testing.T) {
	for _, name := range []string{"bash", "Bash", "shell", "run_command", "exec", "write", "todowrite", "edit", "multiedit",
		"apply_patch", "delete_file", "remove", "NotebookEdit", "str_replace_editor", "git_commit", "ExitPlanMode", "computer"} {
		assert.Equal(t, riskChanges, riskOf(name), "riskOf(%q)", name)
	}
	for _, name := range []string{"request_user_input", "ask_user", "AskUserQuestion", "confirm", "askHuman", "get_approval"} {
		assert.Equal(t, riskAsks, riskOf(name), "riskOf(%q)", name)
	}
	for _, name := range []string{"read", "read_file", "grep", "glob", "list", "ls", "webfetch", "web_search", "todoread", "task", "view_image", "find", "open_page", "scroll"} {
		assert.Empty(t, riskOf(name), "riskOf(%q)", name)
	}
}

// TestKeyWords: property names split into words whatever their case style.
func TestKeyWords(t *testing.T) {
	for key, want := range map[string]string{"filePath": "file path", "file_path": "file path", "notebook-path": "notebook path",
		"URL": "url", "workingDirectory": "working directory", "x": "x"} {
		assert.Equal(t, want, strings.Join(keyWords(key), " "), fmt.Sprintf("keyWords(%q)", key))
	}
}
