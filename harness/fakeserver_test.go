package harness

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/agentsim/agentsim/internal/memnet"
)

// fakeServer imitates the real servers agentsim meets, in the ways they surprise it: a
// vLLM-shaped server (vLLM, llm-d-inference-sim) lists its models on /v1/models with their
// max_model_len, answers 404 "The model … does not exist." to any other name and 400 "This
// model's maximum context length is …" to a request past its window, and exposes vllm:
// gauges with a generation counter it bumps only when a request ends; llama.cpp's
// llama-server exposes llamacpp: gauges, among them the mean rate of one request. A frozen
// server stops answering /metrics and stops streaming. Prompt tokens are counted as words.
type fakeServer struct {
	// models are the names /v1/models lists and requests may send; none lists nothing.
	models []string
	// listLen is the max_model_len /v1/models lists (0: none); window the context window
	// enforced on prompt + max_tokens (0: none).
	listLen, window int
	// tokens is how many output tokens a request gets unless it forces max_tokens with
	// ignore_eos; itl the time between two of them.
	tokens int
	itl    time.Duration
	// metrics is the /metrics flavour: "vllm", "llamacpp", "llamacpp-off" (llama-server
	// without --metrics: 501) or "" (404).
	metrics string
	// tokensPerWord is how many prompt tokens the server counts per word (0: one), as a
	// tokenizer unlike the harness's estimate does.
	tokensPerWord int
	// nCtx is the per-slot window /v1/models lists as llama-server does, meta.n_ctx beside the
	// model's n_ctx_train (0: no meta).
	nCtx int
	// apiKey, when set, is required as a bearer token on every path, /metrics included, as
	// llama-server --api-key does: 401 without it.
	apiKey string
	// deferred is what llamacpp:requests_deferred reads.
	deferred int

	mu        sync.Mutex
	frozen    bool  // /metrics and every stream hang until their client gives up
	running   int   // requests streaming
	generated int64 // output tokens of requests that ended (the counter the server bumps)
}

// start serves f on a real loopback httptest server; the caller closes it.
func (f *fakeServer) start() *httptest.Server { return httptest.NewServer(f) }

// startInMemory serves f on an httptest server over an in-memory network, for a synctest
// bubble, and returns it with the client that reaches it.
func (f *fakeServer) startInMemory() (*httptest.Server, *http.Client) {
	ts := httptest.NewUnstartedServer(f)
	l := memnet.Listen()
	ts.Listener = l
	ts.Start()
	return ts, l.Client()
}

// freeze makes the server stop answering, as a wedged engine does.
func (f *fakeServer) freeze() {
	f.mu.Lock()
	f.frozen = true
	f.mu.Unlock()
}

func (f *fakeServer) isFrozen() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frozen
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.apiKey != "" && r.Header.Get("Authorization") != "Bearer "+f.apiKey {
		llamaError(w, http.StatusUnauthorized, "authentication_error", "Invalid API Key")
		return
	}
	switch r.URL.Path {
	case "/v1/models":
		f.serveModels(w)
	case "/metrics":
		f.serveMetrics(w, r)
	case "/v1/chat/completions":
		f.serveChat(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeServer) serveModels(w http.ResponseWriter) {
	type meta struct {
		NCtx      int `json:"n_ctx"`
		NCtxTrain int `json:"n_ctx_train"`
		NVocab    int `json:"n_vocab"`
	}
	type card struct {
		ID          string `json:"id"`
		Object      string `json:"object"`
		MaxModelLen int    `json:"max_model_len,omitempty"`
		Meta        *meta  `json:"meta,omitempty"`
	}
	list := struct {
		Object string `json:"object"`
		Data   []card `json:"data"`
	}{Object: "list", Data: []card{}}
	for _, m := range f.models {
		c := card{ID: m, Object: "model", MaxModelLen: f.listLen}
		if f.nCtx > 0 {
			c.Meta = &meta{NCtx: f.nCtx, NCtxTrain: 8192, NVocab: 256}
		}
		list.Data = append(list.Data, c)
	}
	_ = json.NewEncoder(w).Encode(list)
}

func (f *fakeServer) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if f.isFrozen() {
		<-r.Context().Done()
		return
	}
	f.mu.Lock()
	running, generated := f.running, f.generated
	f.mu.Unlock()
	switch f.metrics {
	case "vllm":
		fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} %d\n", running)
		fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"m\"} 0\n")
		fmt.Fprintf(w, "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{model_name=\"m\"} %d\n", generated)
	case "llamacpp":
		perRequest := 0.0
		if f.itl > 0 {
			perRequest = float64(time.Second) / float64(f.itl)
		}
		fmt.Fprintf(w, "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing %d\n", running)
		fmt.Fprintf(w, "# TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred %d\n", f.deferred)
		fmt.Fprintf(w, "# TYPE llamacpp:predicted_tokens_seconds gauge\nllamacpp:predicted_tokens_seconds %g\n", perRequest)
		fmt.Fprintf(w, "# TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total %d\n", generated)
	case "llamacpp-off":
		llamaError(w, http.StatusNotImplemented, "not_supported_error", "This server does not support metrics endpoint. Start it with `--metrics`")
	default:
		http.NotFound(w, r)
	}
}

// llamaError answers with llama-server's JSON error.
func llamaError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": msg, "type": typ}})
}

// chatRequest is the part of a chat completion request the fake reads.
type chatRequest struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	IgnoreEOS bool   `json:"ignore_eos"`
	Messages  []struct {
		Content string `json:"content"`
	} `json:"messages"`
}

func (f *fakeServer) serveChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		vllmError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	if len(f.models) > 0 && !contains(f.models, req.Model) {
		vllmError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", req.Model))
		return
	}
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(strings.Fields(m.Content))
	}
	prompt *= max(1, f.tokensPerWord)
	if f.window > 0 && prompt+req.MaxTokens > f.window {
		vllmError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			f.window, prompt+req.MaxTokens, prompt, req.MaxTokens))
		return
	}
	out := f.tokens
	if req.IgnoreEOS || (req.MaxTokens > 0 && req.MaxTokens < out) {
		out = req.MaxTokens
	}
	f.stream(w, r, req.Model, prompt, out)
}

// stream sends out content tokens, one per frame every itl, then the usage frame and [DONE];
// a frozen server sends nothing more until the client gives up.
func (f *fakeServer) stream(w http.ResponseWriter, r *http.Request, model string, prompt, out int) {
	f.mu.Lock()
	f.running++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
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
		if f.isFrozen() {
			<-r.Context().Done()
			return
		}
		if f.itl > 0 {
			time.Sleep(f.itl)
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
	f.mu.Lock()
	f.generated += int64(out) // bumped when the request ends, as llm-d-inference-sim does
	f.mu.Unlock()
}

// vllmError answers with an OpenAI-style JSON error, as vLLM words it.
func vllmError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": status}})
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
