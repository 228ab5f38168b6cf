package record_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"sync"
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
// proxy (loopback sockets). One stream at 2,000 chunks/s (a fast decoder alone), then 64 and
// 256 concurrent streams at 50 chunks/s each (a loaded server's inter-token latency). It
// reports each path's p50 and p99 in µs and the p99 the proxy adds; b.N is the number of
// chunks over all streams.
func BenchmarkChunkLatency(b *testing.B) {
	up := chunkServer()
	defer up.Close()
	u, _ := url.Parse(up.URL)
	p, err := record.New(record.Options{Upstream: u, Trace: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	px := httptest.NewServer(p)
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
			b.ResetTimer()
			direct := measure(up.URL)
			proxied := measure(px.URL)
			b.StopTimer()
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
