package agents

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/agentsim/agentsim/clock"
)

// Calibration learns how many tokens the server counts per word of generated text, from the
// usage the server reports, so the harness can ask for read steps of a given token size. It is
// shared by all agents and safe for concurrent use.
//
// On a clock (NewCalibrationOn), an observation counts from the next instant on: every agent
// that reads the estimate at one simulated instant reads the same value, whichever of them the
// scheduler ran first, and the observations of one instant are taken in the order of their
// values. Several agents' replies often end at the same instant (short tool-call replies do),
// and without this the same seed would not give the same run in virtual time (README,
// "Determinism").
type Calibration struct {
	mu            sync.Mutex
	tokensPerWord float64
	samples       int
	clk           *clock.Clock  // nil: an observation counts at once
	pending       []observation // with clk: the observations not yet counted
}

// observation is one request's tokens per word, and when it was observed.
type observation struct {
	at    time.Time
	ratio float64
}

// Per-message and per-prompt framing the server adds around text, in tokens (OpenAI-style
// chat templates add a few tokens per message).
const (
	messageFraming = 4
	promptFraming  = 3
)

// NewCalibration starts at one token per word (the vocabulary's words are short); each
// observation counts at once.
func NewCalibration() *Calibration { return &Calibration{tokensPerWord: 1} }

// NewCalibrationOn is NewCalibration for a run on clk: an observation counts from the next
// instant of clk on.
func NewCalibrationOn(clk *clock.Clock) *Calibration {
	return &Calibration{tokensPerWord: 1, clk: clk}
}

// TokensPerWord returns the current estimate.
func (c *Calibration) TokensPerWord() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settle()
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
	if c.clk == nil {
		c.count(ratio)
		return
	}
	c.pending = append(c.pending, observation{at: c.clk.Now(), ratio: ratio})
}

// settle counts the pending observations made before the clock's present instant, in the
// order of their instants and, within one, of their values. c.mu is held.
func (c *Calibration) settle() {
	if len(c.pending) == 0 {
		return
	}
	now := c.clk.Now()
	slices.SortFunc(c.pending, func(a, b observation) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.ratio, b.ratio))
	})
	n := 0
	for ; n < len(c.pending) && c.pending[n].at.Before(now); n++ {
		c.count(c.pending[n].ratio)
	}
	c.pending = append(c.pending[:0], c.pending[n:]...)
}

// count moves the estimate by one observation. c.mu is held.
func (c *Calibration) count(ratio float64) {
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
