package replay

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentsim/agentsim/workloads"
)

// A replayed request carries tool definitions of the size its trace row records
// (tools_tokens, 4 bytes of compact JSON a token): the built-in coding set when its size is
// within ToolsTolerance of the recorded one, else function definitions generated to the
// size. The set depends on the size alone, so every request of a session, and every session
// of one size, sends the same array, and a prefix cache sees the definitions as it saw them.

// ToolsTolerance is how far, as a share of the recorded size, the coding set's size may be
// from a request's tools_tokens for the replay to send it.
const ToolsTolerance = 0.10

// toolFunctionBytes is about how long one generated function definition is, in bytes.
const toolFunctionBytes = 2000

// toolSets holds the tool set of each recorded size a plan sends.
type toolSets map[int]*workloads.ToolSet

// of returns the set for tools_tokens tokens; nil for 0.
func (s toolSets) of(tokens int) *workloads.ToolSet {
	if tokens <= 0 {
		return nil
	}
	if set, ok := s[tokens]; ok {
		return set
	}
	set := ToolSetOfSize(tokens)
	s[tokens] = set
	return set
}

// ToolSetOfSize returns tool definitions of about tokens tokens, as tools_tokens counts them:
// the built-in coding set when it is within ToolsTolerance, else generated functions
// (replay_tool_0, 1, …), each taking a path, with descriptions of the workloads' text filling
// the size; never smaller than one such function without a description (about 40 tokens).
// The result depends on tokens alone.
func ToolSetOfSize(tokens int) *workloads.ToolSet {
	coding, _ := workloads.BuiltinToolSet(workloads.ToolSetCoding)
	if have := (len(coding.JSON()) + 3) / 4; abs(have-tokens) <= int(ToolsTolerance*float64(tokens)) {
		return coding
	}
	want := tokens * 4
	n := max(1, (want+toolFunctionBytes/2)/toolFunctionBytes)
	bare := len(toolsJSON(n, func(int) string { return "" }))
	fill := max(0, want-bare)
	set, err := workloads.ParseToolSet(fmt.Sprintf("replay:%d tokens", tokens), toolsJSON(n, func(i int) string {
		size := fill / n
		if i < fill%n {
			size++
		}
		return description(i, size)
	}))
	if err != nil {
		panic("replay: generated tool set: " + err.Error()) // the generator's own bug
	}
	return set
}

// toolsJSON is the compact JSON of n generated functions, function i described by desc(i).
func toolsJSON(n int, desc func(int) string) []byte {
	type fn struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	}
	type tool struct {
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	tools := make([]tool, n)
	for i := range tools {
		tools[i] = tool{Type: "function", Function: fn{Name: fmt.Sprintf("replay_tool_%d", i), Description: desc(i),
			Parameters: map[string]any{"type": "object", "required": []string{"path"},
				"properties": map[string]any{"path": map[string]any{"type": "string"}}}}}
	}
	data, err := json.Marshal(tools)
	if err != nil {
		panic("replay: generated tool set: " + err.Error()) // plain values always marshal
	}
	return data
}

// description is function i's description: size bytes of deterministic text.
func description(i, size int) string {
	if size <= 0 {
		return ""
	}
	text := workloads.Text(0, 0, i, "tool-description", size/2+1) // words are at most 5 bytes, at least 2
	for len(text) < size {
		text += " " + text
	}
	return strings.TrimSpace(text[:size])
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
