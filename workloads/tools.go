package workloads

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"
)

// Tools is the `tools:` section: the tool definitions each request carries, how the model may
// call them, and how long the agent's tools take and how much they return (docs/agentic.md).
// With Set none the agents read as a workload without tools always has: a read step each
// round (tool_time, then context.read_tokens). With any other set a model call that answers
// with tool calls is followed by the tools, each for its latency, and one tool message per call
// of its result tokens; the task section says what the agent does when the model calls none.
type Tools struct {
	// Set names the definitions sent as tools: a built-in set (one of ToolSetNames) or the path
	// of a JSON file holding an OpenAI tools array. A relative path in a workload or --config
	// file is relative to that file's directory, elsewhere to the current directory; Load
	// makes it absolute and reads and checks the file.
	Set string `mapstructure:"set" yaml:"set"`
	// Choice is sent as tool_choice: auto, none, required (one of ToolChoices), or the name of a
	// function tool of Set, which the model must then call.
	Choice string `mapstructure:"choice" yaml:"choice"`
	// Parallel is sent as parallel_tool_calls: whether the model may call several tools in one
	// reply.
	Parallel bool `mapstructure:"parallel" yaml:"parallel"`
	// Latency is how long one tool call takes, for every tool PerTool does not set; heavy-tailed
	// by default, after TraceLab's measurements of coding agents (DefaultToolLatency).
	Latency DurationDist `mapstructure:"latency" yaml:"latency"`
	// ResultTokens is the size of one tool call's result, in tokens, for every tool PerTool does
	// not set.
	ResultTokens Dist `mapstructure:"result_tokens" yaml:"result_tokens"`
	// PerTool sets Latency or ResultTokens for the tools it names, by function name in lower
	// case (names are matched without regard to case); a key an entry leaves unset is the
	// section's.
	PerTool map[string]ToolOverride `mapstructure:"per_tool" yaml:"per_tool"`
}

// ToolOverride is one tool's entry in tools.per_tool.
type ToolOverride struct {
	// Latency, when set, is how long a call of this tool takes.
	Latency *DurationDist `mapstructure:"latency" yaml:"latency,omitempty"`
	// ResultTokens, when set, is the size of this tool's result, in tokens.
	ResultTokens *Dist `mapstructure:"result_tokens" yaml:"result_tokens,omitempty"`
}

// The tool_choice values tools.choice takes besides a function's name.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
)

// ToolChoices lists the tool_choice values tools.choice takes besides a function's name.
var ToolChoices = []string{ToolChoiceAuto, ToolChoiceNone, ToolChoiceRequired}

// Enabled reports whether requests carry tools: Set is not none.
func (t *Tools) Enabled() bool { return t.Set != ToolSetNone }

// Definitions returns the tool set Set names: a built-in, or the file read and checked
// anew. A run reads it once and shares it between its agents.
func (t *Tools) Definitions() (*ToolSet, error) {
	if s, ok := BuiltinToolSet(t.Set); ok {
		return s, nil
	}
	return ReadToolSet(t.Set)
}

// ToolChoice is Choice as go-openai's ChatCompletionRequest.ToolChoice takes it: the string
// auto, none or required, or an openai.ToolChoice naming the function. A request without
// tools (Enabled false) sends neither it nor parallel_tool_calls: servers refuse both
// without tools.
func (t *Tools) ToolChoice() any {
	if slices.Contains(ToolChoices, t.Choice) {
		return t.Choice
	}
	return openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: t.Choice}}
}

// LatencyOf is how long a call of the named tool takes: its per_tool entry's latency, else
// Latency.
func (t *Tools) LatencyOf(name string) DurationDist {
	if o, ok := t.PerTool[strings.ToLower(name)]; ok && o.Latency != nil {
		return *o.Latency
	}
	return t.Latency
}

// ResultTokensOf is the size of the named tool's result: its per_tool entry's result_tokens,
// else ResultTokens.
func (t *Tools) ResultTokensOf(name string) Dist {
	if o, ok := t.PerTool[strings.ToLower(name)]; ok && o.ResultTokens != nil {
		return *o.ResultTokens
	}
	return t.ResultTokens
}

// DefaultToolLatency returns tools.latency's default, after TraceLab's per-call latencies of Claude
// Code and Codex (docs/agentic.md): p50 0.3 s, p90 13.6 s, p99 3.6 min, 4 % of calls over a
// minute holding 85 % of the time spent in tools. Nearly every call comes from one lognormal
// of median 0.29 s whose tail is very long (σ 2.86); 1.25 % are commands of about a minute
// (builds, test suites), which put p90 and the share over a minute where TraceLab has them.
func DefaultToolLatency() DurationDist {
	return DurationDist{Kind: DistMixture, Parts: []DurationPart{
		{Weight: 0.9875, DurationDist: DurationDist{Kind: DistLognormal, Avg: 17 * time.Second, StdDev: 1000 * time.Second}},
		{Weight: 0.0125, DurationDist: DurationDist{Kind: DistLognormal, Avg: 75 * time.Second, StdDev: 20 * time.Second}},
	}}
}

// DefaultResultTokens returns tools.result_tokens' default: a median near 400 tokens and a mean of
// 500, so that with a reply's output a step appends a median of about 875 tokens, as TraceLab
// measured (docs/agentic.md).
func DefaultResultTokens() Dist { return Dist{Kind: DistLognormal, Avg: 500, StdDev: 650} }

// resolveToolSet makes a tools.set path this layer gives absolute, relative to dir ("" for the
// current directory); a built-in name stays as it is.
func (l *layer) resolveToolSet(dir string) {
	set, ok := l.values["tools.set"].(string)
	if !ok || set == "" || slices.Contains(ToolSetNames, set) {
		return
	}
	if !filepath.IsAbs(set) {
		set = filepath.Join(dir, set)
	}
	if abs, err := filepath.Abs(set); err == nil {
		set = abs
	}
	l.values["tools.set"] = set
}

// tools checks the tools section. set is the tool set when Set names a built-in or Load read
// its file, else nil: the choice and per_tool names are then checked when the file is read.
func (c *checker) tools(t *Tools, set *ToolSet) {
	if strings.TrimSpace(t.Set) == "" {
		c.add("tools.set", t.Set, fmt.Sprintf("one of %s, or the path of a JSON file holding an OpenAI tools array",
			strings.Join(ToolSetNames, ", ")))
	}
	c.toolChoice(t)
	c.dist("tools.latency", t.Latency.Validate())
	c.dist("tools.result_tokens", t.ResultTokens.Validate())
	if set != nil {
		c.toolNames(t, set)
	}
	for _, name := range sortedKeys(t.PerTool) {
		key, o := "tools.per_tool."+name, t.PerTool[name]
		if o.Latency != nil {
			c.dist(key+".latency", o.Latency.Validate())
		}
		if o.ResultTokens != nil {
			c.dist(key+".result_tokens", o.ResultTokens.Validate())
		}
	}
}

// toolChoice checks that tools.choice is a tool_choice value or may be a function's name.
func (c *checker) toolChoice(t *Tools) {
	switch {
	case t.Set == ToolSetNone && t.Choice != ToolChoiceAuto && t.Choice != ToolChoiceNone:
		c.add("tools.choice", t.Choice, "auto or none with tools.set none (no tool is offered)")
	case !slices.Contains(ToolChoices, t.Choice) && !functionName.MatchString(t.Choice):
		c.add("tools.choice", t.Choice, "one of "+strings.Join(ToolChoices, ", ")+", or the name of a function tool of tools.set")
	}
}

// toolNames checks that the function tools.choice names, and the tools per_tool names, are in
// the set.
func (c *checker) toolNames(t *Tools, set *ToolSet) {
	if t.Set != ToolSetNone && !slices.Contains(ToolChoices, t.Choice) && functionName.MatchString(t.Choice) &&
		!set.HasFunction(t.Choice) {
		c.add("tools.choice", t.Choice, "one of "+strings.Join(ToolChoices, ", ")+", or the name of a function tool of tools.set ("+
			functionList(set)+")")
	}
	for _, name := range sortedKeys(t.PerTool) {
		if !hasFunctionFold(set, name) {
			c.add("tools.per_tool."+name, name, "the name of a function tool of tools.set ("+functionList(set)+")")
		}
	}
}

// checkFile reads and checks the file tools.set names, when it names no built-in, and checks
// the names tools.choice and tools.per_tool give against it.
func (t *Tools) checkFile() []Problem {
	if _, builtin := BuiltinToolSet(t.Set); builtin || strings.TrimSpace(t.Set) == "" {
		return nil
	}
	var c checker
	data, err := ReadFile(t.Set)
	if err != nil {
		c.add("tools.set", t.Set, fmt.Sprintf("one of %s, or the path of a JSON file holding an OpenAI tools array (%s)",
			strings.Join(ToolSetNames, ", "), toolFileReason(err)))
		return c.problems
	}
	set, err := ParseToolSet(t.Set, data)
	if err != nil {
		return []Problem{{Key: "tools.set", Message: fmt.Sprintf("tools.set: %s: %v", t.Set, err)}}
	}
	c.toolNames(t, set)
	return c.problems
}

// hasFunctionFold reports whether set has a function whose name is name, regardless of case.
func hasFunctionFold(set *ToolSet, name string) bool {
	return slices.ContainsFunc(set.Functions(), func(f string) bool { return strings.EqualFold(f, name) })
}

// functionList names a set's functions for a message, or says it has none.
func functionList(set *ToolSet) string {
	if len(set.Functions()) == 0 {
		return set.Source() + " has none"
	}
	return strings.Join(set.Functions(), ", ")
}
