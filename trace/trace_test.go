package trace_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/trace"
)

// readAll reads every request of the trace at path, returning the first error.
func readAll(t *testing.T, path string) (trace.Header, []trace.Request, error) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rd, err := trace.NewReader(f, filepath.Base(path))
	if err != nil {
		return trace.Header{}, nil, err
	}
	var reqs []trace.Request
	for {
		r, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return rd.Header(), reqs, nil
		}
		if err != nil {
			return rd.Header(), reqs, err
		}
		reqs = append(reqs, r)
	}
}

func TestReadValid(t *testing.T) {
	h, reqs, err := readAll(t, "testdata/valid.jsonl")
	require.NoError(t, err)
	assert.Equal(t, "record:http://127.0.0.1:30000", h.Source)
	assert.Equal(t, 4, h.Requests)
	require.Len(t, reqs, 4)
	assert.Equal(t, "a", reqs[2].Session)
	assert.Equal(t, 1, reqs[2].Seq)
	require.NotNil(t, reqs[2].Extends)
	assert.Equal(t, 0, *reqs[2].Extends)
	assert.Equal(t, 200, reqs[2].NewTokens)
	assert.Equal(t, 3.0, reqs[2].AfterS)
	assert.Equal(t, []uint64{0, 1, 7}, reqs[1].HashIDs)
	assert.True(t, reqs[3].TokensEstimated)
}

// TestReadInvalid maps each testdata/invalid-*.jsonl to its exact message: one file per rule.
func TestReadInvalid(t *testing.T) {
	cases := map[string]string{
		// a send time before the trace's start
		"invalid-negative-t.jsonl": `invalid-negative-t.jsonl:2: t_s = -1: must be between 0 and 1e+09 s`,
		// think time cannot be negative
		"invalid-negative-after.jsonl": `invalid-negative-after.jsonl:3: after_s = -0.5: must be between 0 and 1e+09 s`,
		// a session's second request sent before its first
		"invalid-negative-gap.jsonl": `invalid-negative-gap.jsonl:3: t_s = 4: before the previous request of session "a" (t_s = 5); a session's requests are sent in seq order`,
		// seq 0 then 2
		"invalid-seq-gap.jsonl": `invalid-seq-gap.jsonl:3: seq = 2: session "a" expects seq 1 next (seqs are consecutive, in file order)`,
		// a session starts at seq 0
		"invalid-seq-first.jsonl": `invalid-seq-first.jsonl:2: seq = 1: session "a" has no earlier request, so its first seq must be 0`,
		// extends names the request itself
		"invalid-extends-later.jsonl": `invalid-extends-later.jsonl:3: extends = 1: must name an earlier request of session "a" (seq 0…0)`,
		// extends names no request
		"invalid-extends-unknown.jsonl": `invalid-extends-unknown.jsonl:3: extends = -1: must name an earlier request of session "a" (seq 0…0)`,
		// token counts are never negative (and the relations to them are not reported twice)
		"invalid-negative-tokens.jsonl": `invalid-negative-tokens.jsonl:2: prompt_tokens = -10: must be ≥ 0`,
		// a typo or a field of another format
		"invalid-unknown-field.jsonl": `invalid-unknown-field.jsonl:2: unknown field "latency": not part of agentsim.trace/v1`,
		// a time beyond any trace
		"invalid-range.jsonl": `invalid-range.jsonl:2: t_s = 2e+09: must be between 0 and 1e+09 s`,
		// seq is a whole number
		"invalid-type.jsonl": `invalid-type.jsonl:2: seq = 1.5: must be a whole number`,
		// not JSON
		"invalid-json.jsonl": `invalid-json.jsonl:2: invalid JSON at byte 32: invalid character ',' looking for beginning of object key string`,
		// the header's count disagrees with the body
		"invalid-count.jsonl": `invalid-count.jsonl:1: header says 2 requests, the trace has 1`,
		// a later schema version
		"invalid-schema.jsonl": `invalid-schema.jsonl:1: schema "agentsim.trace/v2" is not supported; this agentsim reads agentsim.trace/v1`,
		// a Mooncake file passed as a trace
		"invalid-no-header.jsonl": `invalid-no-header.jsonl:1: no trace header: the first line must be {"schema":"agentsim.trace/v1",…}; other formats are read by agentsim trace import`,
		// a writer killed mid-line
		"invalid-truncated.jsonl": `invalid-truncated.jsonl:3: truncated last line (39 bytes, no newline): the writer stopped mid-line`,
		// more cached tokens than prompt tokens
		"invalid-cached.jsonl": `invalid-cached.jsonl:2: cached_tokens = 20: must be ≤ prompt_tokens (10)`,
		// a first request has no think time before it
		"invalid-after-first.jsonl": `invalid-after-first.jsonl:2: after_s = 1: must be 0 for seq 0 (a session's first request has no previous one)`,
		// the API is one a request can go through
		"invalid-api.jsonl": `invalid-api.jsonl:2: api = "grpc": must be "chat", "completions", "responses" or absent`,
		// one name per tool call
		"invalid-tool-names.jsonl": `invalid-tool-names.jsonl:2: tool_names has 1 names: must have one per tool call (tool_calls = 2)`,
		// a call count is never negative
		"invalid-tool-calls.jsonl": `invalid-tool-calls.jsonl:2: tool_calls = -1: must be ≥ 0`,
		// nor is the definitions' size
		"invalid-tools-tokens.jsonl": `invalid-tools-tokens.jsonl:2: tools_tokens = -3: must be ≥ 0`,
		// tool time follows a reply's tool calls
		"invalid-tool-s-no-calls.jsonl": `invalid-tool-s-no-calls.jsonl:2: tool_s = 0.5: only allowed with tool_calls (the tool time after a reply's calls)`,
		// the tool time is part of the next request's after_s
		"invalid-tool-s-after.jsonl": `invalid-tool-s-after.jsonl:3: after_s = 2: less than the previous request's tool_s (2.5), which is part of it`,
	}
	files, err := filepath.Glob("testdata/invalid-*.jsonl")
	require.NoError(t, err)
	require.Len(t, files, len(cases), "every invalid-*.jsonl needs its expected message")
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			_, _, err := readAll(t, path)
			require.Error(t, err)
			var le *trace.LineError
			assert.ErrorAs(t, err, &le)
			assert.Equal(t, cases[name], err.Error())
		})
	}
}

func intp(i int) *int { return &i }

func floatp(f float64) *float64 { return &f }

// TestReadTools reads the tool fields, a tool time of 0 included (it is known, not absent).
func TestReadTools(t *testing.T) {
	_, reqs, err := readAll(t, "testdata/valid-tools.jsonl")
	require.NoError(t, err)
	require.Len(t, reqs, 3)
	assert.Equal(t, 5300, reqs[0].ToolsTokens)
	assert.Equal(t, 2, reqs[0].ToolCalls)
	assert.Equal(t, []string{"read", "grep"}, reqs[0].ToolNames)
	assert.Equal(t, floatp(0.75), reqs[0].ToolS)
	assert.Equal(t, floatp(0), reqs[1].ToolS)
	assert.Nil(t, reqs[2].ToolS)
	assert.Zero(t, reqs[2].ToolCalls)
}

// TestWriterRoundTrip writes requests, with and without the tool fields, and reads back the
// same values; a request without tools writes none of them.
func TestWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.Header{Source: "test", Created: "2026-11-30T19:44:13Z", Requests: 4, Sessions: 2})
	require.NoError(t, err)
	want := []trace.Request{
		{Session: "s1", Seq: 0, TS: 0, PromptTokens: 1000, OutputTokens: 100, HashIDs: []uint64{1, 2}},
		{Session: "s1", Seq: 1, TS: 4.25, AfterS: 1.5, PromptTokens: 1300, OutputTokens: 80, Extends: intp(0), NewTokens: 200, E2ES: 3, TTFTS: 0.5, Status: 200},
		{Session: "t", Seq: 0, TS: 1, PromptTokens: 6000, OutputTokens: 30, E2ES: 1, FinishReason: "tool_calls",
			ToolsTokens: 5300, ToolCalls: 2, ToolNames: []string{"read", "grep"}, ToolS: floatp(0.25)},
		{Session: "t", Seq: 1, TS: 2.25, AfterS: 0.25, PromptTokens: 6500, OutputTokens: 90, Extends: intp(0), NewTokens: 470, ToolsTokens: 5300},
	}
	for _, r := range want {
		require.NoError(t, w.Write(r))
	}
	require.NoError(t, w.Close())
	assert.True(t, strings.HasPrefix(buf.String(), `{"schema":"agentsim.trace/v1","source":"test","created":"2026-11-30T19:44:13Z","requests":4,"sessions":2}`+"\n"), buf.String())
	lines := strings.Split(buf.String(), "\n")
	assert.NotContains(t, lines[1]+lines[2], "tool", "a request without tools writes no tool field")
	assert.Contains(t, lines[3], `"tools_tokens":5300,"tool_calls":2,"tool_names":["read","grep"],"tool_s":0.25`)

	rd, err := trace.NewReader(&buf, "roundtrip.jsonl")
	require.NoError(t, err)
	for i := range want {
		got, err := rd.Next()
		require.NoError(t, err)
		assert.Equal(t, want[i], got)
	}
	_, err = rd.Next()
	assert.ErrorIs(t, err, io.EOF)
}

// TestWriterRefuses: the writer applies the reader's checks, so it cannot write a trace the
// reader refuses, and Close checks the header's stated counts.
func TestWriterRefuses(t *testing.T) {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.Header{Source: "test", Requests: 2})
	require.NoError(t, err)
	require.NoError(t, w.Write(trace.Request{Session: "a", PromptTokens: 1}))
	err = w.Write(trace.Request{Session: "a", Seq: 2, PromptTokens: 1})
	assert.EqualError(t, err, `trace request 2 (session "a" seq 2): seq = 2: session "a" expects seq 1 next (seqs are consecutive, in file order)`)
	assert.EqualError(t, w.Close(), "trace header: header says 2 requests, the trace has 1")

	err = w.Write(trace.Request{Session: "b", PromptTokens: 1, ToolNames: []string{"read"}})
	assert.EqualError(t, err, `trace request 2 (session "b" seq 0): tool_names has 1 names: must have one per tool call (tool_calls = 0)`)

	_, err = trace.NewWriter(&buf, trace.Header{AfterSFrom: "start"})
	assert.EqualError(t, err, `trace header: after_s_from = "start": must be "end" or "send"`)
}

// TestReaderStreams: Next returns each request as its line arrives, before the input ends.
func TestReaderStreams(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	go func() {
		// The writer side of the pipe; it ends when the test has read what it needs.
		_, _ = io.WriteString(pw, `{"schema":"agentsim.trace/v1","source":"s","created":""}`+"\n")
		_, _ = io.WriteString(pw, `{"session":"a","seq":0,"t_s":0,"prompt_tokens":1,"output_tokens":1}`+"\n")
	}()
	rd, err := trace.NewReader(pr, "-")
	require.NoError(t, err)
	r, err := rd.Next()
	require.NoError(t, err)
	assert.Equal(t, "a", r.Session)
	pw.Close()
}

// TestLastLineWithoutNewline: a complete last line without its newline is accepted (editors
// drop it); only an incomplete one is a truncation.
func TestLastLineWithoutNewline(t *testing.T) {
	in := `{"schema":"agentsim.trace/v1","source":"s","created":""}` + "\n" + `{"session":"a","seq":0,"t_s":0,"prompt_tokens":1,"output_tokens":1}`
	h, err := trace.Validate(strings.NewReader(in), "x.jsonl")
	require.NoError(t, err)
	assert.Equal(t, "s", h.Source)
}
