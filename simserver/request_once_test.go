package simserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// onceSeeds are bodies on which decoding at once and decoding in steps could part ways:
// escapes and invalid UTF-8 in content, null and empty messages, faults in several places.
var onceSeeds = []string{
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":8}`,
	`{"model":"m","messages":[{"role":"user","content":"line\nnext \"quoted\" \u00e9 \ud83d\ude00"}]}`,
	"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"bad \xff byte\"}]}",
	"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"caf\xc3\xa9\"}]}",
	`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b\tc"}]}]}`,
	`{"model":"m","messages":[{"role":"assistant","content":null,"reasoning_content":"r"},{"role":"tool","content":"t"}]}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"t"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"f"}},"parallel_tool_calls":false}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":7}]},{"role":"tool","tool_call_id":3,"content":"t"}]}`,
	`{"model":"m","messages":[{"role":"tool","tool_call_id":"nope","content":"t"}],"tool_choice":"sometimes"}`,
	`{"model":"m","messages":[null]}`,
	`{"model":"m","messages":[]}`,
	`{"model":"m","messages":null}`,
	`{"model":"m"}`,
	`{"messages":[{"role":7}]}`,
	`{"model":"m","messages":[{"role":"wizard","content":"x"},{"role":7}]}`,
	`{"model":"m","messages":[{"role":"user","content":"x"},{"role":7}],"temperature":"hot"}`,
	`{"model":"m","messages":[{"role":"user","content":3}]}`,
	`{"model":"m","messages":[{"role":"user"}]}`,
	`{"model":"m","messages":"hi"}`,
	`{"model":"m","messages":[{"role":"user","content":"a"}],"messages":[{"role":"user","content":"b"},{"role":"user","content":"c"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"a","Role":"system"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"n":2,"top_p":0}`,
	`{"model":"m",`,
	`[1]`,
	``,
}

// FuzzParseOnce checks that decoding a body at once gives what decoding it in steps gives:
// the same request, or the same error.
func FuzzParseOnce(f *testing.F) {
	for _, s := range onceSeeds {
		f.Add([]byte(s))
	}
	efforts := []string{"high", "low"}
	f.Fuzz(func(t *testing.T, body []byte) {
		once, onceErr := parseChatRequest(body, efforts)
		steps, stepsErr := parseChatRequestInSteps(body, efforts)
		assert.Equal(t, steps, once, "request of %q", body)
		assert.Equal(t, stepsErr, onceErr, "error of %q", body)
	})
}

// BenchmarkParseChatRequest decodes a long conversation, 64 messages and about 400 KB as an
// agent sends late in an ocbrowse session, at once and in steps.
func BenchmarkParseChatRequest(b *testing.B) {
	var body []byte
	body = append(body, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"max_tokens":256,"messages":[`...)
	for i := range 64 {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, `{"role":"user","content":"`...)
		for range 1000 {
			body = append(body, "lorem ipsum "...)
		}
		if i%2 == 1 {
			body = append(body, `\n`...) // every other message needs unescaping
		}
		body = append(body, `"}`...)
	}
	body = append(body, "]}"...)
	for _, c := range []struct {
		name  string
		parse func([]byte, []string) (*chatRequest, *apiError)
	}{{"once", parseChatRequest}, {"steps", parseChatRequestInSteps}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, aerr := c.parse(body, nil); aerr != nil {
					b.Fatal(aerr.Message)
				}
			}
		})
	}
}

// BenchmarkReadBody measures reading a 6.5 KB request body of declared length, the size of
// smoke's first request: one allocation of its size, not io.ReadAll's doublings.
func BenchmarkReadBody(b *testing.B) {
	s, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	body := strings.Repeat("x", 6500)
	w := httptest.NewRecorder()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
		got, aerr := s.readBody(w, r, false)
		if aerr != nil || len(got.data) != len(body) {
			b.Fatalf("read %d bytes, %v", len(got.data), aerr)
		}
	}
}
