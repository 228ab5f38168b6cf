// Command execharness is a small tool-calling harness on go-openai for the tests of
// `agentsim exec`: it runs one task — model calls with a tool, the tool's result sent back,
// until the model answers without a tool call — against OPENAI_BASE_URL, with an idle timeout
// of its own on each stream and retries of the same messages when it fires, as real harnesses
// do, on chat completions or (-api responses) the Responses API. Its behaviour comes from
// flags, so a test picks it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func main() { os.Exit(run()) }

func run() int {
	idle := flag.Duration("idle-timeout", 0, "end a stream silent this long (wall time) and retry it; 0 waits forever")
	retries := flag.Int("retries", 2, "re-sends of a request whose stream timed out")
	maxCalls := flag.Int("max-calls", 40, "most model calls of the task")
	hangAfter := flag.Int("hang-after", 0, "after this many model calls, stop sending and wait forever (blocked outside the stream); 0 never")
	fail := flag.String("fail", "", "exit 1 at once with this message on stderr")
	api := flag.String("api", "chat", "the API the task uses: chat (completions) or responses")
	flag.Parse()
	if *fail != "" {
		fmt.Fprintln(os.Stderr, *fail)
		return 1
	}
	cfg := openai.DefaultConfig(os.Getenv("OPENAI_API_KEY"))
	cfg.BaseURL = os.Getenv("OPENAI_BASE_URL")
	client := openai.NewClientWithConfig(cfg)
	h := &harness{client: client, model: os.Getenv("AGENTSIM_MODEL"), idle: *idle, retries: *retries}
	if *api == "responses" {
		return h.responsesTask(*maxCalls)
	}
	msgs := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You are a coding agent. Read files with read_file."},
		{Role: openai.ChatMessageRoleUser, Content: fmt.Sprintf("Agent %s: summarise the repository.", os.Getenv("AGENTSIM_AGENT"))},
	}
	for call := 1; call <= *maxCalls; call++ {
		if *hangAfter > 0 && call > *hangAfter {
			fmt.Println("blocked: waiting for nothing")
			select {}
		}
		reply, err := h.call(msgs)
		if err != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
			return 1
		}
		msgs = append(msgs, reply)
		if len(reply.ToolCalls) == 0 {
			fmt.Printf("done after %d model calls\n", call)
			return 0
		}
		for _, tc := range reply.ToolCalls {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: tc.ID,
				Content: "contents of " + tc.Function.Arguments})
		}
	}
	fmt.Fprintf(os.Stderr, "error: the task did not end in %d model calls\n", *maxCalls)
	return 1
}

// harness sends the task's model calls.
type harness struct {
	client  *openai.Client
	model   string
	idle    time.Duration
	retries int
}

// errIdle is the harness's own idle timeout.
var errIdle = errors.New("stream idle timeout")

// call sends msgs, re-sending them after an idle timeout up to h.retries times.
func (h *harness) call(msgs []openai.ChatCompletionMessage) (openai.ChatCompletionMessage, error) {
	for attempt := 0; ; attempt++ {
		reply, err := h.stream(msgs)
		if !errors.Is(err, errIdle) || attempt >= h.retries {
			return reply, err
		}
		fmt.Fprintf(os.Stderr, "retry %d after %v\n", attempt+1, err)
	}
}

// stream makes one streaming call and assembles its reply, ending it after h.idle without a
// chunk.
func (h *harness) stream(msgs []openai.ChatCompletionMessage) (openai.ChatCompletionMessage, error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	req := openai.ChatCompletionRequest{Model: h.model, Messages: msgs, Stream: true, MaxTokens: 512, Tools: tools}
	s, err := h.client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return openai.ChatCompletionMessage{}, err
	}
	defer s.Close()
	var timer *time.Timer
	if h.idle > 0 {
		timer = time.AfterFunc(h.idle, func() { cancel(errIdle) })
		defer timer.Stop()
	}
	reply := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant}
	for {
		chunk, err := s.Recv()
		if timer != nil {
			timer.Reset(h.idle)
		}
		if errors.Is(err, io.EOF) {
			return reply, nil
		}
		if err != nil {
			if c := context.Cause(ctx); c != nil {
				return reply, fmt.Errorf("%w after %v without a chunk", c, h.idle)
			}
			return reply, err
		}
		for _, ch := range chunk.Choices {
			reply.Content += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				i := 0
				if tc.Index != nil {
					i = *tc.Index
				}
				for len(reply.ToolCalls) <= i {
					reply.ToolCalls = append(reply.ToolCalls, openai.ToolCall{Type: openai.ToolTypeFunction})
				}
				c := &reply.ToolCalls[i]
				if tc.ID != "" {
					c.ID = tc.ID
				}
				if c.Function.Name == "" {
					c.Function.Name = tc.Function.Name
				}
				c.Function.Arguments += tc.Function.Arguments
			}
		}
	}
}

// tools is the one tool the harness offers.
var tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
	Name: "read_file", Description: "Read a file of the repository.",
	Parameters: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []string{"path"}},
}}}
