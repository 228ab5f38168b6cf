package agents

import (
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/workloads"
)

// scriptAgent is an agent playing turns, with the default calibration (one token a word).
func scriptAgent(turns ...Turn) (*Agent, *scripted) {
	w := workloads.Defaults()
	a := NewAgent(0, &Env{Workload: &w, Calibration: NewCalibration()})
	a.script = &Script{Turns: turns}
	sc := &scripted{s: a.script, convs: map[int]convo{}, keep: map[int]bool{}, grown: map[int]bool{}}
	return a, sc
}

// TestScriptPrompts checks the prompts turns make: the recorded length as the calibration
// counts it, blocks shared between turns that share leading ids, and two continuations of one
// conversation (a retry) that leave each other alone.
func TestScriptPrompts(t *testing.T) {
	a, sc := scriptAgent(
		Turn{PromptTokens: 1300, Extends: -1, Blocks: []uint64{7, 8, 9}, BlockTokens: 512},
		Turn{PromptTokens: 1100, Extends: -1, Blocks: []uint64{7, 8, 5}, BlockTokens: 512},
		Turn{PromptTokens: 400, Extends: -1},
		Turn{PromptTokens: 700, Extends: 2},
		Turn{PromptTokens: 720, Extends: 2},
		Turn{PromptTokens: 700, Extends: 2},
	)
	tokens := func(c convo) int { return a.env.Calibration.Tokens(c.words, len(c.msgs)) }
	b0, b1 := a.prompt(sc, 0, nil), a.prompt(sc, 1, nil)
	assert.Equal(t, 1300, tokens(b0))
	assert.Equal(t, 1100, tokens(b1))
	assert.Equal(t, b0.msgs[:2], b1.msgs[:2], "ids 7 and 8 are the same text in both")
	assert.NotEqual(t, b0.msgs[2], b1.msgs[2])

	c2 := a.prompt(sc, 2, nil)
	assert.Equal(t, 400, tokens(c2))
	conv := grow(c2, "assistant", "the reply", 2)
	conv.msgs = append(make([]openai.ChatCompletionMessage, 0, 8), conv.msgs...) // room to grow in place
	sc.convs[2] = conv
	first := a.prompt(sc, 3, nil)
	firstText := first.msgs[len(first.msgs)-1].Content
	fork := a.prompt(sc, 4, nil)
	assert.Equal(t, firstText, first.msgs[len(first.msgs)-1].Content, "the second continuation did not overwrite the first")
	retry := a.prompt(sc, 5, nil)
	assert.Equal(t, 700, tokens(first))
	assert.Equal(t, 720, tokens(fork))
	assert.Equal(t, first.msgs, retry.msgs, "a retry (same request extended, same length) repeats its prompt")
	assert.Equal(t, sc.convs[2].msgs, first.msgs[:2], "both begin with the conversation and its reply")
	assert.Equal(t, sc.convs[2].msgs, fork.msgs[:2])
}
