package simserver_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/simserver"
)

// Example_stream serves the simulator on a loopback port and streams one chat completion from
// it with the go-openai client, as any OpenAI client would. Simulated time runs 1000 times
// faster than wall time, so the second or so of prefill and KV transfer takes about a
// millisecond.
func Example_stream() {
	clk, err := clock.New(1000)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := simserver.New(simserver.Options{Clock: clk}) // the default profile, healthy
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() { stop(); <-served }()

	cfg := openai.DefaultConfig("")
	cfg.BaseURL = "http://" + ln.Addr().String() + "/v1"
	client := openai.NewClientWithConfig(cfg)
	stream, err := client.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{
		Model:    "deepseek-v4-flash",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "What next?"}},
		//lint:ignore SA1019 max_tokens is the field the inference servers the simulator imitates read.
		MaxTokens:     8,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer stream.Close()
	var text strings.Builder
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) { // after [DONE]
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		for _, c := range chunk.Choices {
			text.WriteString(c.Delta.Content)
			if c.FinishReason != "" {
				fmt.Println("finish:", c.FinishReason)
			}
		}
		if u := chunk.Usage; u != nil {
			fmt.Printf("usage: %d prompt + %d completion tokens\n", u.PromptTokens, u.CompletionTokens)
		}
	}
	fmt.Printf("text: %q\n", text.String())
	// Output:
	// finish: length
	// usage: 10 prompt + 8 completion tokens
	// text: "type had then last as only into you "
}
