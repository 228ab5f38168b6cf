package traceimport

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
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
