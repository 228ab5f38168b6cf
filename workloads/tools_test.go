package workloads

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCodingToolSet checks that the coding set is a coding agent's ten tools, like opencode's,
// with about 21,000 characters of JSON in all, each a described function with a parameters
// schema.
func TestCodingToolSet(t *testing.T) {
	s, ok := BuiltinToolSet(ToolSetCoding)
	require.True(t, ok)
	assert.Equal(t, []string{"bash", "edit", "webfetch", "glob", "grep", "list", "read", "write", "todowrite", "todoread"}, s.Functions())
	assert.InDelta(t, 21000, len(s.JSON()), 2100, "characters of JSON: opencode's ten tools carry about 21 k")
	checkFunctions(t, s)
}

// TestBrowseToolSet checks the page-reading set ocbrowse sends.
func TestBrowseToolSet(t *testing.T) {
	s, ok := BuiltinToolSet(ToolSetBrowse)
	require.True(t, ok)
	assert.Equal(t, []string{"search", "open_page", "read_page", "scroll", "find_in_page"}, s.Functions())
	checkFunctions(t, s)

	none, ok := BuiltinToolSet(ToolSetNone)
	require.True(t, ok)
	assert.Nil(t, none.JSON())
	assert.Empty(t, none.Tools())
}

// checkFunctions checks that every tool of s is a function with a description and an object
// schema whose required properties exist, and that Tools says what JSON says.
func checkFunctions(t *testing.T, s *ToolSet) {
	t.Helper()
	for _, tool := range s.Tools() {
		require.Equal(t, openai.ToolTypeFunction, tool.Type)
		fn := tool.Function
		assert.NotEmpty(t, fn.Description, "%s: description", fn.Name)
		var schema struct {
			Type       string         `json:"type"`
			Properties map[string]any `json:"properties"`
			Required   []string       `json:"required"`
		}
		require.NoError(t, json.Unmarshal(fn.Parameters.(json.RawMessage), &schema), "%s: parameters", fn.Name)
		assert.Equal(t, "object", schema.Type, "%s: parameters type", fn.Name)
		for _, r := range schema.Required {
			assert.Contains(t, schema.Properties, r, "%s: required property", fn.Name)
		}
	}
	sent, err := json.Marshal(s.Tools())
	require.NoError(t, err)
	var fromTools, fromJSON any
	require.NoError(t, json.Unmarshal(sent, &fromTools))
	require.NoError(t, json.Unmarshal(s.JSON(), &fromJSON))
	assert.Equal(t, fromJSON, fromTools, "Tools() marshals to the set's JSON")
}

// TestParseToolSet covers what a tools array must be, each error naming the element and what
// is wrong with it, and what a non-function tool keeps.
func TestParseToolSet(t *testing.T) {
	const fn = `{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}`
	tests := []struct{ data, want string }{
		{`{"tools": []}`, `{"tools":[]} is not allowed: want a JSON array of tools, such as [{"type": "function", "function": {…}}]`},
		{` [ ] `, `[] is not allowed: want at least one tool (tools.set none sends none)`},
		{`null`, `null is not allowed: want a JSON array of tools, such as [{"type": "function", "function": {…}}]`},
		{`[{"type": "function",}]`, `not JSON: invalid character '}' looking for beginning of object key string`},
		{`[` + fn + `, 3]`, `tools[1]: 3 is not allowed: want an object with a type, such as {"type": "function", "function": {…}}`},
		{`[{"function": {}}]`, `tools[0].type: missing: want the tool's type, such as "function"`},
		{`[{"type": 1}]`, `tools[0].type: 1 is not allowed: want a string, such as "function"`},
		{`[{"type": "function"}]`, `tools[0].function: missing: want an object with the function's name, description and parameters`},
		{`[{"type": "function", "function": "f"}]`, `tools[0].function: "f" is not allowed: want an object with the function's name, description and parameters`},
		{`[{"type": "function", "function": {"parameters": {}}}]`, `tools[0].function.name: missing: want the function's name`},
		{`[{"type": "function", "function": {"name": "read file", "parameters": {}}}]`,
			`tools[0].function.name: "read file" is not allowed: want letters, digits, '_' or '-', at most 64`},
		{`[{"type": "function", "function": {"name": "f", "description": 2, "parameters": {}}}]`,
			`tools[0].function.description: 2 is not allowed: want a string`},
		{`[{"type": "function", "function": {"name": "f"}}]`,
			`tools[0].function.parameters: missing: want a JSON Schema object, such as {"type": "object", "properties": {}}`},
		{`[{"type": "function", "function": {"name": "f", "parameters": "none"}}]`,
			`tools[0].function.parameters: "none" is not allowed: want a JSON Schema object, such as {"type": "object", "properties": {}}`},
		{`[` + fn + `, ` + fn + `]`, `tools[1].function.name: "f" is not allowed: want a name no other tool of the array has`},
	}
	for _, tt := range tests {
		_, err := ParseToolSet("x.json", []byte(tt.data))
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseToolSet(%s) error = %v; want %q", tt.data, err, tt.want)
		}
	}

	s, err := ParseToolSet("x.json", []byte(`[`+fn+`, {"type": "web_search", "search_context_size": "low"}]`))
	require.NoError(t, err)
	assert.Equal(t, []string{"f"}, s.Functions(), "a web_search tool is no function")
	assert.Equal(t, openai.Tool{Type: "web_search", Parameters: map[string]any{"search_context_size": json.RawMessage(`"low"`)}}, s.Tools()[1])
	assert.JSONEq(t, `[`+fn+`, {"type": "web_search", "search_context_size": "low"}]`, string(s.JSON()))
}

// TestToolsFile checks a tools.set that names a file: relative to the workload file, read and
// checked by Load, the choice and per_tool names checked against it, and every problem with
// the file named.
func TestToolsFile(t *testing.T) {
	dir := t.TempDir()
	tools := `[{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}]`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tools.json"), []byte(tools), 0o600))
	workload := filepath.Join(dir, "w.yaml")
	write := func(body string) {
		require.NoError(t, os.WriteFile(workload, []byte("name: w\n"+body), 0o600))
	}

	write("tools: {set: tools.json, choice: lookup, per_tool: {lookup: {latency: 2s}}}\n")
	w, err := Load(LoadOptions{Workload: workload})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "tools.json"), w.Tools.Set, "relative to the workload file, made absolute")
	set, err := w.Tools.Definitions()
	require.NoError(t, err)
	assert.Equal(t, []string{"lookup"}, set.Functions())
	assert.Equal(t, openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "lookup"}}, w.Tools.ToolChoice())
	assert.Equal(t, ConstDuration(2*time.Second), w.Tools.LatencyOf("Lookup"), "per_tool names match regardless of case")

	// The choice and per_tool names must be the file's functions.
	write("tools: {set: tools.json, choice: search, per_tool: {read: {latency: 2s}}}\n")
	_, err = Load(LoadOptions{Workload: workload})
	assert.EqualError(t, err, `tools.choice: "search" is not allowed: want one of auto, none, required, or the name of a function tool of tools.set (lookup)`+"\n"+
		`tools.per_tool.read: "read" is not allowed: want the name of a function tool of tools.set (lookup)`)

	// A file that cannot be read, or is no tools array, is named with what is wrong.
	missing := filepath.Join(dir, "codng")
	_, err = Load(LoadOptions{Workload: "smoke", Overrides: []Override{{Key: "tools.set", Value: missing}}})
	assert.EqualError(t, err, `tools.set: "`+missing+`" is not allowed: want one of none, coding, browse, `+
		`or the path of a JSON file holding an OpenAI tools array (cannot read the file: no such file or directory)`)
	_, err = Load(LoadOptions{Workload: "smoke", Overrides: []Override{{Key: "tools.set", Value: dir}}})
	assert.ErrorContains(t, err, "(not a regular file)")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`[{"type": "function", "function": {"name": "f"}}]`), 0o600))
	write("tools: {set: bad.json}\n")
	_, err = Load(LoadOptions{Workload: workload})
	assert.EqualError(t, err, "tools.set: "+filepath.Join(dir, "bad.json")+
		`: tools[0].function.parameters: missing: want a JSON Schema object, such as {"type": "object", "properties": {}}`)

	// A recorded configuration loads without its tools file, which may have moved since.
	write("tools: {set: tools.json}\n")
	w, err = Load(LoadOptions{Workload: workload})
	require.NoError(t, err)
	b, err := w.Redacted(nil)
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(dir, "tools.json")))
	back, err := LoadRecorded(b)
	require.NoError(t, err, "config.yaml:\n%s", b)
	assert.Equal(t, w, back)
}

// TestPerToolKeys sets tools.per_tool entries from every layer, nested, whole and one key at a
// time, and checks that entries merge across layers key by key.
func TestPerToolKeys(t *testing.T) {
	file := writeFile(t, "w.yaml", "name: w\ntools:\n  set: coding\n  per_tool:\n    bash: {latency: 30s, result_tokens: 2000}\n    read: {result_tokens: 900}\n")
	w, err := Load(LoadOptions{
		Workload:   file,
		ConfigFile: writeFile(t, "c.yaml", "tools: {per_tool: {grep: {latency: 2s}}}\n"),
		Env:        []string{"AGENTSIM_TOOLS_PER_TOOL_BASH_LATENCY=1m", "AGENTSIM_TOOLS_PER_TOOL={glob: {result_tokens: 50}}"},
		Overrides: []Override{
			{Key: "tools.per_tool.read.latency", Value: "{dist: exp, mean: 400ms}", Source: "--set"},
			{Key: "tools.per_tool", Value: "{webfetch: {latency: 5s}}", Source: "--set"},
		},
	})
	require.NoError(t, err)
	d := func(s time.Duration) *DurationDist { c := ConstDuration(s); return &c }
	n := func(v int) *Dist { c := Const(v); return &c }
	assert.Equal(t, map[string]ToolOverride{
		"bash":     {Latency: d(time.Minute), ResultTokens: n(2000)},
		"read":     {Latency: &DurationDist{Kind: DistExp, Avg: 400 * time.Millisecond}, ResultTokens: n(900)},
		"grep":     {Latency: d(2 * time.Second)},
		"glob":     {ResultTokens: n(50)},
		"webfetch": {Latency: d(5 * time.Second)},
	}, w.Tools.PerTool)
	assert.Equal(t, Const(2000), w.Tools.ResultTokensOf("bash"))
	assert.Equal(t, DefaultToolLatency(), w.Tools.LatencyOf("glob"), "a key the entry leaves unset is the section's")
	assert.Equal(t, DefaultResultTokens(), w.Tools.ResultTokensOf("todoread"), "a tool without an entry")
	assert.Equal(t, "duration-dist", KeyType("tools.per_tool.bash.latency"))
	assert.Equal(t, "map", KeyType("tools.per_tool"))
	assert.Equal(t, "", KeyType("tools.per_tool.bash"))

	// The resolved entries are shown, and load back.
	b, err := w.YAML()
	require.NoError(t, err)
	assert.Contains(t, string(b), "  per_tool:\n    bash:\n      latency: 1m\n      result_tokens: 2000\n")
	back, err := Load(LoadOptions{Workload: writeFile(t, "rt.yaml", string(b))})
	require.NoError(t, err, "yaml:\n%s", b)
	assert.Equal(t, w, back)
}

// TestPerToolUnknownKeys checks the messages for keys under tools.per_tool that are none.
func TestPerToolUnknownKeys(t *testing.T) {
	_, err := Load(LoadOptions{Workload: "smoke",
		Env: []string{"AGENTSIM_TOOLS_PER_TOOL_BASH_LATNCY=1s"},
		Overrides: []Override{
			{Key: "tools.per_tool.bash", Value: "1s", Source: "--set"},
			{Key: "tools.per_tool.bash.latency.mean", Value: "1s", Source: "--set"},
			{Key: "tools.per_tool.bash.timeout", Value: "1s", Source: "--set"},
		}})
	assert.EqualError(t, err, strings.Join([]string{
		`AGENTSIM_TOOLS_PER_TOOL_BASH_LATNCY: unknown key: no workload key is named AGENTSIM_TOOLS_PER_TOOL_BASH_LATNCY`,
		`--set tools.per_tool.bash=1s: unknown key "tools.per_tool.bash": it is an entry of tools.per_tool; set one of its keys, such as "tools.per_tool.bash.latency"`,
		`--set tools.per_tool.bash.latency.mean=1s: unknown key "tools.per_tool.bash.latency.mean": tools.per_tool.bash.latency is a distribution; ` +
			`set it whole, e.g. tools.per_tool.bash.latency='{dist: exp, mean: 2s}'`,
		`--set tools.per_tool.bash.timeout=1s: unknown key "tools.per_tool.bash.timeout": an entry of tools.per_tool takes latency and result_tokens`,
	}, "\n"))
}

// TestToolsKeys checks the tools and task keys from the environment and --set, their
// defaults, and the values package agents reads.
func TestToolsKeys(t *testing.T) {
	w, err := Load(LoadOptions{Workload: "smoke"})
	require.NoError(t, err)
	assert.Equal(t, Tools{Set: ToolSetNone, Choice: ToolChoiceAuto, Parallel: true, Latency: DefaultToolLatency(),
		ResultTokens: DefaultResultTokens()}, w.Tools, "defaults")
	assert.False(t, w.Tools.Enabled())
	assert.Equal(t, Task{Steps: DefaultTaskSteps(), CallsPerStep: DefaultCallsPerStep(), MessageTokens: Const(DefaultMessageTokens)}, w.Task)
	assert.False(t, w.Pacer.HoldAcrossTools)

	w, err = Load(LoadOptions{Workload: "smoke",
		Env: []string{"AGENTSIM_TOOLS_SET=coding", "AGENTSIM_TOOLS_PARALLEL=false", "AGENTSIM_PACER_HOLD_ACROSS_TOOLS=true",
			"AGENTSIM_TASK_STEPS=12"},
		Overrides: []Override{{Key: "tools.choice", Value: "required"}, {Key: "tools.latency", Value: "{dist: exp, mean: 1s}"},
			{Key: "task.calls_per_step", Value: "2"}, {Key: "tools.result_tokens", Value: "300"}}})
	require.NoError(t, err)
	assert.True(t, w.Tools.Enabled())
	assert.Equal(t, ToolSetCoding, w.Tools.Set)
	assert.False(t, w.Tools.Parallel)
	assert.Equal(t, "required", w.Tools.ToolChoice())
	assert.Equal(t, DurationDist{Kind: DistExp, Avg: time.Second}, w.Tools.LatencyOf("bash"))
	assert.Equal(t, Const(300), w.Tools.ResultTokensOf("bash"))
	assert.True(t, w.Pacer.HoldAcrossTools)
	assert.Equal(t, Const(12), w.Task.Steps)
	assert.Equal(t, Const(2), w.Task.CallsPerStep)
	set, err := w.Tools.Definitions()
	require.NoError(t, err)
	assert.Len(t, set.Tools(), 10)

	for _, name := range []string{"AGENTSIM_TOOLS_SET", "AGENTSIM_TOOLS_CHOICE", "AGENTSIM_TOOLS_PARALLEL", "AGENTSIM_TOOLS_LATENCY",
		"AGENTSIM_TOOLS_RESULT_TOKENS", "AGENTSIM_TOOLS_PER_TOOL", "AGENTSIM_TASK_STEPS", "AGENTSIM_TASK_CALLS_PER_STEP",
		"AGENTSIM_TASK_MESSAGE_TOKENS", "AGENTSIM_PACER_HOLD_ACROSS_TOOLS"} {
		assert.True(t, slices.ContainsFunc(Keys(), func(k string) bool { return EnvName(k) == name }), "no key for %s", name)
	}
}

// quantile returns the q-quantile of sorted xs.
func quantile(xs []float64, q float64) float64 { return xs[int(q*float64(len(xs)-1))] }

// TestDefaultToolLatency() samples the default tool latency and checks that it lands within 10 %
// of TraceLab's call quantiles (p50 0.3 s, p90 13.6 s, p99 3.6 min), within half a point of
// its 4 % of calls over a minute, and within 5 points of the 85 % of tool time those calls
// hold (a share that rests on rare, very long calls, so it converges slowly).
func TestDefaultToolLatency(t *testing.T) {
	const n = 400_000
	r := rand.New(rand.NewPCG(20, 13))
	xs := make([]float64, n)
	total, overMinute, timeOverMinute := 0.0, 0, 0.0
	for i := range xs {
		x := DefaultToolLatency().Sample(r).Seconds()
		xs[i] = x
		total += x
		if x > 60 {
			overMinute++
			timeOverMinute += x
		}
	}
	slices.Sort(xs)
	assert.InEpsilon(t, 0.3, quantile(xs, 0.5), 0.1, "p50, s")
	assert.InEpsilon(t, 13.6, quantile(xs, 0.9), 0.1, "p90, s")
	assert.InEpsilon(t, 216, quantile(xs, 0.99), 0.1, "p99, s")
	assert.InDelta(t, 0.04, float64(overMinute)/n, 0.005, "share of calls over a minute")
	assert.InDelta(t, 0.85, timeOverMinute/total, 0.05, "share of tool time in calls over a minute")
}
