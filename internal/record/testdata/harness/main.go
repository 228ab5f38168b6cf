// Command harness is a small third-party harness for trying `agentsim record --watch` by
// hand: sessions with growing conversations behind a counting semaphore, written straight
// against go-openai, knowing nothing of agentsim. Run it against the recording proxy:
//
//	go run ./internal/record/testdata/harness -base http://127.0.0.1:30001/v1 -sessions 30 -slots 16
//
// -stuck-after N makes its scheduler stop handing out work after N requests (a harness that
// is stuck itself).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func main() {
	base := flag.String("base", "http://127.0.0.1:30001/v1", "the server's (or proxy's) base URL")
	sessions := flag.Int("sessions", 30, "conversations")
	slots := flag.Int("slots", 16, "requests in flight at most (the semaphore)")
	words := flag.Int("context", 1500, "words of each conversation's first message")
	maxTokens := flag.Int("max-tokens", 200, "max_tokens of each request")
	think := flag.Duration("think", time.Second, "pause after each reply")
	stuckAfter := flag.Int64("stuck-after", 0, "stop handing out work after this many requests (0: never)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := openai.DefaultConfig("none")
	cfg.BaseURL = *base
	client := openai.NewClientWithConfig(cfg)
	sem := make(chan struct{}, *slots)
	var sent, ok atomic.Int64
	var wg sync.WaitGroup
	for s := 0; s < *sessions; s++ {
		wg.Go(func() {
			msgs := []openai.ChatCompletionMessage{{Role: "system", Content: "You are a browsing agent."},
				{Role: "user", Content: fmt.Sprintf("agent %d: %s", s, strings.Repeat("page text ", *words/2))}}
			for ctx.Err() == nil {
				if *stuckAfter > 0 && sent.Load() >= *stuckAfter {
					<-ctx.Done()
					return
				}
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					return
				}
				sent.Add(1)
				reply, err := ask(ctx, client, msgs, *maxTokens)
				<-sem
				if err != nil {
					fmt.Fprintf(os.Stderr, "session %d: %v\n", s, err)
					continue
				}
				ok.Add(1)
				msgs = append(msgs, openai.ChatCompletionMessage{Role: "assistant", Content: reply},
					openai.ChatCompletionMessage{Role: "user", Content: "tool result: " + strings.Repeat("row ", 50)})
				select {
				case <-time.After(*think):
				case <-ctx.Done():
				}
			}
		})
	}
	wg.Wait()
	fmt.Printf("harness: %d requests sent, %d ok\n", sent.Load(), ok.Load())
}

func ask(ctx context.Context, c *openai.Client, msgs []openai.ChatCompletionMessage, maxTokens int) (string, error) {
	st, err := c.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{
		Model: "deepseek-v4-flash", Messages: msgs, Stream: true, MaxTokens: maxTokens})
	if err != nil {
		return "", err
	}
	defer st.Close()
	var b strings.Builder
	for {
		r, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return b.String(), nil
		}
		if err != nil {
			return "", err
		}
		for _, ch := range r.Choices {
			b.WriteString(ch.Delta.Content)
		}
	}
}
