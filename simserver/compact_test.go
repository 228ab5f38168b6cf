package simserver

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// long is a text past longText, with what decoding must get right: escapes, a surrogate pair
// and a lone one, bytes that are not UTF-8, multi-byte runes, spaces of every kind.
var long = strings.Repeat("word ", 60) + `a\"b\\c\/d\n\t\r\b\f \u00e9\u20ac \ud83d\ude00 \ud83d x \ude00 y` + "caf\xc3\xa9 \xff\xfe \xe2\x82 z" + strings.Repeat(" wxyz", 70)

// compactSeeds are bodies whose long texts compaction digests, and bodies with faults inside
// and around them.
var compactSeeds = []string{
	`{"model":"m","messages":[{"role":"system","content":"` + long + `"},{"role":"user","content":[{"type":"text","text":"` + long + `"},{"type":"text","text":"short"}]}]}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"` + long + `"}}],"reasoning_content":"` + long + `"},{"role":"tool","tool_call_id":"c1","content":"` + long + `"}],"tools":[{"type":"function","function":{"name":"f","description":"` + long + `"}}]}`,
	`{"MODEL":"m","Messages":[{"ROLE":"user","Content":"` + long + `"}],"max_tokens":3}`,
	`{"model":"m","messages":[{"role":"user","content":"` + long + `\q"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"` + long + `\u12G4"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"` + long + "\n" + `"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"` + long,
	`{"model":"m","messages":[{"role":"user","content":"` + long + `\`,
	`{"model":"m","messages":[{"role":"user","content":"` + long + `"}],}`,
	`{"model":"m","messages":[{"role":"user","content":"` + long + `"}]} x`,
	`{"model":"m","messages":[{"role":"user","content":"` + long + `"},{"role":7}]}`,
	`{"model":"m","messages":[{"role":"user","content":"` + long + `"}],"temperature":"hot"}`,
	`{"model":"m","messages":[{"role":"user","content":"` + long + `"}]]`,
	`{"model":"m","messages":[{"role":"wizard","content":"` + long + `"}]}`,
	`{"model":"m","input":"` + long + `","instructions":"` + long + `","prompt_cache_key":"k"}`,
	`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"` + long + `"}]},{"type":"function_call","call_id":"c","name":"read","arguments":"` + long + `"},{"type":"function_call","call_id":"d","name":"read","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"` + long + `"},{"type":"function_call_output","call_id":"d","output":[{"type":"input_text","text":"` + long + `"}]},{"type":"reasoning","summary":[{"type":"summary_text","text":"` + long + `"}]},{"type":"local_shell_call","id":"x","action":{"command":["ls"]}}]}`,
	`{"model":"m","input":[{"type":"function_call_output","call_id":"nope","output":"` + long + `"}]}`,
	`{"model":"m","input":[{"role":"user","content":"` + long + `"},"` + long + `"]}`,
}

// FuzzCompactBody checks that a body read compact parses as the body read whole does: the same
// request, digests included, or the same error, a syntax error at the same byte of the body,
// through both APIs, whatever the size of the reads.
func FuzzCompactBody(f *testing.F) {
	for _, s := range append(compactSeeds, onceSeeds...) {
		f.Add([]byte(s))
	}
	s, err := New(Options{})
	require.NoError(f, err)
	efforts := []string{"high", "low"}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, responses := range []bool{false, true} {
			parse := func(b []byte) (*chatRequest, *apiError) { return parseChatRequest(b, efforts) }
			if responses {
				parse = s.parseResponsesRequest
			}
			wantReq, wantErr := parse(body)
			for _, src := range []func() *bytes.Reader{func() *bytes.Reader { return bytes.NewReader(body) }} {
				for _, r := range []interface{ Read([]byte) (int, error) }{src(), iotest.OneByteReader(src())} {
					c, err := readCompact(r, responses, 0)
					require.NoError(t, err)
					req, aerr := parse(c.data)
					if aerr != nil {
						aerr = c.placeSyntaxError(aerr)
					}
					assert.Equal(t, wantErr, aerr, "error of %q (responses %v)", body, responses)
					assert.Equal(t, wantReq, req, "request of %q (responses %v)", body, responses)
				}
			}
		}
	})
}

// TestCompactBodyIsCompact checks that long texts are replaced, and nothing else.
func TestCompactBodyIsCompact(t *testing.T) {
	body := []byte(compactSeeds[0])
	c, err := readCompact(bytes.NewReader(body), false, 0)
	require.NoError(t, err)
	assert.Less(t, len(c.data), 300, "%s", c.data)
	assert.Contains(t, string(c.data), `"short"`)
	assert.Equal(t, 2, strings.Count(string(c.data), placeholderMarker))
	// Tools are compiled from their JSON as sent: their strings are kept, however long.
	c, err = readCompact(bytes.NewReader([]byte(compactSeeds[1])), false, 0)
	require.NoError(t, err)
	assert.Contains(t, string(c.data), `"description":"`+long+`"`)
	assert.Equal(t, 3, strings.Count(string(c.data), placeholderMarker))
}
