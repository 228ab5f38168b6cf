package simserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestChunkEncoderFrames pins the exact bytes of each frame kind, with and without
// include_usage.
func TestChunkEncoderFrames(t *testing.T) {
	const head = `data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":7,"model":"m","choices":[`
	words := string(appendWords(nil, 42, 3, 2))
	for _, usage := range []bool{false, true} {
		tail := "}\n\n"
		if usage {
			tail = `,"usage":null}` + "\n\n"
		}
		enc := newChunkEncoder("chatcmpl-x", 7, []byte(`"m"`), quotedField(FieldReasoning), usage, 42)
		// A frame is valid until the next call: copy it at once, in a call, since Go leaves
		// the order of conversions and calls inside one expression unspecified.
		text := func(frame []byte) string { return string(frame) }
		for _, tc := range []struct {
			name, got, want string
		}{
			{"role", text(enc.opening()),
				head + `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]` + tail},
			{"reasoning", text(enc.tokens(3, 2, true)),
				head + `{"index":0,"delta":{"reasoning":"` + words + `"},"logprobs":null,"finish_reason":null}]` + tail},
			{"content", text(enc.tokens(3, 2, false)),
				head + `{"index":0,"delta":{"content":"` + words + `"},"logprobs":null,"finish_reason":null}]` + tail},
			{"finish", text(enc.finish("length")),
				head + `{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}]` + tail},
		} {
			assert.Equal(t, tc.want, tc.got, "%s frame, include_usage=%v", tc.name, usage)
		}
	}
}

// TestChunkEncoderTokensAllocatesNothing: the per-chunk frame reuses a pooled buffer, given
// back once the frame is written.
func TestChunkEncoderTokensAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop buffers at random")
	}
	enc := newChunkEncoder("chatcmpl-0123456789abcdef01234567", 1700000000, []byte(`"deepseek-v4-flash"`),
		quotedField(FieldReasoningContent), true, 7)
	const chunkTokens = 8 // a coalesced chunk
	from := 0
	allocs := testing.AllocsPerRun(100, func() {
		enc.tokens(from, chunkTokens, from%2 == 0)
		enc.release()
		from += chunkTokens
	})
	assert.Zero(t, allocs, "allocations per tokens frame of %d tokens", chunkTokens)
}
