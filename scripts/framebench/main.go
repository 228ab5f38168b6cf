//go:build ignore

// Command framebench opens N concurrent streaming chat completions against an
// OpenAI-compatible server and reports the SSE frames and tokens per wall second it receives,
// the time from each request's write to its response's first byte, and the server's resident
// memory. It is the side-by-side client for comparing agentsim serve with other simulators,
// or a server with the same server behind agentsim record: the same client, the same request,
// one server at a time (see docs/speed.md for the commands).
//
//	go run scripts/framebench/main.go -url http://127.0.0.1:8111 -streams 1000 -tokens 1000 -pid $PID
//
// Each stream is a raw HTTP/1.1 request on its own connection, read without decoding the JSON:
// a frame is a "data: " line, [DONE] excluded, so the client costs the same whatever the
// server. The rate is taken over the window in which every stream is open (from the last
// stream's first frame to the first stream's [DONE]), and over the whole run.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:8000", "server root (the client posts to /v1/chat/completions)")
	streams := flag.Int("streams", 1000, "concurrent streams")
	tokens := flag.Int("tokens", 1000, "tokens per stream (max_tokens with ignore_eos)")
	model := flag.String("model", "m", "model name sent")
	pid := flag.Int("pid", 0, "server process id, for its resident memory (0: not reported)")
	label := flag.String("label", "", "name printed with the figures")
	flag.Parse()

	raiseFileLimit(uint64(*streams + 256))
	u, err := url.Parse(*base)
	if err != nil {
		fail("url %q: %v", *base, err)
	}
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"Say something long."}],"stream":true,`+
		`"max_tokens":%d,"ignore_eos":true}`, *model, *tokens)
	req := []byte(fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Accept: text/event-stream\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", u.Host, len(body), body))

	var frames atomic.Int64
	var peakRSS atomic.Int64
	stop := make(chan struct{})
	type sample struct {
		at     time.Time
		frames int64
	}
	var samples []sample
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() { // owned by main: ends when stop closes
		defer sampler.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				samples = append(samples, sample{now, frames.Load()})
				if *pid > 0 {
					if kb := rssKB(*pid); kb > peakRSS.Load() {
						peakRSS.Store(kb)
					}
				}
			}
		}
	}()

	firsts := make([]time.Time, *streams)
	dones := make([]time.Time, *streams)
	ttfbs := make([]time.Duration, *streams)
	errs := make([]error, *streams)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range *streams {
		wg.Add(1)
		go func() { // one per stream: ends at [DONE] or on error
			defer wg.Done()
			firsts[i], dones[i], ttfbs[i], errs[i] = stream(u.Host, req, &frames)
		}()
	}
	wg.Wait()
	close(stop)
	sampler.Wait()

	failed := 0
	var lastFirst, firstDone, end time.Time
	begin := time.Now()
	for i := range *streams {
		if errs[i] != nil {
			if failed < 3 {
				fmt.Fprintf(os.Stderr, "stream %d: %v\n", i, errs[i])
			}
			failed++
			continue
		}
		if firsts[i].Before(begin) {
			begin = firsts[i]
		}
		if firsts[i].After(lastFirst) {
			lastFirst = firsts[i]
		}
		if firstDone.IsZero() || dones[i].Before(firstDone) {
			firstDone = dones[i]
		}
		if dones[i].After(end) {
			end = dones[i]
		}
	}
	ok := *streams - failed
	total := frames.Load()
	whole := end.Sub(begin).Seconds()
	steady, steadyFrames := 0.0, int64(0)
	var a, b *sample
	for i := range samples {
		s := &samples[i]
		if a == nil && !s.at.Before(lastFirst) {
			a = s
		}
		if !s.at.After(firstDone) {
			b = s
		}
	}
	if a != nil && b != nil && b.at.After(a.at) {
		steady, steadyFrames = b.at.Sub(a.at).Seconds(), b.frames-a.frames
	}
	fmt.Printf("%s streams=%d ok=%d tokens/stream=%d wall=%.2fs connect+ttft(last)=%.2fs\n",
		*label, *streams, ok, *tokens, time.Since(start).Seconds(), lastFirst.Sub(start).Seconds())
	fmt.Printf("%s whole run: %.0f frames/s, %.0f tokens/s (%d frames, %d tokens in %.2fs)\n",
		*label, float64(total)/whole, float64(ok**tokens)/whole, total, ok**tokens, whole)
	if steady > 0 {
		fmt.Printf("%s all streams open: %.0f frames/s over %.2fs\n", *label, float64(steadyFrames)/steady, steady)
	} else {
		fmt.Printf("%s all streams open: no window (the first stream ended before the last began)\n", *label)
	}
	var ttfb []time.Duration
	for i := range *streams {
		if errs[i] == nil {
			ttfb = append(ttfb, ttfbs[i])
		}
	}
	if len(ttfb) > 0 {
		slices.Sort(ttfb)
		q := func(f float64) float64 {
			return float64(ttfb[min(len(ttfb)-1, int(f*float64(len(ttfb))))].Microseconds()) / 1e3
		}
		fmt.Printf("%s time to first byte: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", *label, q(0.5), q(0.99), q(1))
	}
	if *pid > 0 {
		fmt.Printf("%s server peak RSS while streaming: %.1f MiB (%.1f KiB per stream)\n",
			*label, float64(peakRSS.Load())/1024, float64(peakRSS.Load())/float64(*streams))
	}
	if failed > 0 {
		os.Exit(1)
	}
}

// stream sends req on a new connection and counts the data frames of the response until
// [DONE]; it returns when the first frame arrived, when [DONE] did, and the time from the
// request's write to the response's first byte.
func stream(host string, req []byte, frames *atomic.Int64) (first, done time.Time, ttfb time.Duration, err error) {
	var conn net.Conn
	for try := 0; ; try++ {
		conn, err = net.Dial("tcp", host)
		if err == nil || try == 50 {
			break
		}
		time.Sleep(20 * time.Millisecond) // the listen backlog overflowed: try again
	}
	if err != nil {
		return first, done, ttfb, err
	}
	defer conn.Close()
	sent := time.Now()
	if _, err = conn.Write(req); err != nil {
		return first, done, ttfb, err
	}
	r := bufio.NewReaderSize(conn, 4096)
	if _, err = r.Peek(1); err != nil {
		return first, done, ttfb, fmt.Errorf("status line: %w", err)
	}
	ttfb = time.Since(sent)
	status, err := r.ReadString('\n')
	if err != nil {
		return first, done, ttfb, fmt.Errorf("status line: %w", err)
	}
	if !strings.Contains(status, " 200 ") {
		return first, done, ttfb, fmt.Errorf("status %q", strings.TrimSpace(status))
	}
	chunked := false
	for {
		h, err := r.ReadString('\n')
		if err != nil {
			return first, done, ttfb, fmt.Errorf("headers: %w", err)
		}
		if h = strings.TrimSpace(h); h == "" {
			break
		}
		k, v, _ := strings.Cut(h, ":")
		chunked = chunked || strings.EqualFold(k, "Transfer-Encoding") && strings.Contains(strings.ToLower(v), "chunked")
	}
	// The body's lines, its chunk framing removed: a proxy may cut a frame across two
	// chunks, as a read brings it.
	body := r
	if chunked {
		body = bufio.NewReaderSize(httputil.NewChunkedReader(r), 4096)
	}
	prefix, doneLine := []byte("data: "), []byte("data: [DONE]")
	n := int64(0)
	for {
		line, err := body.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull {
			frames.Add(n)
			return first, done, ttfb, fmt.Errorf("stream ended without [DONE]: %w", err)
		}
		if !bytes.HasPrefix(line, prefix) {
			continue // blank lines, comments
		}
		if bytes.HasPrefix(line, doneLine) {
			frames.Add(n)
			return first, time.Now(), ttfb, nil
		}
		if first.IsZero() {
			first = time.Now()
		}
		n++
		if n%16 == 0 {
			frames.Add(16)
			n = 0
		}
	}
}

// rssKB reads a process's resident set size, in KiB, from /proc.
func rssKB(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

func raiseFileLimit(n uint64) {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < n {
		l.Cur = min(n, l.Max)
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "framebench: "+format+"\n", args...)
	os.Exit(2)
}
