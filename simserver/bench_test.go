package simserver_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
)

// benchProfile is a model made for measuring the serving path, not the model: a decode batch
// and KV pool large enough for every stream and cheap steps (4 ms of wall time at the
// benchmark's speedup), so the engine outruns the HTTP writers and chunks coalesce as on a
// loaded server. The first token comes only after a 3 s (wall) KV transfer: by then every
// connection is open, so the streams run concurrently instead of the first ones finishing while
// the last ones still connect (with thousands of goroutines streaming, the accept loop gets
// its turn rarely).
func benchProfile() *engine.Profile {
	return &engine.Profile{
		Name: "bench", Model: "bench",
		PrefillBase: time.Millisecond, PrefillChunkTokens: 1 << 20, PrefixCacheTokens: 1 << 20,
		TransferLatency: 30 * time.Second,
		DecodeBase:      40 * time.Millisecond,
		MaxRunning:      1 << 20, KVCapacityTokens: 1 << 30, DecodeLogInterval: 40,
		StreamCoalesceTokens: 8,
		MaxContextTokens:     1 << 16,
		Efforts:              map[string]engine.LengthProfile{"": {Min: 1, Max: 1}},
	}
}

// benchSpeedup is the benchmark's clock speedup.
const benchSpeedup = 10

// BenchmarkServeStreams opens many concurrent streams on a real loopback server and reads them
// to the end with lightweight raw HTTP/1.1 clients. It reports the peak number of streams
// open at once, the tokens and the frames per wall second emitted across all of them (from
// the first token to the last [DONE]), and the memory (heap and stacks, clients included) per
// open stream, measured once every stream is receiving tokens. The streams are of content, or
// of one tool call whose arguments are as many tokens: tool-call frames are to go out as fast
// as content frames.
func BenchmarkServeStreams(b *testing.B) {
	for _, tc := range []struct {
		streams, tokens int
		kind            string
	}{{5000, 512, "content"}, {5000, 512, "tool-call"}, {5000, 512, "responses-content"}, {5000, 512, "responses-tool-call"}} {
		b.Run(fmt.Sprintf("streams=%d/tokens=%d/%s", tc.streams, tc.tokens, tc.kind), func(b *testing.B) {
			benchStreams(b, tc.streams, tc.tokens, benchRequests[tc.kind](tc.tokens))
		})
	}
}

// benchRequest is what a benchmark client sends and how it reads the stream.
type benchRequest struct {
	raw []byte // the HTTP request
	// opening is the data lines before the first token's: the role chunk, or
	// response.created and response.in_progress.
	opening int
	// end is how the stream's last data line begins: [DONE], or response.incomplete.
	end []byte
}

// benchRequests are the streams of each kind, of exactly the given tokens: chat completions
// or the Responses API, of content or of one tool call.
var benchRequests = map[string]func(tokens int) benchRequest{
	"content":   func(n int) benchRequest { return benchRequest{rawStreamRequest(n), 1, doneLine} },
	"tool-call": func(n int) benchRequest { return benchRequest{rawToolCallRequest(n), 1, doneLine} },
	"responses-content": func(n int) benchRequest {
		return benchRequest{rawRequest("/v1/responses", `{"model":"bench","stream":true,"ignore_eos":true,"max_output_tokens":`+strconv.Itoa(n)+
			`,"input":"write the next part of the plan"}`), 2, incompletePrefix}
	},
	"responses-tool-call": func(n int) benchRequest {
		return benchRequest{rawRequest("/v1/responses", `{"model":"bench","stream":true,"max_output_tokens":`+strconv.Itoa(n)+
			`,"tools":[`+flatTool(noteTool(n))+`],"tool_choice":"required","input":"write the next part of the plan"}`), 2, incompletePrefix}
	},
}

func benchStreams(b *testing.B, streams, tokens int, request benchRequest) {
	raiseFileLimit(b, 2*streams+256)
	clk, err := clock.New(benchSpeedup)
	if err != nil {
		b.Fatal(err)
	}
	srv := simtest.NewLoopbackServer(b, simserver.Options{Profile: benchProfile(), Clock: clk})
	addr := strings.TrimPrefix(srv.URL, "http://")
	var peak, perStream, tokS, framesS float64
	for b.Loop() {
		w := runWave(b, addr, request, streams)
		peak, perStream = max(peak, float64(w.peak)), max(perStream, w.bytesPerStream)
		tokS += float64(streams*tokens) / w.streaming.Seconds()
		framesS += float64(w.frames) / w.streaming.Seconds()
	}
	b.ReportMetric(peak, "streams")
	b.ReportMetric(tokS/float64(b.N), "tok/s")
	b.ReportMetric(framesS/float64(b.N), "frames/s")
	b.ReportMetric(perStream, "bytes/stream")
}

// wave is what one round of streams measured.
type wave struct {
	peak           int64         // streams open at once, at most
	bytesPerStream float64       // heap+stack growth per stream once all were receiving tokens
	streaming      time.Duration // wall time from the first token to the last [DONE]
	frames         int64         // data frames received, all streams together
}

// waveState is shared by the clients of a wave.
type waveState struct {
	streams            int64
	wall               *clock.Clock
	active, peak       atomic.Int64 // open streams now, and at most
	receiving          atomic.Int64 // streams that have had a token
	frames             atomic.Int64 // data frames received
	firstToken         atomic.Int64 // wall nanoseconds since the wave began, +1 (0: none yet)
	allReceiving, done chan struct{}
}

// opened counts a stream whose role chunk arrived.
func (w *waveState) opened() {
	a := w.active.Add(1)
	for p := w.peak.Load(); a > p && !w.peak.CompareAndSwap(p, a); p = w.peak.Load() {
	}
}

// tokenArrived counts a stream's first token.
func (w *waveState) tokenArrived() {
	w.firstToken.CompareAndSwap(0, int64(w.wall.Elapsed())+1)
	if w.receiving.Add(1) == w.streams {
		close(w.allReceiving)
	}
}

// runWave opens streams clients at once, measures memory once all receive tokens, and reads
// every stream to [DONE].
func runWave(b *testing.B, addr string, request benchRequest, streams int) wave {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	ws := &waveState{streams: int64(streams), wall: clock.Real(), allReceiving: make(chan struct{}), done: make(chan struct{})}
	errs := make(chan error, streams)
	dials := make(chan struct{}, 128) // bounds dials in flight, below the listen backlog
	var wg sync.WaitGroup
	for range streams {
		wg.Go(func() { errs <- streamClient(addr, request, dials, ws) })
	}
	go func() { wg.Wait(); close(ws.done) }()
	var w wave
	select {
	case <-ws.allReceiving:
		runtime.GC()
		var during runtime.MemStats
		runtime.ReadMemStats(&during)
		grown := int64(during.HeapInuse+during.StackInuse) - int64(before.HeapInuse+before.StackInuse)
		w.bytesPerStream = float64(grown) / float64(streams)
	case <-ws.done:
	}
	<-ws.done
	w.streaming = ws.wall.Elapsed() - time.Duration(ws.firstToken.Load()-1)
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	w.peak, w.frames = ws.peak.Load(), ws.frames.Load()
	if w.peak < int64(streams) {
		b.Fatalf("at most %d of %d streams were open at once", w.peak, streams)
	}
	return w
}

// rawStreamRequest is the HTTP/1.1 request each client sends: a streaming chat completion of
// exactly tokens tokens, with the connection closed after the response.
func rawStreamRequest(tokens int) []byte {
	return rawRequest("/v1/chat/completions", `{"model":"bench","stream":true,"ignore_eos":true,"max_tokens":`+strconv.Itoa(tokens)+
		`,"messages":[{"role":"user","content":"write the next part of the plan"}]}`)
}

// rawToolCallRequest is rawStreamRequest answered with one tool call of exactly tokens
// tokens: a tool whose arguments are longer, cut by max_tokens.
func rawToolCallRequest(tokens int) []byte {
	return rawRequest("/v1/chat/completions", `{"model":"bench","stream":true,"max_tokens":`+strconv.Itoa(tokens)+
		`,"tools":[`+noteTool(tokens)+`],"tool_choice":"required"`+
		`,"messages":[{"role":"user","content":"write the next part of the plan"}]}`)
}

// noteTool is a tool whose arguments are longer than tokens tokens.
func noteTool(tokens int) string {
	return `{"type":"function","function":{"name":"note","parameters":{"type":"object","properties":{"text":{"type":"string","minLength":` +
		strconv.Itoa(8*tokens) + `}},"required":["text"]}}}`
}

// rawRequest is the HTTP/1.1 request of a body to path, closing the connection after the
// response.
func rawRequest(path, body string) []byte {
	return []byte("POST " + path + " HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n" +
		"Connection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

var (
	dataPrefix = []byte("data: ")
	doneLine   = []byte("data: [DONE]\n")
	// incompletePrefix begins the last event of a response max_output_tokens cut, as the
	// benchmark's are.
	incompletePrefix = []byte(`data: {"type":"response.incomplete"`)
)

// streamClient sends the request on its own connection and reads the SSE stream line by line
// through small buffers, telling the wave when the stream opens, when its first token comes
// and when it closes.
func streamClient(addr string, request benchRequest, dials chan struct{}, ws *waveState) error {
	dials <- struct{}{}
	conn, err := net.Dial("tcp", addr)
	<-dials
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.Write(request.raw); err != nil {
		return err
	}
	// The body is read through net/http's chunked reader: a frame larger than its write
	// buffer (a Responses stream's last, holding the whole response) spans chunks.
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 1024), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 1024)
	frames, done := 0, false
	for {
		line, err := br.ReadSlice('\n')
		if bytes.HasPrefix(line, dataPrefix) {
			ws.frames.Add(1)
			switch frames++; frames {
			case 1:
				ws.opened()
				defer ws.active.Add(-1)
			case request.opening + 1:
				ws.tokenArrived()
			}
			done = bytes.HasPrefix(line, request.end)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			break
		}
	}
	if !done {
		return fmt.Errorf("stream ended without %q after %d frames", request.end, frames)
	}
	return nil
}

// raiseFileLimit lifts the open-file soft limit to at least n (within the hard limit).
func raiseFileLimit(b *testing.B, n int) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
	if lim.Cur >= uint64(n) {
		return
	}
	lim.Cur = min(max(uint64(n), lim.Cur), lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < uint64(n) {
		b.Skipf("need %d open files, limit is %d: %v", n, lim.Cur, err)
	}
}
