package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// responsesTask runs the task on the Responses API, as Codex does: each call continues the
// previous response (previous_response_id) with the outputs of its function calls.
func (h *harness) responsesTask(maxCalls int) int {
	var input any = fmt.Sprintf("Agent %s: summarise the repository.", os.Getenv("AGENTSIM_AGENT"))
	previous := ""
	for call := 1; call <= maxCalls; call++ {
		id, calls, err := h.callResponses(input, previous)
		if err != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
			return 1
		}
		if len(calls) == 0 {
			fmt.Printf("done after %d model calls\n", call)
			return 0
		}
		outputs := make([]any, len(calls))
		for i, c := range calls {
			outputs[i] = map[string]any{"type": "function_call_output", "call_id": c.CallID, "output": "contents of " + c.Arguments}
		}
		input, previous = outputs, id
	}
	fmt.Fprintf(os.Stderr, "error: the task did not end in %d model calls\n", maxCalls)
	return 1
}

// callResponses sends one response request, re-sending it after an idle timeout up to
// h.retries times; it returns the response's id and its function calls.
func (h *harness) callResponses(input any, previous string) (string, []*openai.ResponseOutputItem, error) {
	for attempt := 0; ; attempt++ {
		id, calls, err := h.streamResponse(input, previous)
		if !errors.Is(err, errIdle) || attempt >= h.retries {
			return id, calls, err
		}
		fmt.Fprintf(os.Stderr, "retry %d after %v\n", attempt+1, err)
	}
}

// streamResponse makes one streamed response request, ending it after h.idle without an event.
func (h *harness) streamResponse(input any, previous string) (string, []*openai.ResponseOutputItem, error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	req := openai.CreateResponseRequest{Model: h.model, Instructions: "You are a coding agent. Read files with read_file.",
		Input: input, PreviousResponseID: previous, MaxOutputTokens: 512,
		Tools: []openai.ResponseTool{openai.NewResponseFunctionTool(*tools[0].Function)}}
	s, err := h.client.CreateResponseStream(ctx, req)
	if err != nil {
		return "", nil, err
	}
	defer s.Close()
	var timer *time.Timer
	if h.idle > 0 {
		timer = time.AfterFunc(h.idle, func() { cancel(errIdle) })
		defer timer.Stop()
	}
	var id string
	var calls []*openai.ResponseOutputItem
	for {
		e, err := s.Recv()
		if timer != nil {
			timer.Reset(h.idle)
		}
		if errors.Is(err, io.EOF) {
			return id, calls, nil
		}
		if err != nil {
			if c := context.Cause(ctx); c != nil {
				return id, calls, fmt.Errorf("%w after %v without an event", c, h.idle)
			}
			return id, calls, err
		}
		switch {
		case e.Type == openai.ResponseStreamEventOutputItemDone && e.Item != nil && e.Item.Type == "function_call":
			calls = append(calls, e.Item)
		case e.Type == openai.ResponseStreamEventCompleted && e.Response != nil:
			id = e.Response.ID
		}
	}
}
