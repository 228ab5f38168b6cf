package agents

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/workloads"
)

// benchTokens is the tokens streamed per Call in BenchmarkCall.
const benchTokens = 8192

// benchBody is a complete SSE response of n content tokens, perFrame tokens per data frame,
// in SGLang's frame format.
func benchBody(n, perFrame int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "data: %s\n\n", roleFrame())
	for i := 0; i < n; i += perFrame {
		text := strings.Repeat(" tok", min(perFrame, n-i))
		fmt.Fprintf(&b, "data: %s\n\n", deltaFrame(`{"role":null,"content":`+quote(text)+`,"reasoning_content":null,"tool_calls":null}`))
	}
	fmt.Fprintf(&b, "data: %s\n\ndata: %s\n\n%s", finishFrame("length"), usageFrame(20, n, 0, 0), doneRaw)
	return []byte(b.String())
}

// lastByte is an Observer doing what the harness does per chunk: one atomic store.
type lastByte struct{ t atomic.Int64 }

func (o *lastByte) Headers(t time.Time)      { o.t.Store(t.UnixNano()) }
func (o *lastByte) FirstReasoning(time.Time) {}
func (o *lastByte) FirstContent(time.Time)   {}
func (o *lastByte) FirstToolCall(time.Time)  {}
func (o *lastByte) Chunk(t time.Time)        { o.t.Store(t.UnixNano()) }

// BenchmarkCall measures the client's streaming path end to end: a loopback httptest server
// writes a pre-built stream of benchTokens tokens as fast as it can, 1 or 8 tokens per
// frame, and Call reads it with all three timeouts armed. Reported per token: wall ns,
// process CPU ns (client and server together) and heap allocations.
//
//	go test -run '^$' -bench BenchmarkCall -benchtime 3s ./agents/
func BenchmarkCall(b *testing.B) {
	for _, per := range []int{1, 8} {
		b.Run(fmt.Sprintf("tokens_per_frame=%d", per), func(b *testing.B) { benchCall(b, per) })
	}
}

// BenchmarkCallResponses is BenchmarkCall through the Responses API: the same tokens, in the
// API's events (an event: line and a data line each, a reply framed by created, in_progress,
// its item and part opened and closed, completed).
//
//	go test -run '^$' -bench 'BenchmarkCall' -benchtime 3s ./agents/
func BenchmarkCallResponses(b *testing.B) {
	for _, per := range []int{1, 8} {
		b.Run(fmt.Sprintf("tokens_per_frame=%d", per), func(b *testing.B) { benchCallAPI(b, per, workloads.APIResponses) })
	}
}

// benchResponsesBody is benchBody as a Responses event stream.
func benchResponsesBody(n, perFrame int) []byte {
	var b strings.Builder
	b.WriteString(rCreated() + rMessageAdded())
	for i := 0; i < n; i += perFrame {
		b.WriteString(rTextDelta(strings.Repeat(" tok", min(perFrame, n-i))))
	}
	b.WriteString(rMessageDone(strings.Repeat(" tok", n)) + rCompleted(20, n, 0, 0))
	return []byte(b.String())
}

func benchCall(b *testing.B, perFrame int) { benchCallAPI(b, perFrame, workloads.APIChat) }

func benchCallAPI(b *testing.B, perFrame int, api string) {
	body := benchBody(benchTokens, perFrame)
	if api == workloads.APIResponses {
		body = benchResponsesBody(benchTokens, perFrame)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for off := 0; off < len(body); off += 32 << 10 {
			_, _ = w.Write(body[off:min(off+32<<10, len(body))])
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := NewClient(srv.URL+"/v1", "", &http.Client{Transport: tr}, clock.Real(), nil)
	req := Request{API: api, Model: "m", MaxTokens: benchTokens, IgnoreEOS: true,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "go"}},
		Timeouts: workloads.Timeouts{Request: time.Hour, TTFT: time.Minute, Idle: time.Minute}}
	obs := &lastByte{}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuTime()
	for b.Loop() {
		res := client.Call(b.Context(), req, obs)
		if res.Err != nil || res.ContentChars != 4*benchTokens {
			b.Fatalf("Call: %v, %d content chars; want nil, %d", res.Err, res.ContentChars, 4*benchTokens)
		}
	}
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&ms1)
	tokens := float64(b.N) * benchTokens
	b.ReportMetric(tokens/b.Elapsed().Seconds(), "tokens/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/tokens, "ns/token")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/tokens, "cpu-ns/token")
	}
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/tokens, "allocs/token")
}

// BenchmarkEvent is BenchmarkFrame for a Responses output_text.delta event.
func BenchmarkEvent(b *testing.B) {
	line := []byte(dataLines(rTextDelta(" tok"))[0])
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		var f rframe
		for b.Loop() {
			if !scanEvent(line, &f) {
				b.Fatal("fell back")
			}
		}
	})
	b.Run("encoding_json_struct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var ev openai.ResponseStreamEvent
			if err := json.Unmarshal(line, &ev); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkFrame compares reading one ordinary delta frame with the field scanner and with
// encoding/json, the cost the scanner exists to avoid.
func BenchmarkFrame(b *testing.B) {
	line := []byte(ordinaryFrames[2])
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		var f frame
		for b.Loop() {
			if !scanFrame(line, &f) {
				b.Fatal("fell back")
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeFrame(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json_struct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var resp openai.ChatCompletionStreamResponse
			if err := json.Unmarshal(line, &resp); err != nil {
				b.Fatal(err)
			}
		}
	})
}
