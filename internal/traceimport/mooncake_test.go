package traceimport

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/trace"
)

func importFile(t *testing.T, path string, imp func(f *os.File, name string) (*Trace, error)) (*Trace, error) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	return imp(f, filepath.Base(path))
}

func mooncake(f *os.File, name string) (*Trace, error) { return Mooncake(f, name) }

// row is the part of a request the session inference decides.
type row struct {
	Session string
	Seq     int
	TS      float64
	AfterS  float64
	Extends int // -1: none
	New     int
}

func rows(reqs []trace.Request) []row {
	var out []row
	for _, r := range reqs {
		e := -1
		if r.Extends != nil {
			e = *r.Extends
		}
		out = append(out, row{r.Session, r.Seq, r.TS, r.AfterS, e, r.NewTokens})
	}
	return out
}

// TestMooncakeSessions: two conversations behind one system prompt (blocks 0 and 1), and a
// request that is only the system prompt.
func TestMooncakeSessions(t *testing.T) {
	tr, err := importFile(t, "testdata/mooncake-sessions.jsonl", mooncake)
	require.NoError(t, err)
	assert.Equal(t, []row{
		{"s1", 0, 0, 0, -1, 0},
		{"s2", 0, 0.5, 0, -1, 0},
		{"s1", 1, 9, 9, 0, 500},     // begins with s1#0's complete blocks [0 1 2]
		{"s2", 1, 12, 11.5, 0, 400}, // begins with s2#0's [0 1 10]
		{"s3", 0, 15, 0, -1, 0},     // only the system prompt: links nothing
		{"s1", 2, 20, 11, 1, 650},   // the longest match: s1#1's [0 1 2 4 5], not s1#0's
		{"s4", 0, 21, 0, -1, 0},     // begins with s1#1 too, but s1#2 already continued it: a fork
	}, rows(tr.Requests))
	assert.Equal(t, trace.Header{Schema: trace.Schema, Source: "mooncake:mooncake-sessions.jsonl", Requests: 7, Sessions: 4, AfterSFrom: "send"}, tr.Header)
	assert.Equal(t, []string{"sessions: 4 from 7 requests, inferred from shared leading hash_ids (system prompt: the first 2 blocks, opened by 100 % of requests, link no sessions); after_s counts from the previous request's send: Mooncake has no end times"}, tr.Notes)
}

// TestMooncakeOneConversation: a trace of one conversation has no system prompt to discount,
// though its first request's blocks open every request.
func TestMooncakeOneConversation(t *testing.T) {
	tr, err := importFile(t, "testdata/mooncake-one-conversation.jsonl", mooncake)
	require.NoError(t, err)
	assert.Equal(t, []row{{"s1", 0, 0, 0, -1, 0}, {"s1", 1, 30, 30, 0, 800}}, rows(tr.Requests))
}

// TestMooncakeInvalid maps each bad Mooncake file to its exact message.
func TestMooncakeInvalid(t *testing.T) {
	for file, want := range map[string]string{
		"mooncake-invalid-missing.jsonl":  "mooncake-invalid-missing.jsonl:2: a Mooncake line has timestamp (ms), input_length and output_length; missing output_length",
		"mooncake-invalid-negative.jsonl": "mooncake-invalid-negative.jsonl:1: timestamp = -3: must be between 0 and 1e+12 ms",
		"mooncake-invalid-type.jsonl":     "mooncake-invalid-type.jsonl:1: not a Mooncake line: input_length is a JSON string: must be a whole number",
	} {
		_, err := importFile(t, "testdata/"+file, mooncake)
		assert.EqualError(t, err, want, file)
	}
}

// TestMooncakeLongLines: lines of more ids than the parser's arena has room for keep their
// ids, and do not share them with the next line.
func TestMooncakeLongLines(t *testing.T) {
	var b strings.Builder
	var want [][]uint64
	for line := 0; line < 40; line++ {
		ids := make([]uint64, 300+line*97)
		for i := range ids {
			ids[i] = uint64(line*100000 + i)
		}
		want = append(want, ids)
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": 1, "hash_ids": %s}`+"\n", line, len(ids)*BlockTokens, strings.ReplaceAll(fmt.Sprint(ids), " ", ","))
	}
	tr, err := Mooncake(strings.NewReader(b.String()), "long.jsonl")
	require.NoError(t, err)
	for i, r := range tr.Requests {
		assert.Equal(t, want[i], r.HashIDs, "line %d", i+1)
	}
}
