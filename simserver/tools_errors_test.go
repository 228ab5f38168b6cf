package simserver_test

import (
	"context"
	"net/http"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/simserver"
)

// TestToolBadRequests: malformed tools, a tool_choice naming no offered tool or one the model
// never calls, a tool message that answers no call, and a schema the simulator cannot satisfy
// are each a 400 in OpenAI's shape naming the parameter and the problem.
func TestToolBadRequests(t *testing.T) {
	const model = `"model":"deepseek-v4-flash",`
	const user = `{"role":"user","content":"look"}`
	msgs := `"messages":[` + user + `]`
	call := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{}"}}]}`
	for _, tc := range []struct {
		name, body, param, message string
	}{
		{"tool not an object", `{` + model + msgs + `,"tools":["read"]}`, "tools[0]", `tools[0] must be an object {"type":"function"`},
		{"tool without type", `{` + model + msgs + `,"tools":[{"function":{"name":"read"}}]}`, "tools[0].type", "tools[0].type is required"},
		{"function missing", `{` + model + msgs + `,"tools":[{"type":"function"}]}`, "tools[0].function", "tools[0].function is required for a function tool"},
		{"function without name", `{` + model + msgs + `,"tools":[` + webTool + `,{"type":"function","function":{"parameters":{}}}]}`,
			"tools[1].function.name", "tools[1].function.name is required"},
		{"description type", `{` + model + msgs + `,"tools":[{"type":"function","function":{"name":"read","description":7}}]}`,
			"tools[0].function.description", "must be a string"},
		{"parameters not a schema", `{` + model + msgs + `,"tools":[{"type":"function","function":{"name":"read","parameters":"path"}}]}`,
			"tools[0].function.parameters", "must be a JSON Schema object"},
		{"same name twice", `{` + model + msgs + `,` + tools(readTool, readTool) + `}`, "tools[1].function.name", `"read" is offered twice`},
		{"unsatisfiable schema", `{` + model + msgs + `,"tools":[{"type":"function","function":{"name":"grep","parameters":{"type":"object",
			"properties":{"q":{"type":"string","minLength":5,"maxLength":2}}}}}]}`,
			"tools[0].function.parameters", `tool "grep": parameters.properties.q: maxLength 2 is below minLength 5`},
		{"choice names no tool", `{` + model + msgs + `,` + tools(readTool) + `,"tool_choice":{"type":"function","function":{"name":"grep"}}}`,
			"tool_choice.function.name", `tool_choice names the function "grep", which tools does not offer; offered: "read"`},
		{"choice without tools", `{` + model + msgs + `,"tool_choice":{"type":"function","function":{"name":"grep"}}}`,
			"tool_choice.function.name", "offered: no function tool"},
		{"choice without name", `{` + model + msgs + `,` + tools(readTool) + `,"tool_choice":{"type":"function","function":{}}}`,
			"tool_choice.function.name", "tool_choice.function.name is required"},
		{"choice names a risky tool", `{` + model + msgs + `,` + tools(readTool, bashTool) + `,"tool_choice":{"type":"function","function":{"name":"bash"}}}`,
			"tool_choice.function.name", `"bash", which the simulated model never calls: its name says it changes or runs things; name it in the profile's agent.allow`},
		{"required with only risky tools", `{` + model + msgs + `,` + tools(bashTool, askTool, webTool) + `,"tool_choice":"required"}`,
			"tool_choice", `tool_choice is "required", but the simulated model calls none of the tools offered ("bash", "request_user_input")`},
		{"required without tools", `{` + model + msgs + `,"tools":[],"tool_choice":"required"}`,
			"tool_choice", `tool_choice is "required", but the request offers no tools`},
		{"result answers no call", `{` + model + `"messages":[` + user + `,` + call + `,{"role":"tool","tool_call_id":"call_2","content":"x"}]}`,
			"messages[2].tool_call_id", `messages[2].tool_call_id "call_2" answers no earlier tool call; the calls so far: "call_1"`},
		{"result before its call", `{` + model + `"messages":[` + user + `,{"role":"tool","tool_call_id":"call_1","content":"x"},` + call + `]}`,
			"messages[1].tool_call_id", "answers no earlier tool call; the calls so far: none"},
		{"result without id", `{` + model + `"messages":[` + user + `,` + call + `,{"role":"tool","content":"x"}]}`,
			"messages[2].tool_call_id", "messages[2].tool_call_id is required for tool messages"},
		{"tool_calls not an array", `{` + model + `"messages":[` + user + `,{"role":"assistant","tool_calls":{"id":"call_1"}}]}`,
			"messages[1].tool_calls", "must be an array of tool calls"},
		{"call id type", `{` + model + `"messages":[` + user + `,{"role":"assistant","tool_calls":[{"id":1}]}]}`,
			"messages[1].tool_calls.id", "must be of type string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := badRequest(t, tc.body, tc.param)
			assert.Contains(t, e.Error.Message, tc.message, "message of POST %s", tc.body)
		})
	}
}

// TestToolBadRequestWithGoOpenAI: go-openai reads a tool 400 as an *openai.APIError whose
// param names the problem.
func TestToolBadRequestWithGoOpenAI(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c := startServer(t, simserver.Options{}).openaiClient("")
		_, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model: "deepseek-v4-flash", Tools: openaiTools(t, readTool),
			Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "look"},
				{Role: openai.ChatMessageRoleTool, ToolCallID: "call_x", Content: "result"}},
		})
		var apiErr *openai.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, http.StatusBadRequest, apiErr.HTTPStatusCode)
		require.NotNil(t, apiErr.Param)
		assert.Equal(t, "messages[1].tool_call_id", *apiErr.Param)
	})
}
