package simserver

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/internal/engine"
)

// testCall is a call of read with arguments of five tokens, four bytes each: {"pa th": "cod e/a. go"}.
var testCall = newCall("call_x", "read", []byte(`{"path":"code/a.go"}`))

// TestToolCallFrames pins the bytes of a call's first delta and of its later ones in each
// style.
func TestToolCallFrames(t *testing.T) {
	const head = `data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[`
	const tail = `]},"logprobs":null,"finish_reason":null}]}` + "\n\n"
	enc := newChunkEncoder("chatcmpl-x", 7, []byte(`"m"`), quotedField(FieldReasoning), false, 42)
	text := func(frame []byte) string { return string(frame) }
	for _, tc := range []struct {
		style        engine.ToolCallStyle
		first, later string
	}{
		{engine.ToolCallsOpenAI, `{"index":1,"id":"call_x","type":"function","function":{"name":"read","arguments":""}}`,
			`{"index":1,"function":{"arguments":"{\"pa"}}`},
		{engine.ToolCallsRepeatIDs, `{"index":1,"id":"call_x","type":"function","function":{"name":"read","arguments":""}}`,
			`{"index":1,"id":"call_x","type":"function","function":{"arguments":"{\"pa"}}`},
		{engine.ToolCallsNameEveryChunk, `{"index":1,"id":"call_x","type":"function","function":{"name":"read","arguments":""}}`,
			`{"index":1,"function":{"name":"read","arguments":"{\"pa"}}`},
		{engine.ToolCallsNoID, `{"index":1,"type":"function","function":{"name":"read","arguments":""}}`,
			`{"index":1,"function":{"arguments":"{\"pa"}}`},
	} {
		assert.Equal(t, head+tc.first+tail, text(enc.toolCall(&testCall, 1, 0, 1, tc.style)), "first delta, %s", tc.style)
		assert.Equal(t, head+tc.later+tail, text(enc.toolCall(&testCall, 1, 1, 1, tc.style)), "later delta, %s", tc.style)
	}
	assert.Equal(t, head+`{"index":1,"function":{"arguments":"th\":\"cod"}}`+tail, text(enc.toolCall(&testCall, 1, 2, 2, engine.ToolCallsOpenAI)),
		"a chunk of two tokens")
}

// TestToolCallFrameAllocatesNothing: a tool-call frame, as a content frame, reuses the
// pooled buffer.
func TestToolCallFrameAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop buffers at random")
	}
	enc := newChunkEncoder("chatcmpl-0123456789abcdef01234567", 1700000000, []byte(`"deepseek-v4-flash"`),
		quotedField(FieldReasoningContent), true, 7)
	off := 0
	allocs := testing.AllocsPerRun(100, func() {
		enc.toolCall(&testCall, 0, 1+off%(testCall.tokens()-1), 1, engine.ToolCallsOpenAI)
		enc.release()
		off++
	})
	assert.Zero(t, allocs)
}

// BenchmarkFrame builds one-token frames of content and of a tool call's arguments, as
// chat.completion.chunk frames and as Responses API delta events: a tool-call frame costs
// about what a content frame costs, and an event about what a chunk costs.
func BenchmarkFrame(b *testing.B) {
	enc := newChunkEncoder("chatcmpl-0123456789abcdef01234567", 1700000000, []byte(`"deepseek-v4-flash"`),
		quotedField(FieldReasoningContent), true, 7)
	call := newCall("call_0123456789abcdefghijklmn", "read", []byte(`{"filePath":"code/data/note.go","offset":120,"limit":400}`))
	text, calls := openEventEncoders(&call)
	for _, tc := range []struct {
		name  string
		enc   streamEncoder
		frame func(i int) []byte
	}{
		{"content", enc, func(i int) []byte { return enc.tokens(i, 1, false) }},
		{"tool-call", enc, func(i int) []byte { return enc.toolCall(&call, 0, 1+i%(call.tokens()-1), 1, engine.ToolCallsOpenAI) }},
		{"responses-content", text, func(i int) []byte { return text.tokens(i, 1, false) }},
		{"responses-tool-call", calls, func(i int) []byte {
			return calls.toolCall(&call, 0, 1+i%(call.tokens()-1), 1, engine.ToolCallsOpenAI)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				b.SetBytes(int64(len(tc.frame(i))))
				tc.enc.release()
			}
		})
	}
}

// openEventEncoders returns Responses event encoders whose message, and whose call, has
// begun: their next frames are deltas.
func openEventEncoders(call *plannedCall) (text, calls *eventEncoder) {
	object := func(string, *usage) []byte { return []byte("{}") }
	text = &eventEncoder{out: &responseOutput{suffix: "0123456789abcdef01234567", key: 7}, object: object, msgStatus: statusCompleted}
	text.tokens(0, 1, false)
	text.release()
	reply := &toolReply{calls: []plannedCall{*call}}
	calls = &eventEncoder{out: &responseOutput{suffix: "0123456789abcdef01234567", key: 7, reply: reply}, object: object, msgStatus: statusCompleted}
	calls.toolCall(call, 0, 0, call.nameTokens, engine.ToolCallsOpenAI)
	calls.release()
	return text, calls
}

// TestEventDeltasDoNotAllocate: a Responses delta event, of text or of arguments, is built
// without an allocation, as a chunk is.
func TestEventDeltasDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop buffers at random")
	}
	call := newCall("call_0123456789abcdefghijklmn", "read", []byte(`{"filePath":"code/data/note.go","offset":120,"limit":400}`))
	text, calls := openEventEncoders(&call)
	i := 1
	allocs := testing.AllocsPerRun(100, func() {
		text.tokens(i, 1, false)
		text.release()
		calls.toolCall(&call, 0, 1+i%(call.tokens()-1), 1, engine.ToolCallsOpenAI)
		calls.release()
		i++
	})
	assert.Zero(t, allocs)
}

// TestSeqNumberCountsInDecimal: the sequence numbers an event stream appends are 0, 1, … in
// decimal, across every carry.
func TestSeqNumberCountsInDecimal(t *testing.T) {
	var s seqNumber
	for i := range 100_001 {
		if got, want := string(s.appendNext(nil)), strconv.Itoa(i); got != want {
			t.Fatalf("sequence number %d appended as %q", i, got)
		}
	}
}
