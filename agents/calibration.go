package agents

import "sync"

// Calibration learns how many tokens the server counts per word of generated text, from the
// usage the server reports, so the harness can ask for read steps of a given token size. It is
// shared by all agents and safe for concurrent use.
type Calibration struct {
	mu            sync.Mutex
	tokensPerWord float64
	samples       int
}

// Per-message and per-prompt framing the server adds around text, in tokens (OpenAI-style
// chat templates add a few tokens per message).
const (
	messageFraming = 4
	promptFraming  = 3
)

// NewCalibration starts at one token per word (the vocabulary's words are short).
func NewCalibration() *Calibration { return &Calibration{tokensPerWord: 1} }

// TokensPerWord returns the current estimate.
func (c *Calibration) TokensPerWord() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tokensPerWord
}

// Observe updates the estimate from one request: the words and messages sent and the prompt
// tokens the server counted. The estimate moves by an exponentially weighted average.
func (c *Calibration) Observe(words, messages, promptTokens int) {
	if words <= 0 || promptTokens <= 0 {
		return
	}
	ratio := float64(promptTokens-messages*messageFraming-promptFraming) / float64(words)
	ratio = min(max(ratio, 0.25), 8)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.samples == 0 {
		c.tokensPerWord = ratio
	} else {
		c.tokensPerWord += 0.2 * (ratio - c.tokensPerWord)
	}
	c.samples++
}

// Tokens estimates the prompt tokens of a conversation of words words in messages messages.
func (c *Calibration) Tokens(words, messages int) int {
	return int(float64(words)*c.TokensPerWord()+0.5) + messages*messageFraming + promptFraming
}
