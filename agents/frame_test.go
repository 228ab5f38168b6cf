package agents

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// frameView is a frame with decoded strings, for comparing the two readers.
type frameView struct {
	Content, ReasoningContent, Reasoning, Role, Finish, Object *string
	Usage                                                      Usage
	HasUsage, HasError                                         bool
	Tools                                                      []toolView
}

// toolView is a toolDelta with decoded strings.
type toolView struct {
	Index          int
	HasIndex       bool
	ID, Name, Args *string
}

func view(f *frame) frameView {
	str := func(s jstr) *string {
		if !s.set {
			return nil
		}
		v := string(s.appendTo(nil))
		return &v
	}
	v := frameView{Content: str(f.content), ReasoningContent: str(f.reasoningContent),
		Reasoning: str(f.reasoning), Role: str(f.role), Finish: str(f.finish), Object: str(f.object),
		Usage: f.usage, HasUsage: f.hasUsage, HasError: f.hasError}
	for _, d := range f.tools {
		v.Tools = append(v.Tools, toolView{Index: d.index, HasIndex: d.hasIndex, ID: str(d.id), Name: str(d.name), Args: str(d.args)})
	}
	return v
}

// agree checks the fast scanner against encoding/json on line: whatever the scanner accepts,
// encoding/json must read the same way. It returns whether the scanner accepted the line.
func agree(t *testing.T, line string) bool {
	t.Helper()
	var fast frame
	ok := scanFrame([]byte(line), &fast)
	ref, err := decodeFrame([]byte(line))
	if ok {
		require.NoError(t, err, "scanFrame accepted %q, encoding/json did not", line)
		require.Equal(t, view(&ref), view(&fast), "scanFrame(%q) disagrees with encoding/json", line)
	}
	return ok
}

// ordinaryFrames are frames as real servers send them; the fast path must take them all.
var ordinaryFrames = []string{
	// SGLang: role first, nulls everywhere, matched_stop.
	`{"id":"8c1","object":"chat.completion.chunk","created":1732000000,"model":"deepseek","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`,
	`{"id":"8c1","object":"chat.completion.chunk","created":1732000000,"model":"deepseek","choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":" so the","tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`,
	`{"id":"8c1","object":"chat.completion.chunk","created":1732000000,"model":"deepseek","choices":[{"index":0,"delta":{"role":null,"content":"\n\nAnswer: \"42\" \u00e9","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"stop","matched_stop":1}],"usage":null}`,
	// vLLM ≥ 0.11: delta.reasoning, no usage key.
	`{"id":"chatcmpl-a","object":"chat.completion.chunk","created":1,"model":"qwen","choices":[{"index":0,"delta":{"reasoning":"Hmm"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-a","object":"chat.completion.chunk","created":1,"model":"qwen","choices":[{"index":0,"delta":{"content":"日本語"},"logprobs":null,"finish_reason":"length","stop_reason":null}]}`,
	// The usage chunk.
	`{"id":"chatcmpl-a","object":"chat.completion.chunk","created":1,"model":"qwen","choices":[],"usage":{"prompt_tokens":12000,"total_tokens":16000,"completion_tokens":4000,"prompt_tokens_details":{"cached_tokens":11264},"completion_tokens_details":{"reasoning_tokens":3100}}}`,
	`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"prompt_tokens_details":null,"completion_tokens_details":null}}`,
	// An error object the fast path reports as an error frame.
	`{"object":"error","message":"boom","type":"x","code":500}`,
	` { "choices" : [ { "delta" : { "content" : "spaced" } } ] } `,
	// Tool calls: OpenAI's first delta of a call, a later argument piece, the finish.
	`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]},"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"filePath\":"}}]},"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	// Two calls in one delta, one without an index, a null element.
	`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"grep"}},{"id":"c","function":null},null]}}]}`,
}

// fastTricky are unusual lines the fast path still reads itself: escapes, surrogates, invalid
// UTF-8, duplicate keys, nulls, a null first choice, negative counts.
var fastTricky = []string{
	`{"choices":[{"delta":{"content":"a\"b\\c\/d\b\f\n\r\t"}}]}`,
	`{"choices":[{"delta":{"content":"\ud83d\ude00 \u00E9\u0000"}}]}`,
	`{"choices":[{"delta":{"content":"\ud800\u0041"}}]}`,
	"{\"choices\":[{\"delta\":{\"reasoning\":\"bad \xff\xfe utf8 \xed\xa0\x80\"}}]}",
	`{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{"reasoning":"r"}}]}`,
	`{"choices":[{"delta":{"content":"a","content":null}}]}`,
	`{"choices":[null,{"delta":{"content":"x"}}]}`,
	`{"usage":{"prompt_tokens":-3,"completion_tokens":4}}`,
}

// TestScanFrameTakesOrdinaryFrames: the fast path reads real servers' frames, and the tricky
// lines above, without falling back, and reads them as encoding/json does.
func TestScanFrameTakesOrdinaryFrames(t *testing.T) {
	for _, line := range append(append([]string(nil), ordinaryFrames...), fastTricky...) {
		assert.True(t, agree(t, line), "scanFrame(%q) fell back to encoding/json", line)
	}
}

// TestScanFrameAgreesWithEncodingJSON: unusual, tricky and invalid lines; the fast path may
// decline any of them but must never read one differently.
func TestScanFrameAgreesWithEncodingJSON(t *testing.T) {
	lines := []string{
		`{"choices":[{"delta":{"content":"a\"b\\c\/d\b\f\n\r\t"}}]}`,                   // every escape
		`{"choices":[{"delta":{"content":"\ud83d\ude00 \u00E9\u0000"}}]}`,              // surrogate pair, upper hex, NUL
		`{"choices":[{"delta":{"content":"\ud800"}}]}`,                                 // lone high surrogate
		`{"choices":[{"delta":{"content":"\ud800\u0041"}}]}`,                           // surrogate + non-surrogate
		`{"choices":[{"delta":{"content":"\udc00\ud800x"}}]}`,                          // reversed pair
		"{\"choices\":[{\"delta\":{\"content\":\"bad \xff\xfe utf8 \xed\xa0\x80\"}}]}", // invalid UTF-8
		"{\"choices\":[{\"delta\":{\"content\":\"ctl \x01\"}}]}",                       // raw control character
		`{"choices":[{"delta":{"content":"a","content":"b"}}]}`,                        // duplicate key: last wins
		`{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{"reasoning":"r"}}]}`,
		`{"choices":[{"delta":{"content":"a","content":null}}]}`,
		`{"choices":[{"delta":{"con\u0074ent":"escaped key"}}]}`,
		`{"choices":[{"delta":{"Content":"case"}}]}`,
		`{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"second choice"}}]}`,
		`{"choices":[null,{"delta":{"content":"x"}}]}`,
		`{"choices":null,"usage":null,"error":null}`,
		`{"choices":[{"delta":null,"finish_reason":"stop"}]}`,
		`{"choices":[{"delta":{"content":5}}]}`,
		`{"choices":[{"delta":{"tool_calls":{}}}]}`,                          // not an array
		`{"choices":[{"delta":{"tool_calls":[5]}}]}`,                         // an element that is no object
		`{"choices":[{"delta":{"tool_calls":[{"index":1.5}]}}]}`,             // a fractional index
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":[]}]}}]}`, // function not an object
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":7}]}}]}`,        // id not a string
		`{"choices":[{"delta":{"tool_calls":[{"index":0}],"tool_calls":null}}]}`,
		`{"choices":[{"delta":{"content":"x","extra":{"a":[1,2.5e-3,-0,true,false,null,{"b":"\u0041"}]}}}]}`,
		`{"choices":"nope"}`,
		`{"choices":[5]}`,
		`{"usage":{"prompt_tokens":1.0,"completion_tokens":2}}`,
		`{"usage":{"prompt_tokens":12345678901234567890}}`,
		`{"usage":{"prompt_tokens":-3,"completion_tokens":"4"}}`,
		`{"usage":{"prompt_tokens_details":{"cached_tokens":7,"cached_tokens":8}}}`,
		`{"usage":{"completion_tokens_details":[]}}`,
		`{"error":{"message":"x"}}`,
		`{"error":"x","choices":[]}`,
		`{"object":"err\u006fr"}`,
		`{"object":5}`,
		`[]`, `"str"`, `42`, `null`, ``, `{`, `{}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":[1,]}`,
		`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, `{"a":tru}`, `{"a":nul}`,
		`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12G4"}`, `{"a":"unterminated}`, `{} x`, `{}{}`,
		`{"a":1}` + "\n",
		strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 100),
		`{"choices":[{"delta":{"content":"` + strings.Repeat("long ", 500) + `"}}]}`,
	}
	for _, line := range append(lines, ordinaryFrames...) {
		agree(t, line)
	}
}

// FuzzScanFrame: on any input, the fast scanner agrees with encoding/json whenever it
// accepts the line. Run with: go test -run '^$' -fuzz '^FuzzScanFrame$' ./agents
func FuzzScanFrame(f *testing.F) {
	for _, line := range ordinaryFrames {
		f.Add(line)
	}
	f.Add(`{"choices":[{"delta":{"content":"\ud83d\ude00\ud800\n"}}],"usage":{"prompt_tokens":3}}`)
	f.Fuzz(func(t *testing.T, line string) {
		agree(t, line)
	})
}

// FuzzAppendUnquoted: any string body the scanner accepts decodes exactly as encoding/json
// decodes it.
func FuzzAppendUnquoted(f *testing.F) {
	for _, s := range []string{`plain`, `a\"b\\c\/\b\f\n\r\t`, `\ud83d\ude00`, `\ud800\u0041`, "\xff\xed\xa0\x80é", `\u00e9\uD834`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		quoted := `"` + body + `"`
		s := scanner{b: []byte(quoted)}
		v := s.str()
		var want string
		err := json.Unmarshal([]byte(quoted), &want)
		if s.bad || s.i != len(quoted) {
			return // not a string the scanner accepts; nothing to decode
		}
		require.NoError(t, err, "scanner accepted %s", quoted)
		assert.Equal(t, want, string(v.appendTo(nil)), "decoding %s", quoted)
	})
}
