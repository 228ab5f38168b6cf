package agents

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/workloads"
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
	// tools is the learned prompt cost of each tool set requests carried (ObserveTools).
	tools map[*workloads.ToolSet]float64
}

// observation is one request's tokens per word (set nil) or prompt cost of the tool set it
// carried (ObserveTools), and when it was observed.
type observation struct {
	at    time.Time
	set   *workloads.ToolSet
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
		if o := c.pending[n]; o.set != nil {
			c.countTools(o.set, o.ratio)
		} else {
			c.count(o.ratio)
		}
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

// ToolTokens estimates the prompt tokens a request's tool definitions take: what the server's
// usage has shown of set (ObserveTools), else a token for every 4 bytes, or part of them, of
// each run of non-space characters of its JSON.
func (c *Calibration) ToolTokens(set *workloads.ToolSet) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settle()
	if n, ok := c.tools[set]; ok {
		return int(n + 0.5)
	}
	return jsonTokens(set.JSON())
}

// jsonTokens is a token for every 4 bytes, or part of them, of each run of non-space bytes.
func jsonTokens(data []byte) int {
	n, run := 0, 0
	for _, b := range data {
		if b == ' ' || b >= '\t' && b <= '\r' {
			n, run = n+(run+3)/4, 0
			continue
		}
		run++
	}
	return n + (run+3)/4
}

// ObserveTools learns what set costs in a prompt from one request that carried it, with words
// words in messages messages and promptTokens counted by the server: the tokens beyond the
// messages' estimate, by an exponentially weighted average. The words' rate is not updated
// from such a request, whose definitions are not text.
func (c *Calibration) ObserveTools(set *workloads.ToolSet, words, messages, promptTokens int) {
	if promptTokens <= 0 {
		return
	}
	got := max(0, float64(promptTokens-c.Tokens(words, messages)))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.clk == nil {
		c.countTools(set, got)
		return
	}
	c.pending = append(c.pending, observation{at: c.clk.Now(), set: set, ratio: got})
}

// countTools moves the learned prompt cost of set by one observation. c.mu is held.
func (c *Calibration) countTools(set *workloads.ToolSet, got float64) {
	if c.tools == nil {
		c.tools = map[*workloads.ToolSet]float64{}
	}
	if n, ok := c.tools[set]; ok {
		got = n + 0.2*(got-n)
	}
	c.tools[set] = max(0, got)
}
