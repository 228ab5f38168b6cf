package fakeserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// chatRequest is the part of a chat completion request the fake reads.
type chatRequest struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	IgnoreEOS bool   `json:"ignore_eos"`
	Messages  []struct {
		Content string `json:"content"`
	} `json:"messages"`
}

// serveChat checks a chat request as vLLM does — its model, then its length — and streams
// its answer.
func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		vllmError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	if len(s.Models) > 0 && !slices.Contains(s.Models, req.Model) {
		vllmError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", req.Model))
		return
	}
	if s.RequireIgnoreEOS && !req.IgnoreEOS {
		vllmError(w, http.StatusBadRequest, "BadRequestError", "this server serves only requests with ignore_eos")
		return
	}
	prompt := s.PromptTokens
	if prompt == 0 {
		for _, m := range req.Messages {
			prompt += len(strings.Fields(m.Content))
		}
		prompt *= max(1, s.TokensPerWord)
	}
	if s.Window > 0 && prompt+req.MaxTokens > s.Window {
		vllmError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			s.Window, prompt+req.MaxTokens, prompt, req.MaxTokens))
		return
	}
	if s.failThis() {
		vllmError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "overloaded")
		return
	}
	if len(s.Frames) > 0 {
		s.replay(w)
		return
	}
	out := s.Tokens
	if !s.FixedTokens && (req.IgnoreEOS || (req.MaxTokens > 0 && req.MaxTokens < out)) {
		out = req.MaxTokens
	}
	s.stream(w, r, req.Model, prompt, out)
}

// failThis counts an accepted request and reports whether it is one FailEvery fails.
func (s *Server) failThis() bool {
	if s.FailEvery <= 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accepted++
	return s.accepted%s.FailEvery == 0
}

// replay answers with s.Frames, then [DONE].
func (s *Server) replay(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, f := range s.Frames {
		fmt.Fprintf(w, "data: %s\n\n", f)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// stream sends out content tokens, one per frame every ITL, then the usage frame and [DONE];
// a frozen server sends nothing more until the client gives up.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, model string, prompt, out int) {
	s.mu.Lock()
	s.running++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running--
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	frame := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		fl.Flush()
	}
	delta := func(content string, finish any) map[string]any {
		return map[string]any{"id": "c", "object": "chat.completion.chunk", "model": model,
			"choices": []map[string]any{{"index": 0, "delta": map[string]any{"role": "assistant", "content": content}, "finish_reason": finish}}}
	}
	for i := range out {
		if s.isFrozen() {
			<-r.Context().Done()
			return
		}
		if s.ITL > 0 {
			time.Sleep(s.ITL)
		}
		var finish any
		if i == out-1 {
			finish = "stop"
		}
		frame(delta("tok ", finish))
	}
	frame(map[string]any{"id": "c", "object": "chat.completion.chunk", "model": model, "choices": []any{},
		"usage": map[string]int{"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out}})
	fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
	s.ended(out)
}

// ended counts the out tokens of a request that ended: the counter is bumped when a request
// ends, as llm-d-inference-sim does.
func (s *Server) ended(out int) {
	s.mu.Lock()
	s.generated += int64(out)
	s.mu.Unlock()
}
