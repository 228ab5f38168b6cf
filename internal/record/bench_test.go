package record_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentsim/agentsim/internal/record"
)

// chunkServer streams n chunks per request, each stamped with its write time in Unix
// nanoseconds, gap µs apart, then [DONE]; n and gap are the request's query parameters.
func chunkServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		gapUS, _ := strconv.Atoi(r.URL.Query().Get("gap"))
		gap := time.Duration(gapUS) * time.Microsecond
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		next := time.Now()
		for i := 0; i < n; i++ {
			time.Sleep(time.Until(next))
			next = next.Add(gap)
			fmt.Fprintf(w, "data: {\"t\":%d,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok \"}}]}\n\n", time.Now().UnixNano())
			f.Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
}

// readChunks streams n chunks gap apart from base and returns each chunk's latency from the
// server's write to its arrival here, in microseconds.
func readChunks(c *http.Client, base string, n int, gap time.Duration) ([]float64, error) {
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"bench"}]}`
	q := fmt.Sprintf("?n=%d&gap=%d", n, gap.Microseconds())
	resp, err := c.Post(base+"/v1/chat/completions"+q, "application/json", bytes.NewBufferString(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	out := make([]float64, 0, n)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		at := time.Now().UnixNano()
		if i := bytes.Index(line, []byte(`{"t":`)); i >= 0 {
			rest := line[i+5:]
			j := bytes.IndexByte(rest, ',')
			sent, _ := strconv.ParseInt(string(rest[:j]), 10, 64)
			out = append(out, float64(at-sent)/1e3)
		}
	}
}

// quantile returns the q-quantile of sorted xs.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return xs[min(len(xs)-1, int(q*float64(len(xs))))]
}

// BenchmarkChunkLatency measures what the proxy adds to each streamed chunk: the latency
// from the server's write to the client's read of every chunk, directly and through the
// proxy (loopback sockets); the proxy's hold of each chunk, from the read that brought it to
// the flush of its write to the client; and the CPU the proxied pass costs beyond the direct
// one, per chunk. One stream at 2,000 chunks/s (a fast decoder alone), then 64 and
// 256 concurrent streams at 50 chunks/s each (a loaded server's inter-token latency). It
// reports each path's p50 and p99 in µs and the p99 the proxy adds; b.N is the number of
// chunks over all streams.
func BenchmarkChunkLatency(b *testing.B) {
	up := chunkServer()
	defer up.Close()
	u, _ := url.Parse(up.URL)
	p, err := record.New(record.Options{Upstream: u, Trace: io.Discard,
		Transport: stampTransport{rt: &http.Transport{MaxIdleConnsPerHost: 1024, DisableCompression: true}}})
	if err != nil {
		b.Fatal(err)
	}
	var holdsMu sync.Mutex
	var allHolds []*holds
	px := httptest.NewServer(stamped(p, &allHolds, &holdsMu))
	defer px.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024, DisableCompression: true}}
	for _, tc := range []struct {
		streams int
		gap     time.Duration
	}{{1, 500 * time.Microsecond}, {64, 20 * time.Millisecond}, {256, 20 * time.Millisecond}} {
		streams := tc.streams
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			perStream := (b.N + streams - 1) / streams
			measure := func(base string) []float64 {
				var mu sync.Mutex
				var all []float64
				var wg sync.WaitGroup
				for s := 0; s < streams; s++ {
					wg.Go(func() {
						lat, err := readChunks(client, base, perStream, tc.gap)
						if err != nil {
							b.Error(err)
						}
						mu.Lock()
						all = append(all, lat...)
						mu.Unlock()
					})
				}
				wg.Wait()
				slices.Sort(all)
				return all
			}
			holdsMu.Lock()
			allHolds = nil
			holdsMu.Unlock()
			b.ResetTimer()
			cpu0 := cpuTime()
			direct := measure(up.URL)
			cpu1 := cpuTime()
			proxied := measure(px.URL)
			cpu2 := cpuTime()
			b.StopTimer()
			// The process runs server, proxy and client alike: what the proxied pass costs
			// beyond the direct one is the proxy's, whatever else the machine runs.
			chunks := float64(max(len(proxied), 1))
			b.ReportMetric(((cpu2-cpu1)-(cpu1-cpu0)).Seconds()*1e6/chunks, "added-cpu-µs/chunk")
			var held []float64
			for _, h := range allHolds {
				held = append(held, h.held()...)
			}
			slices.Sort(held)
			b.ReportMetric(quantile(held, 0.5), "hold-p50-µs")
			b.ReportMetric(quantile(held, 0.99), "hold-p99-µs")
			b.ReportMetric(quantile(direct, 0.5), "direct-p50-µs")
			b.ReportMetric(quantile(direct, 0.99), "direct-p99-µs")
			b.ReportMetric(quantile(proxied, 0.5), "proxy-p50-µs")
			b.ReportMetric(quantile(proxied, 0.99), "proxy-p99-µs")
			b.ReportMetric(quantile(proxied, 0.99)-quantile(direct, 0.99), "added-p99-µs")
			b.ReportMetric(0, "ns/op")
		})
	}
	px.Close()
	_ = p.Close()
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// holds records, per proxied request, when each read from the server returned and when the
// proxy's write of those bytes to the client was flushed: the time the proxy held each chunk.
type holds struct {
	mu          sync.Mutex
	readAt      []int64 // Unix ns, one per read that brought bytes
	flushedAt   []int64 // Unix ns, one per write flushed
	wroteUnsent bool
}

type holdsKey struct{}

// holdsOf returns the holds in ctx, or nil.
func holdsOf(ctx context.Context) *holds {
	h, _ := ctx.Value(holdsKey{}).(*holds)
	return h
}

// held returns the hold of every chunk, in µs.
func (h *holds) held() []float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]float64, 0, len(h.flushedAt))
	for i := range min(len(h.readAt), len(h.flushedAt)) {
		out = append(out, float64(h.flushedAt[i]-h.readAt[i])/1e3)
	}
	return out
}

// stampTransport stamps when each read of a response body returns with bytes.
type stampTransport struct{ rt http.RoundTripper }

func (s stampTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.rt.RoundTrip(r)
	if h := holdsOf(r.Context()); h != nil && err == nil {
		resp.Body = &stampBody{ReadCloser: resp.Body, h: h}
	}
	return resp, err
}

type stampBody struct {
	io.ReadCloser
	h *holds
}

func (b *stampBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		at := time.Now().UnixNano()
		b.h.mu.Lock()
		b.h.readAt = append(b.h.readAt, at)
		b.h.mu.Unlock()
	}
	return n, err
}

// stampWriter stamps when each write to the client has been flushed.
type stampWriter struct {
	http.ResponseWriter
	h *holds
}

func (w *stampWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.h.mu.Lock()
	w.h.wroteUnsent = true
	w.h.mu.Unlock()
	return n, err
}

func (w *stampWriter) Flush() {
	w.ResponseWriter.(http.Flusher).Flush()
	at := time.Now().UnixNano()
	w.h.mu.Lock()
	if w.h.wroteUnsent {
		w.h.flushedAt = append(w.h.flushedAt, at)
		w.h.wroteUnsent = false
	}
	w.h.mu.Unlock()
}

func (w *stampWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// stamped serves p, recording each request's holds into all.
func stamped(p http.Handler, all *[]*holds, mu *sync.Mutex) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := &holds{}
		mu.Lock()
		*all = append(*all, h)
		mu.Unlock()
		p.ServeHTTP(&stampWriter{ResponseWriter: w, h: h}, r.WithContext(context.WithValue(r.Context(), holdsKey{}, h)))
	})
}

// frameServer streams the query's n chat chunks per request, one write and flush a frame as
// a server decoding one token a frame does, then [DONE].
func frameServer() *httptest.Server {
	frame := []byte(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1796070181,"model":"m",` +
		`"choices":[{"index":0,"delta":{"content":"tok "},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for range n {
			_, _ = w.Write(frame)
			f.Flush()
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
}

// BenchmarkProxyStream is the cost of a streamed frame through the proxy beside the same
// frame straight from the server: 64 concurrent streams of 256 frames, each frame one write
// of the server and one read of the client, all in this process. b.N is the frames over all
// streams; cpu-µs/frame is the process's CPU (server, client and, proxied, the proxy) per
// frame, so the proxy's own is the difference between the two paths. Profile the proxy with
// -bench 'ProxyStream/path=proxy' -cpuprofile.
func BenchmarkProxyStream(b *testing.B) {
	const streams, frames = 64, 256
	up, px := frameProxy(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams, DisableCompression: true}}
	read := func(base string) error { return readFrames(client, base, frames) }
	for _, path := range []struct{ name, base string }{{"direct", up.URL}, {"proxy", px.URL}} {
		b.Run("path="+path.name, func(b *testing.B) {
			requests := (b.N + frames - 1) / frames
			cpu := readConcurrently(b, streams, requests, func() error { return read(path.base) })
			b.ReportMetric(cpu.Seconds()*1e6/float64(requests*frames), "cpu-µs/frame")
		})
	}
}

// openServer streams a frame every 200 ms until the client goes away, from a random phase
// (streams decode apart, not in step); a request with ?n=1 gets one frame and [DONE] at once.
func openServer() *httptest.Server {
	frame := []byte(`data: {"choices":[{"index":0,"delta":{"content":"tok "}}]}` + "\n\n")
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		if r.URL.Query().Get("n") == "1" {
			_, _ = w.Write(frame)
			_, _ = io.WriteString(w, "data: [DONE]\n\n")
			return
		}
		time.Sleep(rand.N(200 * time.Millisecond))
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			if _, err := w.Write(frame); err != nil {
				return
			}
			f.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-t.C:
			}
		}
	}))
}

// BenchmarkTTFB is the time to first byte of a request while 1,000 streams are open (each a
// frame every 200 ms, 5,000 frames/s in all: what a loaded machine carries through server,
// proxy and client in one process without a queue), straight to the server and through the proxy:
// from the request's send to its response's headers, one request after another. b.N is the
// requests of each path; it reports each path's p50 and p99 in µs and the p99 the proxy adds.
func BenchmarkTTFB(b *testing.B) {
	const open = 1000
	up := openServer()
	defer up.Close()
	u, _ := url.Parse(up.URL)
	p, err := record.New(record.Options{Upstream: u, Trace: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	px := httptest.NewServer(p)
	defer func() { px.Close(); _ = p.Close() }()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
	defer client.CloseIdleConnections()
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"bench"}]}`
	// Each probe asks its own message: one that repeated an open stream's would be taken for
	// a harness re-sending it, and wait up to 250 ms for that stream to end (resendWait).
	var probes atomic.Int64
	post := func(ctx context.Context, base, q string) (*http.Response, error) {
		body := body
		if q != "" {
			body = strings.Replace(body, "bench", fmt.Sprintf("probe %d", probes.Add(1)), 1)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions"+q, bytes.NewBufferString(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		return client.Do(req)
	}
	measure := func(b *testing.B, base string) []float64 {
		ctx, cancel := context.WithCancel(context.Background())
		var streams, opened sync.WaitGroup
		opened.Add(open)
		for range open {
			streams.Go(func() {
				resp, err := post(ctx, base, "")
				opened.Done()
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		}
		opened.Wait()
		lat := make([]float64, 0, b.N)
		for range b.N {
			t0 := time.Now()
			resp, err := post(context.Background(), base, "?n=1")
			if err != nil {
				b.Fatal(err)
			}
			lat = append(lat, float64(time.Since(t0).Nanoseconds())/1e3)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		cancel()
		streams.Wait()
		slices.Sort(lat)
		return lat
	}
	b.ResetTimer()
	direct := measure(b, up.URL)
	proxied := measure(b, px.URL)
	b.StopTimer()
	b.ReportMetric(quantile(direct, 0.5), "direct-p50-µs")
	b.ReportMetric(quantile(direct, 0.99), "direct-p99-µs")
	b.ReportMetric(quantile(proxied, 0.5), "proxy-p50-µs")
	b.ReportMetric(quantile(proxied, 0.99), "proxy-p99-µs")
	b.ReportMetric(quantile(proxied, 0.99)-quantile(direct, 0.99), "added-p99-µs")
	b.ReportMetric(0, "ns/op")
}

// heldServer answers each request with one frame, then holds the stream open until the
// client goes away: a stream decoding slowly, as most of a loaded server's are.
func heldServer() *httptest.Server {
	frame := []byte(`data: {"choices":[{"index":0,"delta":{"content":"tok "}}]}` + "\n\n")
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(frame)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
}

// goMemory is the memory the Go runtime holds in use after a collection, in bytes: heap and
// goroutine stacks.
type goMemory struct{ heap, stacks float64 }

// memoryNow collects garbage and returns the memory in use.
func memoryNow() goMemory {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return goMemory{heap: float64(m.HeapAlloc), stacks: float64(m.StackInuse)}
}

// less is m less o, each part.
func (m goMemory) less(o goMemory) goMemory { return goMemory{m.heap - o.heap, m.stacks - o.stacks} }

// BenchmarkOpenStreamMemory is the memory an open stream costs the proxy: 1,000 streams
// held open at once (each has had its headers and one frame), straight to the server and
// through the proxy, without and with the watch, server, proxy and client in this process;
// each request a short message, or a conversation of 32 KiB of text (an agent's context of
// about 8,000 tokens).
// proxy-B/stream is the heap and stacks in use with the streams open, less the direct path's,
// per stream: what the proxy holds for each, as heap and as stacks. Each of b.N passes opens
// them anew.
func BenchmarkOpenStreamMemory(b *testing.B) {
	const open = 1000
	up := heldServer()
	defer up.Close()
	u, _ := url.Parse(up.URL)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: open, DisableCompression: true}}
	defer client.CloseIdleConnections()
	// held opens the streams through base, each asking body, and returns the memory in use
	// while they are open.
	held := func(b *testing.B, base, body string) goMemory {
		ctx, cancel := context.WithCancel(context.Background())
		var streams, opened sync.WaitGroup
		opened.Add(open)
		for range open {
			streams.Go(func() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
				resp, err := client.Do(req)
				if err != nil {
					opened.Done()
					b.Error(err)
					return
				}
				defer resp.Body.Close()
				br := bufio.NewReader(resp.Body)
				_, err = br.ReadSlice('\n')
				opened.Done()
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, br) // until the stream is cancelled
			})
		}
		opened.Wait()
		m := memoryNow()
		cancel()
		streams.Wait()
		return m
	}
	proxy := func(b *testing.B, watch bool) (string, func()) {
		o := record.Options{Upstream: u, Trace: io.Discard}
		var w *record.Watcher
		if watch {
			var err error
			w, err = record.NewWatcher(record.WatchOptions{Dir: b.TempDir(), Upstream: up.URL})
			if err != nil {
				b.Fatal(err)
			}
			o.Observer = w
		}
		p, err := record.New(o)
		if err != nil {
			b.Fatal(err)
		}
		px := httptest.NewServer(p)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			if w != nil {
				w.Run(ctx, p)
			}
		}()
		return px.URL, func() {
			cancel()
			<-done
			px.Close()
			_ = p.Close()
			if w != nil {
				_ = w.Close()
			}
		}
	}
	for _, c := range []struct {
		watch  bool
		prompt int // bytes of text
	}{{false, 0}, {true, 0}, {false, 32 << 10}, {true, 32 << 10}} {
		name := fmt.Sprintf("path=record/prompt=%dKiB", c.prompt>>10)
		if c.watch {
			name = fmt.Sprintf("path=watch/prompt=%dKiB", c.prompt>>10)
		}
		body := `{"model":"m","stream":true,"messages":[{"role":"system","content":"` + strings.Repeat("page text ", c.prompt/10) +
			`"},{"role":"user","content":"bench"}]}`
		watch := c.watch
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				before := memoryNow()
				direct := held(b, up.URL, body).less(before)
				client.CloseIdleConnections()
				base, stop := proxy(b, watch)
				before = memoryNow()
				added := held(b, base, body).less(before).less(direct)
				client.CloseIdleConnections()
				stop()
				b.ReportMetric((direct.heap+direct.stacks)/open, "direct-B/stream")
				b.ReportMetric(direct.stacks/open, "direct-stack-B/stream")
				b.ReportMetric((added.heap+added.stacks)/open, "proxy-B/stream")
				b.ReportMetric(added.heap/open, "proxy-heap-B/stream")
				b.ReportMetric(added.stacks/open, "proxy-stack-B/stream")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkProxyRequest is what a request costs the proxy beyond its frames: 32 concurrent
// clients send short streams (4 frames each) one after another, straight to the server and
// through the proxy, server, proxy and client in this process. b.N is the requests;
// cpu-µs/request is the process's CPU per request, and allocs/op and B/op are per request,
// so the proxy's own are the difference between the two paths. conn=reused keeps the
// client's connections alive; conn=new opens one per request, as scripts/framebench does.
// Profile the proxy with -bench 'ProxyRequest/conn=new/path=proxy' -cpuprofile.
func BenchmarkProxyRequest(b *testing.B) {
	const clients, frames = 32, 4
	up, px := frameProxy(b)
	for _, conn := range []string{"reused", "new"} {
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true,
			DisableKeepAlives: conn == "new"}}
		read := func(base string) error { return readFrames(client, base, frames) }
		for _, path := range []struct{ name, base string }{{"direct", up.URL}, {"proxy", px.URL}} {
			b.Run("conn="+conn+"/path="+path.name, func(b *testing.B) {
				cpu := readConcurrently(b, clients, b.N, func() error { return read(path.base) })
				b.ReportMetric(cpu.Seconds()*1e6/float64(b.N), "cpu-µs/request")
			})
		}
		client.CloseIdleConnections()
	}
}

// readConcurrently times requests calls of read shared by workers goroutines, each taking the
// next until they are all taken (a failed one ends its goroutine), with b's timer and
// allocation count running, and returns the process's CPU time they took.
func readConcurrently(b *testing.B, workers, requests int, read func() error) time.Duration {
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(requests) {
				if err := read(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	return cpuTime() - cpu0
}

// readFrames asks base, through client, for a stream of frames frames and reads them all.
func readFrames(client *http.Client, base string, frames int) error {
	const body = `{"model":"m","stream":true,"messages":[{"role":"user","content":"bench"}]}`
	resp, err := client.Post(base+fmt.Sprintf("/v1/chat/completions?n=%d", frames), "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	got := 0
	for {
		line, err := br.ReadSlice('\n')
		if bytes.HasPrefix(line, []byte("data: {")) {
			got++
		}
		if err == io.EOF && got == frames {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%d of %d frames: %w", got, frames, err)
		}
	}
}

// frameProxy starts frameServer and a recording proxy in front of it that records nothing,
// both stopped when b ends.
func frameProxy(b *testing.B) (up, px *httptest.Server) {
	up = frameServer()
	u, _ := url.Parse(up.URL)
	p, err := record.New(record.Options{Upstream: u, Trace: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	px = httptest.NewServer(p)
	b.Cleanup(func() { px.Close(); _ = p.Close(); up.Close() })
	return up, px
}
