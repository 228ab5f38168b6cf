// Package calibrate fits a simulator profile to a real OpenAI-compatible server by designed
// experiments (docs/calibrate.md): a concurrency sweep at short prompts (the decode step's
// cost per sequence), fixed batches at growing context (its cost per KV token, and per batch ×
// context token), prompt-length steps (the prefill cost, its quadratic term, TTFT), a
// repeated-prefix probe (the prefix cache), next turns of conversations (a cached context's
// cost to a turn's prefill, where the server reports its own prompt time), next turns beside
// decoding streams (what the other requests' KV in a unified pool costs it) and after streams
// that ended (whether their KV stays in the pool), a prefix-size probe (its size), the largest
// batch the server runs (max_running), an interference probe (which engine kind the server is,
// with the context experiment's first tokens) and a KV probe (its pool). Every
// point sends fresh prompts, so a prompt cache cannot answer, and is repeated to measure the
// server's own spread. Check runs one workload against the server and its twin.
package calibrate

import (
	"fmt"

	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/workloads"
)

// The experiments, by name.
const (
	ExpBatch        = "largest-batch"
	ExpConcurrency  = "concurrency"
	ExpContext      = "context"
	ExpPrompt       = "prompt-length"
	ExpPrefix       = "repeated-prefix"
	ExpTurn         = "next-turn"
	ExpTurnBeside   = "turn-beside-streams"
	ExpTurnIdle     = "turn-after-streams"
	ExpPrefixSize   = "prefix-size"
	ExpInterference = "interference"
	ExpKV           = "kv-pool"
	// ExpRecorded is the traffic of recorded runs (FitRuns), not a designed experiment.
	ExpRecorded = "recorded"
)

// Point is one designed measurement: Batch requests sent at once, each a fresh prompt of
// Prompt tokens (agentsim's estimate) asking for Output tokens, repeated Repeats times.
type Point struct {
	// Exp names the experiment the point belongs to.
	Exp string
	// Batch is how many requests go at once.
	Batch int
	// Prompt is each prompt's length, agentsim's estimate; Output each output, server tokens.
	Prompt, Output int
	// Repeats is how many times the point runs, each time with fresh prompts.
	Repeats int
}

// String names the point as progress lines show it.
func (p Point) String() string {
	return fmt.Sprintf("%s B=%d prompt=%d out=%d", p.Exp, p.Batch, p.Prompt, p.Output)
}

// framing is the chat template's cost agentsim's estimate counts: a message's framing and the
// prompt's priming (simserver's messageFramingTokens and promptPrimingTokens).
const (
	messageFraming = 4
	promptPriming  = 3
)

// prompt builds the fresh prompt number n of a run: words of workloads.Text led by a word
// unique to n, so no two prompts share a prefix a cache could answer.
func prompt(seed int64, n, tokens int) (string, int) {
	words := max(tokens-messageFraming-promptPriming, 1)
	text := workloads.Text(seed, n, 0, "calibrate", words)
	text = fmt.Sprintf("q%d %s", n, text)
	return text, simserver.CountTokens(text) + messageFraming + promptPriming
}
