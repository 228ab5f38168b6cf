//lint:file-ignore SA1019 max_tokens is the field the inference servers agentsim targets read.

package record_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/record"
)

// TestThousandConcurrentStreams holds 1,000 streams open through the proxy at once; each
// reaches its end, and the trace has each of them, whole.
func TestThousandConcurrentStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 streams of 200 tokens take a few seconds of CPU")
	}
	synctest.Test(t, func(t *testing.T) {
		const n = 1000
		pr := startProxy(t, newSim(t), record.Options{})
		c := pr.openai()
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := 0; i < n; i++ {
			wg.Go(func() {
				_, errs[i] = streamAll(c, []openai.ChatCompletionMessage{{Role: "user", Content: "stream " + string(rune('a'+i%26))}})
			})
		}
		time.Sleep(2 * time.Second)
		open, _ := pr.proxy.Open()
		assert.Len(t, open, n, "streams open at once through the proxy")
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "stream %d", i)
		}
		pr.stop(t)
		_, reqs := readTrace(t, pr.buf.String())
		require.Len(t, reqs, n)
		for _, r := range reqs {
			assert.Equal(t, 200, r.Status)
			assert.Empty(t, r.Error)
		}
	})
}

// streamAll reads a stream of 200 tokens to its end.
func streamAll(c *openai.Client, msgs []openai.ChatCompletionMessage) (int, error) {
	st, err := c.CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model: "deepseek-v4-flash", Messages: msgs, Stream: true, MaxTokens: 200})
	if err != nil {
		return 0, err
	}
	defer st.Close()
	chunks := 0
	for {
		_, err := st.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return chunks, nil
			}
			return chunks, err
		}
		chunks++
	}
}
