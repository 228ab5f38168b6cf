package trace_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentsim/agentsim/trace"
)

// Write a two-request session, then read it back one request at a time.
func Example() {
	var sb strings.Builder
	w, err := trace.NewWriter(&sb, trace.Header{Source: "example", Created: "2026-11-30T19:44:13Z", Requests: 2, Sessions: 1})
	if err != nil {
		panic(err)
	}
	first := 0
	_ = w.Write(trace.Request{Session: "agent-1", Seq: 0, TS: 0, PromptTokens: 6000, OutputTokens: 400, E2ES: 21.5})
	_ = w.Write(trace.Request{Session: "agent-1", Seq: 1, TS: 25.5, AfterS: 4, PromptTokens: 7100, OutputTokens: 300, Extends: &first, NewTokens: 700})
	if err := w.Close(); err != nil {
		panic(err)
	}
	fmt.Print(sb.String())

	rd, err := trace.NewReader(strings.NewReader(sb.String()), "example.jsonl")
	if err != nil {
		panic(err)
	}
	for {
		r, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err) // e.g. "example.jsonl:3: seq = 2: …"
			return
		}
		fmt.Printf("%s #%d at %.1f s: %d prompt tokens\n", r.Session, r.Seq, r.TS, r.PromptTokens)
	}
	// Output:
	// {"schema":"agentsim.trace/v1","source":"example","created":"2026-11-30T19:44:13Z","requests":2,"sessions":1}
	// {"session":"agent-1","seq":0,"t_s":0,"prompt_tokens":6000,"output_tokens":400,"e2e_s":21.5}
	// {"session":"agent-1","seq":1,"t_s":25.5,"after_s":4,"prompt_tokens":7100,"output_tokens":300,"extends":0,"new_tokens":700}
	// agent-1 #0 at 0.0 s: 6000 prompt tokens
	// agent-1 #1 at 25.5 s: 7100 prompt tokens
}
