package simserver_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/simserver"
)

// fuzzSeeds are request bodies that exercise every check of the request decoder: valid
// requests of each shape, and each way a request is refused.
var fuzzSeeds = []string{
	`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}],"max_tokens":8}`,
	`{"model":"deepseek-v4-flash","stream":true,"stream_options":{"include_usage":true},"max_tokens":8,"ignore_eos":true,"reasoning_effort":"high","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`,
	`{"model":"deepseek-v4-flash","messages":[{"role":"assistant","content":null,"reasoning_content":"r","tool_calls":[]},{"role":"tool","content":"t"}],"max_completion_tokens":3,"temperature":0.7,"top_p":0.9,"stop":["x"],"tool_choice":"auto","response_format":{"type":"text"}}`,
	`{"model":"deepseek-v4-flash","stream":true,"tool_choice":"required","tools":[{"type":"web_search"},{"type":"function","function":{"name":"read","parameters":{"type":"object","properties":{"path":{"type":"string","pattern":"^[a-z]+/[a-z]+$"},"n":{"type":"integer","minimum":1e2,"multipleOf":0.5}},"required":["path"]}}}],"messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"deepseek-v4-flash","tools":[{"type":"function","function":{"name":"t","parameters":{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"array","items":{"$ref":"#"},"uniqueItems":true,"minItems":2}]}},"$ref":"#/$defs/a"}}}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"t","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}`,
	`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}],"max_tokens":163830}`,
	`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}],"max_tokens":-1}`,
	`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}],"max_tokens":"10","temperature":"hot"}`,
	`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"turbo"}`,
	`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}],"temperature":NaN}`,
	`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}],"top_p":Infinity}`,
	`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}],"temperature":1e400}`,
	`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}],"n":2}`,
	`{"model":"deepseek-v4-flash","messages":[{"role":"wizard","content":3}]}`,
	`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":[{"type":"image_url"}]}]}`,
	`{"model":"deepseek-v4-flash","messages":"hi"}`,
	`{"model":7}`,
	`{"model":"deepseek-v4-flash",`,
	`[1,2]`,
	`null`,
	``,
	"\xff\xfe",
}

// fuzzHangGuard is how long, in wall time, FuzzChatRequest waits for one answer.
const fuzzHangGuard = 20 * time.Second

// FuzzChatRequest sends arbitrary bodies to POST /v1/chat/completions: the handler never
// panics, and answers either 200 with a whole completion or stream, or a 4xx with an OpenAI
// error body whose code is the status.
func FuzzChatRequest(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := serveFuzzed(t, h, "/v1/chat/completions", body)
		switch {
		case rec.Code == http.StatusOK:
			checkCompletion(t, body, rec)
		case rec.Code >= 400 && rec.Code < 500:
			var e struct {
				Error struct {
					Message string `json:"message"`
					Type    string `json:"type"`
					Code    int    `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code != rec.Code || e.Error.Message == "" || e.Error.Type == "" {
				t.Fatalf("POST %q = %d %q; want an OpenAI error body with code %d", body, rec.Code, rec.Body.Bytes(), rec.Code)
			}
		default:
			t.Fatalf("POST %q = %d %q; want 200 or a 4xx", body, rec.Code, rec.Body.Bytes())
		}
	})
}

// fuzzHandler is the handler of a simulator whose generations end within milliseconds of wall
// time, for the fuzz targets.
func fuzzHandler(f *testing.F) http.Handler {
	// Simulated time runs a million times faster than wall time, so a generation of any
	// length the context allows ends within milliseconds.
	clk, err := clock.New(1_000_000)
	if err != nil {
		f.Fatal(err)
	}
	// The default profile aborts a request whose KV has not reached decode within 300 s
	// simulated (its disaggregation timeouts): at this speed 0.3 ms of wall time, which a
	// loaded machine takes to schedule the handler. A body's answer must not hang on how busy
	// the machine is, so the fuzzed profile waits for ever.
	prof := simserver.DSV4PD()
	prof.BootstrapTimeout, prof.WaitingTimeout = 0, 0
	srv, err := simserver.New(simserver.Options{Clock: clk, Profile: prof, MaxRequestBytes: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	srv.Engine().Start()
	f.Cleanup(srv.Engine().Stop)
	return srv.Handler()
}

// serveFuzzed posts body to path and returns the answer, failing if none comes.
func serveFuzzed(t *testing.T, h http.Handler, path string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(rec, req)
	}()
	// A hang guard, not a performance bound: the longest generation the context allows
	// takes well under a second of wall time at this speed.
	select {
	case <-done:
	case <-time.After(fuzzHangGuard):
		t.Fatalf("POST %s %q: no answer after %s of wall time", path, body, fuzzHangGuard)
	}
	return rec
}

// fuzzResponsesSeeds are Responses API bodies of each shape the reader takes and refuses.
var fuzzResponsesSeeds = []string{
	`{"model":"deepseek-v4-flash","input":"hi","max_output_tokens":8}`,
	`{"model":"deepseek-v4-flash","stream":true,"instructions":"be brief","input":[{"role":"user","content":[{"type":"input_text","text":"a"}]}],"reasoning":{"effort":"low","summary":"auto"},"max_output_tokens":12}`,
	`{"model":"deepseek-v4-flash","stream":true,"tool_choice":"required","tools":[{"type":"web_search"},{"type":"function","name":"read","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}],"input":"hi"}`,
	`{"model":"deepseek-v4-flash","input":[{"role":"user","content":"hi"},{"type":"function_call","call_id":"c","name":"read","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"r"},{"type":"reasoning","summary":[]},{"type":"web_search_call","id":"ws"}],"store":false}`,
	`{"model":"deepseek-v4-flash","input":[{"type":"function_call_output","call_id":"none","output":"r"}]}`,
	`{"model":"deepseek-v4-flash","input":[{"type":"bogus"}]}`,
	`{"model":"deepseek-v4-flash","previous_response_id":"resp_x","input":"hi"}`,
	`{"model":"deepseek-v4-flash","input":[{"role":"robot","content":[{"type":"video"}]}],"instructions":3}`,
	`{"model":"deepseek-v4-flash","input":"hi","background":true}`,
	`{"model":"deepseek-v4-flash","input":7}`,
	`{"model":"gpt-4o","input":"hi"}`,
	`{"model":"deepseek-v4-flash","input":"hi","max_output_tokens":0,"temperature":3}`,
	`{"input":"hi"}`,
	`{"model":"deepseek-v4-flash",`,
	`null`,
}

// FuzzResponsesRequest sends arbitrary bodies to POST /v1/responses: the handler never
// panics, and answers either 200 with a whole event stream or response object, or a 4xx with
// an error body in OpenAI's shape (its code a string or null).
func FuzzResponsesRequest(f *testing.F) {
	for _, s := range fuzzResponsesSeeds {
		f.Add([]byte(s))
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := serveFuzzed(t, h, "/v1/responses", body)
		switch {
		case rec.Code == http.StatusOK && strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream"):
			if !strings.Contains(rec.Body.String(), "event: response.completed\n") && !strings.Contains(rec.Body.String(), "event: response.incomplete\n") {
				t.Fatalf("POST %q: stream does not end its response: %q", body, rec.Body.String())
			}
		case rec.Code == http.StatusOK:
			var r struct {
				Object string `json:"object"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.Object != "response" {
				t.Fatalf("POST %q = 200 %q; want a response", body, rec.Body.Bytes())
			}
		case rec.Code >= 400 && rec.Code < 500:
			var e struct {
				Error struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Code    *string `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Fatalf("POST %q = %d %q; want an error body in OpenAI's shape", body, rec.Code, rec.Body.Bytes())
			}
		default:
			t.Fatalf("POST %q = %d %q; want 200 or a 4xx", body, rec.Code, rec.Body.Bytes())
		}
	})
}

// checkCompletion checks a 200 answer is a whole stream or a chat.completion object.
func checkCompletion(t *testing.T, body []byte, rec *httptest.ResponseRecorder) {
	t.Helper()
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
		if !strings.HasSuffix(rec.Body.String(), "data: [DONE]\n\n") {
			t.Fatalf("POST %q: stream does not end with [DONE]: %q", body, rec.Body.String())
		}
		return
	}
	var c struct {
		Object string `json:"object"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &c); err != nil || c.Object != "chat.completion" {
		t.Fatalf("POST %q = 200 %q; want a chat.completion", body, rec.Body.Bytes())
	}
}
