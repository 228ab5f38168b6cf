package simserver

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTokenEnds: the pieces of a text put together are the text, and there are as many as
// CountTokens counts.
func TestTokenEnds(t *testing.T) {
	for _, text := range []string{`{}`, `{"a":"the of and"}`, `{"filePath":"code/data/node.go","limit":40}`, ` lead  and trail `, `abcdefghi`} {
		ends := tokenEnds([]byte(text))
		var got strings.Builder
		start := 0
		for _, e := range ends {
			require.Greater(t, e, start, "%q: empty piece", text)
			got.WriteString(text[start:e])
			start = e
		}
		assert.Equal(t, text, got.String())
		assert.Equal(t, CountTokens(text), len(ends), "tokens of %q", text)
	}
}

// TestStepsDrawnOncePerUserRequest: the tool steps of a user request are drawn from its first
// messages and its place among the conversation's user messages, so every request of it draws
// the same, whatever the tool steps appended; the next user request draws anew; the steps
// taken count the replies with calls since the last user message.
func TestStepsDrawnOncePerUserRequest(t *testing.T) {
	s, err := New(Options{})
	require.NoError(t, err)
	agent := &s.opts.Profile.Agent
	conv := []chatMessage{textMessage("system", "be an agent"), textMessage("user", "fix it")}
	first := s.drawSteps(conv, "", agent)
	for i := range 5 {
		conv = append(conv, withParts(chatMessage{Role: "assistant", Calls: 1, CallIDs: []string{"c"}}, "read", "{}"),
			withParts(chatMessage{Role: "tool", CallID: "c"}, "result"))
		assert.Equal(t, first, s.drawSteps(conv, "", agent), "after %d tool steps", i+1)
		assert.Equal(t, i+1, toolSteps(conv))
	}
	draws := map[int]bool{}
	for range 20 {
		conv = append(conv, textMessage("assistant", "done"), textMessage("user", "more"))
		assert.Zero(t, toolSteps(conv), "a new user request has had no tool steps")
		draws[s.drawSteps(conv, "", agent)] = true
	}
	assert.Greater(t, len(draws), 3, "each user request draws its own")
}
