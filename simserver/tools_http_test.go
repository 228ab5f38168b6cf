package simserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
)

// Tool definitions as a coding agent sends them: tools that read (which the simulated model
// calls), one that runs commands and one that asks a person (which it never calls unasked),
// and a tool of another kind.
const (
	readTool = `{"type":"function","function":{"name":"read","description":"Read a file","parameters":{"$schema":"http://json-schema.org/draft-07/schema#",
		"type":"object","properties":{"filePath":{"type":"string","description":"the file"},"offset":{"type":"integer","minimum":0},
		"limit":{"type":"integer","minimum":1,"maximum":2000}},"required":["filePath"],"additionalProperties":false}}}`
	grepTool = `{"type":"function","function":{"name":"grep","parameters":{"type":"object","properties":{"pattern":{"type":"string","minLength":1},
		"path":{"type":"string"},"include":{"type":"array","items":{"type":"string"},"maxItems":3},
		"mode":{"enum":["content","files_with_matches","count"]}},"required":["pattern","mode"]}}}`
	bashTool = `{"type":"function","function":{"name":"bash","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}}`
	askTool  = `{"type":"function","function":{"name":"request_user_input","parameters":{"type":"object","properties":{"question":{"type":"string"}},"required":["question"]}}}`
	webTool  = `{"type":"web_search"}`
	// longTool takes arguments of about 70 tokens, for faults to strike in their middle.
	longTool = `{"type":"function","function":{"name":"note","parameters":{"type":"object","properties":{"text":{"type":"string","minLength":250}},"required":["text"]}}}`
)

// toolSchemas are the parameters of the tools above, for the validator.
var toolSchemas = map[string]string{}

func init() {
	for _, def := range []string{readTool, grepTool, bashTool, askTool, longTool} {
		var t struct {
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal([]byte(def), &t); err != nil {
			panic(err)
		}
		toolSchemas[t.Function.Name] = string(t.Function.Parameters)
	}
}

// tools is a tools array of the given definitions.
func tools(defs ...string) string { return `"tools":[` + strings.Join(defs, ",") + `]` }

// checkArguments checks a call's arguments with a real JSON Schema validator against its
// tool's parameters.
func checkArguments(t *testing.T, name, args string) {
	t.Helper()
	schema, ok := toolSchemas[name]
	require.True(t, ok, "the model called %q, which is no tool it may call", name)
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	require.NoError(t, c.AddResource(name+".json", doc))
	s, err := c.Compile(name + ".json")
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
	require.NoError(t, err, "arguments of %s: %s", name, args)
	assert.NoError(t, s.Validate(inst), "arguments of %s: %s", name, args)
}

// toolDelta is one element of a delta's tool_calls, every member kept raw so that a test
// sees which are there.
type toolDelta map[string]json.RawMessage

// toolStream is a stream read back for its tool calls.
type toolStream struct {
	deltas    [][]toolDelta // per chunk with tool_calls
	reasoning string
	content   string
	afterCall bool // reasoning or content came after a tool-call delta
	finish    string
	usage     *struct {
		PromptTokens            int `json:"prompt_tokens"`
		CompletionTokens        int `json:"completion_tokens"`
		CompletionTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	}
	done bool
}

// readToolStream decodes the frames of a stream.
func readToolStream(t *testing.T, frames []frame) toolStream {
	t.Helper()
	var s toolStream
	for i, f := range frames {
		if f.data == "[DONE]" {
			s.done = true
			continue
		}
		var c struct {
			Choices []struct {
				Delta        map[string]json.RawMessage `json:"delta"`
				FinishReason *string                    `json:"finish_reason"`
			} `json:"choices"`
			Usage json.RawMessage `json:"usage"`
		}
		require.NoError(t, json.Unmarshal([]byte(f.data), &c), "frame %d: %s", i, f.data)
		if len(c.Usage) > 0 && string(c.Usage) != "null" {
			require.NoError(t, json.Unmarshal(c.Usage, &s.usage))
		}
		if len(c.Choices) == 0 {
			continue
		}
		d := c.Choices[0].Delta
		if raw, ok := d["tool_calls"]; ok {
			var calls []toolDelta
			require.NoError(t, json.Unmarshal(raw, &calls))
			require.Len(t, calls, 1, "frame %d: one call per chunk", i)
			s.deltas = append(s.deltas, calls)
		}
		for field, dest := range map[string]*string{simserver.FieldReasoningContent: &s.reasoning, "content": &s.content} {
			var text string
			if raw, ok := d[field]; ok && json.Unmarshal(raw, &text) == nil && text != "" {
				*dest += text
				s.afterCall = s.afterCall || len(s.deltas) > 0
			}
		}
		if fr := c.Choices[0].FinishReason; fr != nil {
			s.finish = *fr
		}
	}
	return s
}

// call is one tool call put together from its deltas.
type call struct {
	index     int
	id, name  string
	arguments string
	deltas    int
}

// calls puts the stream's calls together by index, as OpenAI's clients do.
func (s toolStream) calls(t *testing.T) []call {
	t.Helper()
	var out []call
	for _, d := range s.deltas {
		var idx int
		require.NoError(t, json.Unmarshal(d[0]["index"], &idx))
		if idx == len(out) {
			out = append(out, call{index: idx})
		}
		require.Equal(t, len(out)-1, idx, "calls come in index order, one after the other")
		c := &out[idx]
		var fn struct {
			Name      *string `json:"name"`
			Arguments *string `json:"arguments"`
		}
		require.NoError(t, json.Unmarshal(d[0]["function"], &fn))
		if id, ok := d[0]["id"]; ok {
			require.NoError(t, json.Unmarshal(id, &c.id))
		}
		if fn.Name != nil {
			c.name += *fn.Name
		}
		if fn.Arguments != nil {
			c.arguments += *fn.Arguments
		}
		c.deltas++
	}
	return out
}

// keys lists a raw object's members.
func keys[V any](m map[string]V) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	return k
}

// toolStreamBody is a streaming request with usage, the tools and extra fields.
func toolStreamBody(tools, extra string) string {
	return `{"model":"deepseek-v4-flash","stream":true,"stream_options":{"include_usage":true},` + tools +
		`,"messages":[{"role":"system","content":"you are a coding agent"},{"role":"user","content":"find the bug"}]` + extra + `}`
}

// postFrames sends a body and reads its whole stream.
func (ts *testServer) postFrames(body string) []frame {
	ts.t.Helper()
	resp := ts.post(context.Background(), body)
	defer resp.Body.Close()
	require.Equal(ts.t, http.StatusOK, resp.StatusCode)
	frames, err := readFrames(ts.clk, resp.Body)
	require.NoError(ts.t, err)
	return frames
}

// TestToolCallStreamShape reads a stream of tool calls raw: the role chunk, then per call a
// first delta with index, id, type "function", the name and empty arguments, and later deltas
// with only the index and argument pieces; then finish_reason tool_calls with an empty delta,
// the usage chunk and [DONE]. The arguments satisfy their schemas, the risky tools are never
// called, and usage counts the calls' tokens as any output.
func TestToolCallStreamShape(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := admissionProfile()
		p.Agent.CallsPerReply, p.Agent.CallsPerReplyP99 = 3, 12 // several calls per reply
		ts := startServer(t, simserver.Options{Profile: p})
		frames := ts.postFrames(toolStreamBody(tools(readTool, grepTool, bashTool, askTool, webTool), `,"tool_choice":"required"`))
		s := readToolStream(t, frames)
		require.True(t, s.done)
		assert.Equal(t, "tool_calls", s.finish)
		assert.Empty(t, s.content, "a reply that calls tools has no content")
		calls := s.calls(t)
		require.NotEmpty(t, calls)
		completion, ids := 0, map[string]bool{}
		for i, d := range s.deltas {
			var idx int
			require.NoError(t, json.Unmarshal(d[0]["index"], &idx))
			fn := map[string]json.RawMessage{}
			require.NoError(t, json.Unmarshal(d[0]["function"], &fn))
			if i == 0 || string(s.deltas[i-1][0]["index"]) != string(d[0]["index"]) {
				assert.ElementsMatch(t, []string{"index", "id", "type", "function"}, keys(d[0]), "first delta of call %d", idx)
				assert.JSONEq(t, `"function"`, string(d[0]["type"]))
				assert.ElementsMatch(t, []string{"name", "arguments"}, keys(fn), "first delta of call %d", idx)
				assert.JSONEq(t, `""`, string(fn["arguments"]), "the first delta's arguments are empty")
			} else {
				assert.ElementsMatch(t, []string{"index", "function"}, keys(d[0]), "later delta of call %d", idx)
				assert.ElementsMatch(t, []string{"arguments"}, keys(fn), "later delta of call %d", idx)
			}
		}
		for _, c := range calls {
			assert.True(t, strings.HasPrefix(c.id, "call_") && len(c.id) == 29, "id %q", c.id)
			assert.False(t, ids[c.id], "ids are distinct")
			ids[c.id] = true
			checkArguments(t, c.name, c.arguments)
			assert.Equal(t, simserver.CountTokens(c.arguments)+1, c.deltas, "one delta per token, the name's first")
			completion += simserver.CountTokens(c.name) + simserver.CountTokens(c.arguments)
		}
		require.NotNil(t, s.usage)
		assert.Equal(t, completion, s.usage.CompletionTokens, "usage counts the calls' names and arguments")
	})
}

// TestToolCallsAfterReasoning: with reasoning_effort, the reasoning deltas come first, then the
// calls; usage counts both.
func TestToolCallsAfterReasoning(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{Profile: admissionProfile()})
		s := readToolStream(t, ts.postFrames(toolStreamBody(tools(readTool), `,"tool_choice":"required","reasoning_effort":"low"`)))
		require.NotEmpty(t, s.reasoning)
		assert.False(t, s.afterCall, "no reasoning after a call began")
		calls := s.calls(t)
		require.Len(t, calls, 1)
		r := simserver.CountTokens(s.reasoning)
		assert.Equal(t, r, s.usage.CompletionTokensDetails.ReasoningTokens)
		assert.Equal(t, r+simserver.CountTokens("read")+simserver.CountTokens(calls[0].arguments), s.usage.CompletionTokens)
	})
}

// TestToolCallsCutByMaxTokens: the calls' tokens count against max_tokens: a reply cut short
// ends with finish_reason length and the arguments as far as they came.
func TestToolCallsCutByMaxTokens(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{Profile: admissionProfile()})
		s := readToolStream(t, ts.postFrames(toolStreamBody(tools(longTool), `,"tool_choice":"required","max_tokens":6`)))
		assert.Equal(t, "length", s.finish)
		calls := s.calls(t)
		require.Len(t, calls, 1)
		assert.Equal(t, 5, simserver.CountTokens(calls[0].arguments), "the name's token and five of the arguments'")
		assert.False(t, json.Valid([]byte(calls[0].arguments)), "cut arguments are not whole JSON")
		assert.Equal(t, 6, s.usage.CompletionTokens)
	})
}

// TestToolCallStyles: the variants of the wire that break client parsers, from the profile and
// from the tool-call-style fault.
func TestToolCallStyles(t *testing.T) {
	for _, tc := range []struct {
		style engine.ToolCallStyle
		fault bool
		later []string // members of a call's later deltas
		noID  bool
	}{
		{engine.ToolCallsRepeatIDs, false, []string{"index", "id", "type", "function"}, false},
		{engine.ToolCallsNameEveryChunk, false, []string{"index", "function"}, false},
		{engine.ToolCallsNoID, false, []string{"index", "function"}, true},
		{engine.ToolCallsNoID, true, []string{"index", "function"}, true},
	} {
		t.Run(string(tc.style), func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				o := simserver.Options{Profile: admissionProfile()}
				if tc.fault {
					f, err := engine.ParseFaults([]string{"tool-call-style"}, []string{"style=" + string(tc.style)}, 1)
					require.NoError(t, err)
					o.Faults = f
				} else {
					o.Profile.Agent.ToolCallStyle = tc.style
				}
				s := readToolStream(t, startServer(t, o).postFrames(toolStreamBody(tools(readTool), `,"tool_choice":"required","parallel_tool_calls":false`)))
				require.Greater(t, len(s.deltas), 2)
				for _, d := range s.deltas[1:] {
					assert.ElementsMatch(t, tc.later, keys(d[0]))
					_, named := d[0]["function"]
					assert.True(t, named)
					if tc.style == engine.ToolCallsNameEveryChunk {
						assert.Contains(t, string(d[0]["function"]), `"name":"read"`)
					}
				}
				c := s.calls(t)[0]
				assert.Equal(t, tc.noID, c.id == "", "id %q", c.id)
				if tc.style == engine.ToolCallsNameEveryChunk {
					assert.Equal(t, strings.Repeat("read", c.deltas), c.name, "a client that concatenates names reads no tool's")
				}
			})
		})
	}
}

// TestToolCallsWhole: without stream, the message carries tool_calls and null content, the
// finish reason is tool_calls, and usage counts the calls.
func TestToolCallsWhole(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{})
		resp := ts.post(context.Background(), `{"model":"deepseek-v4-flash",`+tools(readTool, grepTool)+
			`,"tool_choice":"required","messages":[{"role":"user","content":"look"}]}`)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		var c struct {
			Choices []struct {
				Message struct {
					Content   json.RawMessage `json:"content"`
					ToolCalls []struct {
						ID       string `json:"id"`
						Type     string `json:"type"`
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				} `json:"message"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		require.NoError(t, json.Unmarshal(body, &c), "%s", body)
		m := c.Choices[0].Message
		assert.Equal(t, "null", string(m.Content))
		assert.Equal(t, "tool_calls", c.Choices[0].FinishReason)
		require.NotEmpty(t, m.ToolCalls)
		tokens := 0
		for _, tc := range m.ToolCalls {
			assert.Equal(t, "function", tc.Type)
			assert.True(t, strings.HasPrefix(tc.ID, "call_"))
			checkArguments(t, tc.Function.Name, tc.Function.Arguments)
			tokens += simserver.CountTokens(tc.Function.Name) + simserver.CountTokens(tc.Function.Arguments)
		}
		assert.Equal(t, tokens, c.Usage.CompletionTokens)
	})
}

// TestToolDefinitionsInThePrompt: the definitions count in the prompt, as a chat template
// renders them, and a follow-up with the tool results finds the earlier prompt cached.
func TestToolDefinitionsInThePrompt(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{})
		msgs := `"messages":[{"role":"user","content":"look"}]`
		without := completionUsage(t, ts, `{"model":"deepseek-v4-flash","max_tokens":4,`+msgs+`}`)
		with := completionUsage(t, ts, `{"model":"deepseek-v4-flash","max_tokens":4,`+tools(readTool, webTool)+`,"tool_choice":"none",`+msgs+`}`)
		assert.Equal(t, without.PromptTokens+simserver.CountTokens(readTool)+simserver.CountTokens(webTool), with.PromptTokens)

		first := ts.post(context.Background(), `{"model":"deepseek-v4-flash",`+tools(readTool)+`,"tool_choice":"required",`+msgs+`}`)
		var c struct {
			Choices []struct {
				Message struct {
					ToolCalls []struct {
						ID       string
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
			}
			Usage struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		require.NoError(t, json.NewDecoder(first.Body).Decode(&c))
		first.Body.Close()
		tc := c.Choices[0].Message.ToolCalls[0]
		call, _ := json.Marshal(map[string]any{"id": tc.ID, "type": "function", "function": map[string]string{"name": tc.Function.Name, "arguments": tc.Function.Arguments}})
		follow := completionUsage(t, ts, `{"model":"deepseek-v4-flash","max_tokens":4,`+tools(readTool)+`,"messages":[{"role":"user","content":"look"},
			{"role":"assistant","content":null,"tool_calls":[`+string(call)+`]},{"role":"tool","tool_call_id":"`+tc.ID+`","content":"the file"}]}`)
		assert.Equal(t, c.Usage.PromptTokens-3+4+c.Usage.CompletionTokens+4+simserver.CountTokens("the file")+3, follow.PromptTokens,
			"the follow-up's prompt is the first's, the reply as sent and the result")
		assert.GreaterOrEqual(t, follow.CachedTokens, c.Usage.PromptTokens-3, "the first prompt is cached")
	})
}

// usageOf is the usage of a whole completion.
type usageOf struct {
	PromptTokens, CompletionTokens, CachedTokens int
}

// completionUsage sends a non-streaming body and returns its usage.
func completionUsage(t *testing.T, ts *testServer, body string) usageOf {
	t.Helper()
	resp := ts.post(context.Background(), body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	var c struct {
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			CompletionTokens    int `json:"completion_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	require.NoError(t, json.NewDecoder(bytes.NewReader(b)).Decode(&c))
	return usageOf{c.Usage.PromptTokens, c.Usage.CompletionTokens, c.Usage.PromptTokensDetails.CachedTokens}
}
