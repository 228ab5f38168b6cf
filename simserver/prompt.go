package simserver

import "github.com/agentsim/agentsim/internal/engine"

// Prompt accounting, as a chat template does it: every message costs its content's tokens
// plus messageFramingTokens (role and delimiters), and the prompt as a whole
// promptPrimingTokens (the assistant turn it ends with).
const (
	messageFramingTokens = 4
	promptPrimingTokens  = 3
)

// FNV-1a 64-bit parameters.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// Separators keep (role, content) pairs unambiguous inside the running hash.
const (
	fieldSeparator   = 0x1f
	messageSeparator = 0x1e
)

// buildJob turns a request into the engine's job: prompt length, one PrefixBlock per message
// (a cumulative FNV-1a hash over the tool definitions and the role and content's digest of
// every message so far, and the cumulative token count, the definitions' included: a chat template
// renders them into the prompt ahead of the messages), and a key over the whole conversation
// and the output cap.
func buildJob(req *chatRequest) engine.Job {
	prefix := make([]engine.PrefixBlock, len(req.Messages))
	h, tokens := uint64(fnvOffset64), 0
	if t := req.tools; t != nil {
		h, tokens = fnvByte(fnvUint64(h, t.hash), messageSeparator), t.tokens
	}
	for i, m := range req.Messages {
		h = fnvString(h, m.Role)
		h = fnvByte(h, fieldSeparator)
		h = fnvUint64(h, m.Text.hash)
		tokens += messageFramingTokens + m.Text.tokens
		h = fnvByte(h, messageSeparator)
		prefix[i] = engine.PrefixBlock{Hash: h, Tokens: tokens}
	}
	key := fnvUint64(h, uint64(req.MaxTokens))
	return engine.Job{
		PromptTokens: tokens + promptPrimingTokens,
		Prefix:       prefix,
		MaxTokens:    req.MaxTokens,
		IgnoreEOS:    req.IgnoreEOS,
		Effort:       req.Effort,
		Key:          key,
	}
}

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

func fnvByte(h uint64, b byte) uint64 {
	h ^= uint64(b)
	return h * fnvPrime64
}

// inServerTokens converts the job's prompt length and prefix blocks from agentsim's estimate to
// the server's tokens, by the profile's tokenizer_ratio (engine.Profile.Tokens). A planned
// reply's tool calls keep the estimate: their tokens are the pieces the stream sends.
func inServerTokens(job *engine.Job, p *engine.Profile) {
	job.PromptTokens = p.Tokens(job.PromptTokens)
	for i := range job.Prefix {
		job.Prefix[i].Tokens = p.Tokens(job.Prefix[i].Tokens)
	}
}
