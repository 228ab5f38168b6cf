package agents

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/agentsim/agentsim/clock"
)

// step is one thing a scripted server does, after waiting `after` of simulated time.
type step struct {
	after time.Duration
	data  string // written as "data: <data>\n\n"
	raw   string // written verbatim
	cut   bool   // close the connection abruptly (a dropped stream)
	reset bool   // reset the connection (client reads fail with ECONNRESET)
	hang  bool   // go silent until the client goes away
}

// script is a misbehaving-or-not OpenAI-compatible server, step by step.
type script struct {
	clk         *clock.Clock
	lis         *memListener // for reset steps
	headerDelay time.Duration
	status      int // 0: 200
	contentType string
	header      map[string]string
	body        string // for a non-200 status or a non-SSE 200
	steps       []step

	mu           sync.Mutex
	requestBody  map[string]any
	requestPath  string
	disconnected bool // the handler saw the client go away
}

// ServeHTTP plays the script.
func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	_ = json.Unmarshal(raw, &s.requestBody)
	s.requestPath = r.URL.Path
	s.mu.Unlock()
	if !s.wait(r, s.headerDelay) {
		return
	}
	for k, v := range s.header {
		w.Header().Set(k, v)
	}
	ct := s.contentType
	if ct == "" {
		ct = "text/event-stream"
	}
	w.Header().Set("Content-Type", ct)
	if (s.status != 0 && s.status != http.StatusOK) || s.body != "" {
		w.WriteHeader(max(s.status, http.StatusOK))
		_, _ = io.WriteString(w, s.body)
		return
	}
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	for _, st := range s.steps {
		if !s.wait(r, st.after) || !s.do(w, r, st) {
			return
		}
	}
}

// do performs one step; false ends the response.
func (s *script) do(w http.ResponseWriter, r *http.Request, st step) bool {
	switch {
	case st.cut:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return false
	case st.reset:
		s.lis.resetAll()
		return false
	case st.hang:
		s.wait(r, 1000*time.Hour)
		return false
	case st.raw != "":
		_, _ = io.WriteString(w, st.raw)
	default:
		_, _ = fmt.Fprintf(w, "data: %s\n\n", st.data)
	}
	w.(http.Flusher).Flush()
	return true
}

// wait sleeps d of simulated time; false if the client went away first.
func (s *script) wait(r *http.Request, d time.Duration) bool {
	if err := s.clk.Sleep(r.Context(), d); err != nil {
		s.mu.Lock()
		s.disconnected = true
		s.mu.Unlock()
		return false
	}
	return true
}

// path is the last request's path.
func (s *script) path() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requestPath
}

// sentBody is the last request's JSON body.
func (s *script) sentBody() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requestBody
}

// sawDisconnect reports whether the handler noticed the client going away.
func (s *script) sawDisconnect() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.disconnected
}

// Frames as SGLang and vLLM write them.

const chunkHead = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":`

func deltaFrame(delta string) string {
	return chunkHead + delta + `,"logprobs":null,"finish_reason":null}],"usage":null}`
}

func roleFrame() string { return deltaFrame(`{"role":"assistant","content":""}`) }

func contentFrame(text string) string { return deltaFrame(`{"content":` + quote(text) + `}`) }

func reasoningFrame(field, text string) string {
	return deltaFrame(`{"` + field + `":` + quote(text) + `}`)
}

func finishFrame(reason string) string {
	return chunkHead + `{},"logprobs":null,"finish_reason":"` + reason + `"}],"usage":null}`
}

func usageFrame(prompt, completion, reasoning, cached int) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[],`+
		`"usage":{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":%d,`+
		`"prompt_tokens_details":{"cached_tokens":%d},"completion_tokens_details":{"reasoning_tokens":%d}}}`,
		prompt, prompt+completion, completion, cached, reasoning)
}

const doneRaw = "data: [DONE]\n\n"

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// event is one Observer call.
type event struct {
	kind string
	at   time.Duration // since the call's Sent
}

// recorder is an Observer that keeps every call, with times relative to a start.
type recorder struct {
	start  time.Time
	events []event
}

func (r *recorder) add(kind string, t time.Time) {
	r.events = append(r.events, event{kind, t.Sub(r.start)})
}

func (r *recorder) Headers(t time.Time)        { r.add("headers", t) }
func (r *recorder) FirstReasoning(t time.Time) { r.add("first_reasoning", t) }
func (r *recorder) FirstContent(t time.Time)   { r.add("first_content", t) }
func (r *recorder) FirstToolCall(t time.Time)  { r.add("first_tool_call", t) }
func (r *recorder) Chunk(t time.Time)          { r.add("chunk", t) }
