package fakeserver

import (
	"fmt"
	"net/http"
	"time"
)

// serveMetrics serves the gauges of s.Metrics' flavour: the requests streaming, the output
// tokens of those that ended and, for llama-server, its mean rate of one request.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if s.isFrozen() {
		<-r.Context().Done()
		return
	}
	s.mu.Lock()
	running, generated, waiting := s.running, s.generated, s.waiting
	s.mu.Unlock()
	switch s.Metrics {
	case VLLM:
		fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} %d\n", running)
		fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"m\"} %d\n", waiting)
		fmt.Fprintf(w, "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{model_name=\"m\"} %d\n", generated)
	case LlamaCpp:
		perRequest := 0.0
		if s.ITL > 0 {
			perRequest = float64(time.Second) / float64(s.ITL)
		}
		fmt.Fprintf(w, "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing %d\n", running)
		fmt.Fprintf(w, "# TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred %d\n", s.Deferred+waiting)
		fmt.Fprintf(w, "# TYPE llamacpp:predicted_tokens_seconds gauge\nllamacpp:predicted_tokens_seconds %g\n", perRequest)
		fmt.Fprintf(w, "# TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total %d\n", generated)
	case LlamaCppOff:
		llamaError(w, http.StatusNotImplemented, "not_supported_error", "This server does not support metrics endpoint. Start it with `--metrics`")
	default:
		http.NotFound(w, r)
	}
}
