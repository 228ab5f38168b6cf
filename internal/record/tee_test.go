package record

import (
	"io"
	"net/url"
	"testing"
)

// chunkBody returns the same SSE chunk on every read, for ever.
type chunkBody struct{ chunk []byte }

func (c chunkBody) Read(p []byte) (int, error) { return copy(p, c.chunk), nil }
func (chunkBody) Close() error                 { return nil }

// BenchmarkTeeChunk is the proxy's own work per streamed chunk, beside the copy: one read
// through the tee, which keeps the bytes and parses the previous read's frame.
func BenchmarkTeeChunk(b *testing.B) {
	benchmarkTee(b, `{"content":"tok "}`, func(x *exchange) {
		if x.reply.Len() > 1<<20 {
			x.reply.Reset()
		}
	})
}

// BenchmarkTeeToolCallChunk is BenchmarkTeeChunk for a chunk of a tool call's arguments, the
// frame a tool-calling reply streams most.
func BenchmarkTeeToolCallChunk(b *testing.B) {
	benchmarkTee(b, `{"tool_calls":[{"index":0,"function":{"arguments":"src/"}}]}`, func(x *exchange) {
		if len(x.args) > 0 && x.args[0].Len() > 4<<10 {
			x.args[0].Reset()
		}
	})
}

// benchmarkTee reads one chunk whose delta is delta through the tee per iteration; trim keeps
// what the exchange accumulates bounded.
func benchmarkTee(b *testing.B, delta string, trim func(*exchange)) {
	u, _ := url.Parse("http://upstream")
	p, err := New(Options{Upstream: u, Trace: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	x := &exchange{p: p, conv: &convHash{}, body: &parsedBody{}}
	chunk := []byte(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1796070181,"model":"deepseek-v4-flash","choices":[{"index":0,"delta":` +
		delta + `,"logprobs":null,"finish_reason":null}]}` + "\n\n")
	t := &tee{body: chunkBody{chunk}, x: x, sse: true, wantLen: -1}
	buf := make([]byte, 32<<10)
	b.ReportAllocs()
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		if _, err := t.Read(buf); err != nil {
			b.Fatal(err)
		}
		trim(x)
	}
}
