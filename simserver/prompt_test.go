package simserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func conversation(max int, msgs ...string) *chatRequest {
	req := &chatRequest{MaxTokens: max}
	for i := 0; i+1 < len(msgs); i += 2 {
		req.Messages = append(req.Messages, textMessage(msgs[i], msgs[i+1]))
	}
	return req
}

// withParts is m with the text of parts, each in turn.
func withParts(m chatMessage, parts ...string) chatMessage {
	for _, p := range parts {
		m.Text.add(p)
	}
	return m
}

// TestBuildJob checks prompt accounting and the prefix blocks: a conversation that extends
// another shares its blocks, so the prefix cache finds the earlier turns.
func TestBuildJob(t *testing.T) {
	first := buildJob(conversation(0, "system", "be brief", "user", "hello there"))
	second := buildJob(conversation(0, "system", "be brief", "user", "hello there", "assistant", "ok then", "user", "more"))
	require.Len(t, first.Prefix, 2)
	require.Len(t, second.Prefix, 4)
	assert.Equal(t, first.Prefix, second.Prefix[:2], "shared turns have the same blocks")
	// "be brief" is 1+2 tokens, "hello there" 2+2; each message adds 4.
	assert.Equal(t, []int{4 + 3, 4 + 3 + 4 + 4}, []int{first.Prefix[0].Tokens, first.Prefix[1].Tokens})
	assert.Equal(t, first.Prefix[1].Tokens+3, first.PromptTokens)
	assert.Equal(t, second.Prefix[3].Tokens+3, second.PromptTokens)

	// Role and content are hashed apart: moving text between them changes the hash.
	a := buildJob(conversation(0, "user", "x"))
	b := buildJob(conversation(0, "userx", ""))
	assert.NotEqual(t, a.Prefix[0].Hash, b.Prefix[0].Hash)
	// A content array of one part hashes and counts as its text.
	arr := buildJob(&chatRequest{Messages: []chatMessage{withParts(chatMessage{Role: "user"}, "x")}})
	assert.Equal(t, a.Prefix, arr.Prefix)
	// Parts are told apart: moving text between them changes the hash, not the count.
	ab := buildJob(&chatRequest{Messages: []chatMessage{withParts(chatMessage{Role: "user"}, "ab", "c")}})
	ac := buildJob(&chatRequest{Messages: []chatMessage{withParts(chatMessage{Role: "user"}, "a", "bc")}})
	assert.NotEqual(t, ab.Prefix[0].Hash, ac.Prefix[0].Hash)
	assert.Equal(t, ab.PromptTokens, ac.PromptTokens)

	// The key covers the conversation and the output cap.
	assert.Equal(t, buildJob(conversation(5, "user", "x")).Key, buildJob(conversation(5, "user", "x")).Key)
	assert.NotEqual(t, buildJob(conversation(5, "user", "x")).Key, buildJob(conversation(6, "user", "x")).Key)
	assert.NotEqual(t, buildJob(conversation(5, "user", "x")).Key, buildJob(conversation(5, "user", "y")).Key)
}
