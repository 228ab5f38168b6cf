package simserver

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/agentsim/agentsim/internal/engine"
)

// complete answers a non-streaming request with one chat.completion object once the whole
// generation is done. Faults act as in a stream: an error frame becomes a 503 error body, a
// dropped stream a connection cut without a response.
func (x *exchange) complete() {
	at, how := x.gen.End()
	for x.sent < at {
		n, _, err := x.gen.Next(x.ctx, at-x.sent)
		if ab := (*engine.Aborted)(nil); errors.As(err, &ab) {
			x.giveUp(finishError)
			typ := "INTERNAL_SERVER_ERROR"
			if ab.Stage == engine.StageKVFull {
				typ = "server_error" // llama.cpp's error type for it
			}
			writeError(x.w, &apiError{Status: http.StatusInternalServerError, Type: typ, Message: ab.Error()})
			return
		}
		if err != nil || n == 0 {
			x.abort()
		}
		x.delivered(n)
	}
	switch how {
	case engine.EndCut:
		x.cut()
	case engine.EndFail:
		x.giveUp(finishError)
		writeError(x.w, &apiError{Status: http.StatusServiceUnavailable, Type: "InternalServerError", Message: streamErrorMessage})
		return
	}
	x.s.metrics.finished(x.gen.Finish)
	body, _ := json.Marshal(x.completion())
	h := x.w.Header()
	h.Set("Content-Type", "application/json")
	x.w.WriteHeader(http.StatusOK)
	_, _ = x.w.Write(append(body, '\n'))
	x.s.engine.Delivered(x.gen)
}

// chatCompletion is the non-streaming response object.
type chatCompletion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   json.RawMessage    `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   json.RawMessage    `json:"usage"`
}

type completionChoice struct {
	Index        int            `json:"index"`
	Message      map[string]any `json:"message"`
	Logprobs     any            `json:"logprobs"`
	FinishReason string         `json:"finish_reason"`
}

// completion builds the response: the reasoning text under the configured field (null when
// the request had no reasoning), then the content, or null content and the tool calls.
func (x *exchange) completion() chatCompletion {
	g := x.gen
	var reasoning any
	if g.Reasoning > 0 {
		reasoning = string(appendWords(nil, g.Key(), 0, g.Reasoning))
	}
	msg := map[string]any{"role": "assistant", x.s.opts.ReasoningField: reasoning}
	if r := x.req.reply; r != nil {
		msg["content"] = nil
		msg["tool_calls"] = r.messageCalls(g.Output-g.Reasoning, x.toolStyle())
	} else {
		msg["content"] = string(appendWords(nil, g.Key(), g.Reasoning, g.Output-g.Reasoning))
	}
	return chatCompletion{
		ID: x.id, Object: "chat.completion", Created: x.created, Model: x.model,
		Choices: []completionChoice{{Message: msg, FinishReason: x.finishReason()}},
		Usage:   appendUsage(nil, x.usage()),
	}
}
