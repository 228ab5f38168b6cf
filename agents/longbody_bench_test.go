package agents

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/workloads"
)

// longAgent is an agent whose conversation is a coding-agent request's, about 115k tokens:
// a 2,400-token system prompt, the 98,000-token session so far, then 30 steps of a 200-token
// reply calling one tool and the tool's 500-token result.
func longAgent(id int, env *Env) *Agent {
	a := NewAgent(id, env)
	a.say(openai.ChatMessageRoleSystem, "system", 0, 2400)
	a.say(openai.ChatMessageRoleUser, "task", 0, 98000)
	for step := 1; step <= 30; step++ {
		calls := []ToolCall{{ID: "call_" + strings.Repeat("x", 24), Name: "read", Arguments: `{"path":"internal/engine/step.go"}`}}
		a.messages = append(a.messages, message{role: openai.ChatMessageRoleAssistant,
			content: workloads.Text(1, id, step, "reply", 200), calls: calls})
		a.sayTool(step, 0, 500, calls)
	}
	return a
}

// halfReader is a transport that reads half of each request body, 4 KiB at a time as a
// socket does, says so on read, waits for release, then reads the rest and answers 400.
type halfReader struct {
	read    *sync.WaitGroup
	release chan struct{}
}

func (h halfReader) RoundTrip(r *http.Request) (*http.Response, error) {
	buf := make([]byte, 4<<10)
	for got := int64(0); got < r.ContentLength/2; {
		n, err := r.Body.Read(buf)
		got += int64(n)
		if err != nil {
			break
		}
	}
	h.read.Done()
	<-h.release
	_, _ = io.Copy(io.Discard, r.Body)
	_ = r.Body.Close()
	return &http.Response{StatusCode: http.StatusBadRequest, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"error":{"message":"no","type":"BadRequestError","code":400}}`)), Request: r}, nil
}

// BenchmarkLongRequestInFlight measures what a long request (longAgent's, ~0.5 MB of JSON)
// costs the agent sending it while its body is on the way: 50 agents send at once through a
// transport that reads half of each body and waits. With all 50 waiting, it reports the live
// heap per request in flight (after a collection; the agents' own structures are counted
// before they send), and the bytes allocated per request over the whole send.
//
//	go test -run '^$' -bench LongRequestInFlight -benchtime 5x ./agents/
func BenchmarkLongRequestInFlight(b *testing.B) {
	for _, api := range []string{workloads.APIChat, workloads.APIResponses} {
		b.Run("api="+api, func(b *testing.B) { benchLongInFlight(b, api) })
	}
}

func benchLongInFlight(b *testing.B, api string) {
	const requests = 50
	clk, err := clock.New(1)
	if err != nil {
		b.Fatal(err)
	}
	w := workloads.Defaults()
	env := &Env{Workload: &w, Calibration: NewCalibration()}
	var live, alloc float64
	for range b.N {
		agents := make([]*Agent, requests)
		for i := range agents {
			agents[i] = longAgent(i, env)
		}
		var read, done sync.WaitGroup
		read.Add(requests)
		release := make(chan struct{})
		c := NewClient("http://sim/v1", "", &http.Client{Transport: halfReader{&read, release}}, clk, nil)
		var before, during, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for _, a := range agents {
			done.Add(1)
			go func() {
				defer done.Done()
				c.Call(context.Background(), Request{API: api, Model: "m", Conversation: (*conversation)(a), MaxTokens: 256}, nil)
			}()
		}
		read.Wait()
		runtime.GC()
		runtime.ReadMemStats(&during)
		close(release)
		done.Wait()
		runtime.ReadMemStats(&after)
		live += (float64(during.HeapAlloc) - float64(before.HeapAlloc)) / requests
		alloc += float64(after.TotalAlloc-before.TotalAlloc) / requests
		runtime.KeepAlive(agents)
	}
	b.ReportMetric(live/float64(b.N), "live-B/request")
	b.ReportMetric(alloc/float64(b.N), "alloc-B/request")
}
