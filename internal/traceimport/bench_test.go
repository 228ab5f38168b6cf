package traceimport

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// mooncakeInput generates a Mooncake trace of n requests: 1000 conversations behind a 4-block
// system prompt, each turn appending 1 to 4 blocks, arrivals interleaved.
func mooncakeInput(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	type conv struct{ ids []uint64 }
	convs := make([]conv, 1000)
	next := uint64(4)
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		c := &convs[rng.IntN(len(convs))]
		if len(c.ids) == 0 || len(c.ids) > 120 {
			c.ids = []uint64{0, 1, 2, 3}
		}
		for k := 1 + rng.IntN(4); k > 0; k-- {
			c.ids = append(c.ids, next)
			next++
		}
		in := len(c.ids)*BlockTokens - rng.IntN(BlockTokens)
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [`, i*37, in, 50+rng.IntN(500))
		for k, id := range c.ids {
			if k > 0 {
				b.WriteString(", ")
			}
			fmt.Fprint(&b, id)
		}
		b.WriteString("]}\n")
		// the partial last block changes when the conversation grows
		c.ids[len(c.ids)-1] = next
		next++
	}
	return b.Bytes()
}

// BenchmarkMooncake100k imports and writes a 100 000-line Mooncake trace.
func BenchmarkMooncake100k(b *testing.B) {
	in := mooncakeInput(100_000)
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for b.Loop() {
		t, err := Mooncake(bytes.NewReader(in), "bench.jsonl")
		if err != nil {
			b.Fatal(err)
		}
		if err := t.Write(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// accessLogInput generates a gateway log of n requests: start and finish lines with request
// ids, 16 in flight, latencies of 1 to 90 s in integer µs.
func accessLogInput(n int) []byte {
	rng := rand.New(rand.NewPCG(3, 4))
	t0 := time.Date(2026, 11, 29, 19, 0, 0, 0, time.UTC)
	type line struct {
		at   time.Time
		text string
	}
	lines := make([]line, 0, 2*n)
	for i := 0; i < n; i++ {
		start := t0.Add(time.Duration(i) * 3 * time.Second / 16)
		lat := time.Duration(1+rng.IntN(90)) * time.Second
		span := fmt.Sprintf(`http_request{method=POST uri=/v1/chat/completions version=HTTP/1.1 request_id="r%d"`, i)
		lines = append(lines,
			line{start, fmt.Sprintf("%s  INFO %s}: smg::request: started processing request", start.Format(accessLogTimeLayout), span)},
			line{start.Add(lat), fmt.Sprintf("%s  INFO %s status_code=200 latency=%d}: smg::response: finished processing request", start.Add(lat).Format(accessLogTimeLayout), span, lat.Microseconds())})
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].at.Before(lines[j].at) })
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

const accessLogTimeLayout = "2006-01-02 15:04:05"

// BenchmarkAccessLog100k imports a log of 100 000 requests (200 000 lines), inferring the unit.
func BenchmarkAccessLog100k(b *testing.B) {
	in := accessLogInput(100_000)
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for b.Loop() {
		t, err := AccessLog(bytes.NewReader(in), "bench.log", UnitUnknown)
		if err != nil {
			b.Fatal(err)
		}
		if err := t.Write(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
