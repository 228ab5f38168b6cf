package record

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/agentsim/agentsim/trace"
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

// pieces is a response body that returns its bytes cut at the given offsets, one piece a read.
type pieces struct {
	b    []byte
	cuts []int
}

func (p *pieces) Read(b []byte) (int, error) {
	if len(p.b) == 0 {
		return 0, io.EOF
	}
	n := len(p.b)
	if len(p.cuts) > 0 {
		n, p.cuts = p.cuts[0], p.cuts[1:]
	}
	n = copy(b, p.b[:n])
	p.b = p.b[n:]
	for i := range p.cuts {
		p.cuts[i] -= n
	}
	return n, nil
}

func (*pieces) Close() error { return nil }

// TestFrameSplitAcrossReads cuts a stream at every byte, and at two bytes of every pair of
// frames: each frame is read once and whole, whatever the reads that bring it, one of them from
// the frame before (chunkMemo) though that one's read buffer has been reused.
func TestFrameSplitAcrossReads(t *testing.T) {
	stream := "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" +
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\r\n\r\n" +
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n" + // read from the frame before
		": a comment\n\n" +
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" \\\"wörld\\\"\\n\"}}]}\n\n" +
		"data:{\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":4}}\n\n" +
		"data: [DONE]\n\n"
	u, _ := url.Parse("http://upstream")
	p, err := New(Options{Upstream: u, Trace: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	read := func(cuts []int) *exchange {
		x := &exchange{p: p, conv: &convHash{}, body: &parsedBody{}}
		tr := &tee{body: &pieces{b: []byte(stream), cuts: cuts}, x: x, sse: true, wantLen: -1}
		if _, err := io.Copy(io.Discard, struct{ io.Reader }{tr}); err != nil {
			t.Fatal(err)
		}
		return x
	}
	check := func(cuts []int) {
		x := read(cuts)
		if got := x.reply.String(); got != "Hello \"wörld\"\n" {
			t.Errorf("cut at %v: reply %q, want %q", cuts, got, "Hello \"wörld\"\n")
		}
		if x.outChunks != 4 || x.reasonB != 3 || x.finish != "stop" || !x.done || !x.ended {
			t.Errorf("cut at %v: %d output chunks, %d bytes of reasoning, finish %q, done %t, ended %t; want 4, 3, stop, true, true",
				cuts, x.outChunks, x.reasonB, x.finish, x.done, x.ended)
		}
		if x.usage == nil || x.usage.PromptTokens != 7 || x.usage.CompletionTokens != 4 {
			t.Errorf("cut at %v: usage %+v, want 7 prompt and 4 completion tokens", cuts, x.usage)
		}
	}
	check(nil)
	for i := 1; i < len(stream); i++ {
		check([]int{i})
	}
	frames := strings.SplitAfter(stream, "\n\n")
	at := 0
	for i := 0; i+1 < len(frames); i++ {
		for a := 1; a < len(frames[i]); a += 7 {
			for b := 1; b < len(frames[i+1]); b += 5 {
				check([]int{at + a, at + len(frames[i]) + b})
			}
		}
		at += len(frames[i])
	}
}

// FuzzScanChunk checks that a chunk the scan reads is the chunk encoding/json reads: the one
// choice's text fields and finish reason, or no choice.
func FuzzScanChunk(f *testing.F) {
	for _, s := range []string{
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok "},"logprobs":null,"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_content":"a","reasoning":"b"}}]}`,
		`{"choices":[{"index":0,"text":"legacy","finish_reason":"length"}]}`,
		`{"choices":[{"delta":{"content":null,"tool_calls":[]},"finish_reason":"stop"}],"usage":null,"error":null}`,
		`{"choices":[{"delta":{"content":"a\nb"}}]}`,
		`{"choices":[{"delta":{"Content":"x"}}]}`,
		`{"choices":[{"delta":{"content":"x","content":"y"}}]}`,
		`{"choices":[{"delta":{"content":"x"}},{"delta":{"content":"y"}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}`,
		`{"error":{"message":"boom"}}`,
		`{"choices":null,"x":[1,-2.5e+3,true,false,null,{"a":"\u00e9"}]}`,
		`{"choices":[{"delta":{"content":"x"}}]} trailing`,
		`{"choices":[{"delta":{"content":"\xff"}}]}`,
		`{"choices":[{"delta":{"content":5}}]}`,
		`{"a":01}`, `[]`, `{}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, ok := scanChunk(data, nil)
		if !ok {
			return
		}
		var want streamChunk
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("scanned %q, which encoding/json refuses: %v", data, err)
		}
		if want.Usage != nil || errorMessage(want.Error) != "" || len(want.Choices) > 1 || c.choice != (len(want.Choices) == 1) {
			t.Fatalf("scanned %q as %+v; encoding/json reads %d choices, usage %v, error %s", data, c, len(want.Choices), want.Usage, want.Error)
		}
		if !c.choice {
			return
		}
		ch := want.Choices[0]
		finish := ""
		if ch.FinishReason != nil {
			finish = *ch.FinishReason
		}
		got := [5]string{string(c.content), string(c.text), string(c.reasoningContent), string(c.reasoning), string(c.finish)}
		exp := [5]string{ch.Delta.Content, ch.Text, ch.Delta.ReasoningContent, ch.Delta.Reasoning, finish}
		if got != exp || len(ch.Delta.ToolCalls) > 0 {
			t.Fatalf("scanned %q as content, text, reasoning_content, reasoning, finish_reason %q; encoding/json reads %q and %d tool calls",
				data, got, exp, len(ch.Delta.ToolCalls))
		}
	})
}

// FuzzScanChunkAfter checks that a frame read after another, from what that one left
// (chunkMemo), is read as it is alone: the same fields, or the same refusal, though the
// buffer the first was read from holds other bytes by then.
func FuzzScanChunkAfter(f *testing.F) {
	const head = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",`
	for _, s := range [][2]string{
		{head + `"choices":[{"index":0,"delta":{"content":"a"}}]}`, head + `"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]}`},
		{head + `"choices":[{"delta":{"content":"a"}}]}`, head + `"choices":[{"delta":{"content":"a"}}],"choices":[]}`},
		{head + `"choices":[{"delta":{"content":"a"}}]}`, head + `"choices":[{"delta":{"content":"a"}}]} x`},
		{head + `"choices":[{"delta":{"content":"a"}}]}`, head + `"Choices":[{"delta":{"content":"a"}}]}`},
		{`{"usage":null,"choices":[]}`, `{"usage":null,"choices":[],"usage":null}`},
		{head + `"choices":[]}`, head + `"choices":[{"delta":{"tool_calls":[{"index":0}]}}]}`},
		{head + `"choices":[]}`, `{"id":"chatcmpl-2","choices":[]}`},
		{`{"choices":[]} x`, `{"choices":[{"delta":{"content":"z"}}]}`},
		{head + `"choices":[{"index":0,"delta":{"content":"why "},"logprobs":null,"finish_reason":null}]}`, head + `"choices":[{"index":0,"delta":{"content":"put "},"logprobs":null,"finish_reason":null}]}`},
		{head + `"choices":[{"delta":{"content":"a"}}]}`, head + `"choices":[{"delta":{"content":"a\"b"}}]}`},
		{head + `"choices":[{"delta":{"content":"a"}}]}`, head + `"choices":[{"delta":{"content":"a","b":"c"}}]}`},
		{head + `"choices":[{"delta":{"content":"a"}}]}`, head + `"choices":[{"delta":{"content":"\u00e9\xff"}}]}`},
		{head + `"choices":[{"delta":{"content":"a"}}]}`, head + `"choices":[{"delta":{"content":""}}]}`},
		{head + `"choices":[{"delta":{"content":"a"}}]}`, head + `"choices":[{"delta":{"content":"b"}}]]`},
		{head + `"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}]}`, head + `"choices":[{"delta":{"content":"b"},"finish_reason":"stop"}]}`},
		{head + `"choices":[{"text":"","delta":{"content":"a"}}]}`, head + `"choices":[{"text":"","delta":{"content":"b"}}]}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, prev, data []byte) {
		var pre chunkMemo
		buf := append([]byte(nil), prev...) // a read buffer, which the next read reuses
		scanChunk(buf, &pre)
		for i := range buf {
			buf[i] = 'x'
		}
		got, gotOK := scanChunk(data, &pre)
		want, wantOK := scanChunk(data, nil)
		if gotOK != wantOK || gotOK && fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after %q (memo %q), %q reads %+v, %t; from its start %+v, %t", prev, pre.frame, data, got, gotOK, want, wantOK)
		}
	})
}

// TestScanChunkReadsStreamFrames: the frames a stream is made of are read by the scan, not
// handed to encoding/json.
func TestScanChunkReadsStreamFrames(t *testing.T) {
	for _, s := range []string{
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1796070181,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1796070181,"model":"m","choices":[{"index":0,"delta":{"content":"tok "},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"reasoning_content":"think "}}]}`,
		`{"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`,
	} {
		if _, ok := scanChunk([]byte(s), nil); !ok {
			t.Errorf("%s: not scanned", s)
		}
	}
}

// FuzzScanEvent checks that a Responses event the scan reads is the event encoding/json
// reads: its type, delta and output index, and no item, response or message.
func FuzzScanEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"tok ","logprobs":[]}`,
		`{"type":"response.reasoning_text.delta","output_index":1,"delta":"hmm"}`,
		`{"type":"response.function_call_arguments.delta","output_index":2,"delta":"{\"a\":1}"}`,
		`{"type":"response.output_text.delta","delta":"a\nb"}`,
		`{"type":"response.completed","response":{"id":"r","usage":{"input_tokens":1,"output_tokens":2}}}`,
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","name":"f"}}`,
		`{"type":"error","message":"boom"}`,
		`{"Type":"x","delta":"y"}`, `{"type":"x","type":"y"}`, `{"output_index":1.5}`, `{"output_index":-0}`,
		`{"output_index":99999999999999999999}`, `{"output_index":null,"delta":null}`, `{"delta":5}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		typ, delta, index, ok := scanEvent(data)
		if !ok {
			return
		}
		var want responseEvent
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("scanned %q, which encoding/json refuses: %v", data, err)
		}
		if string(typ) != want.Type || string(delta) != want.Delta || index != want.OutputIndex ||
			want.Item != nil || want.Response != nil || want.Message != "" {
			t.Fatalf("scanned %q as type %q, delta %q, output index %d; encoding/json reads %+v", data, typ, delta, index, want)
		}
	})
}

// BenchmarkTeeResponsesDelta is BenchmarkTeeChunk for a Responses stream's text delta event.
func BenchmarkTeeResponsesDelta(b *testing.B) {
	u, _ := url.Parse("http://upstream")
	p, err := New(Options{Upstream: u, Trace: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	x := &exchange{p: p, conv: &convHash{}, body: &parsedBody{}, api: trace.APIResponses}
	event := []byte("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":5," +
		"\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"tok \",\"logprobs\":[]}\n\n")
	t := &tee{body: chunkBody{event}, x: x, sse: true, wantLen: -1}
	buf := make([]byte, 32<<10)
	b.ReportAllocs()
	b.SetBytes(int64(len(event)))
	for b.Loop() {
		if _, err := t.Read(buf); err != nil {
			b.Fatal(err)
		}
		if x.reply.Len() > 1<<20 {
			x.reply.Reset()
		}
	}
}
