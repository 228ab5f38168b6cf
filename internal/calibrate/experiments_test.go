package calibrate

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
)

// TestNextTurnFollowsADecodedReply checks the next-turn probe's shape: a fresh first message
// whose reply decodes turnReply tokens, then the conversation with a reply of that length and a
// new user message, asking the first token only.
func TestNextTurnFollowsADecodedReply(t *testing.T) {
	truth, err := engine.LookupProfile("vllm-llama3-8b-h100")
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		r, s := simRunner(t, truth, 3)
		r.turns(context.Background(), []Point{{Exp: ExpTurn, Batch: 1, Prompt: 1024, Output: turnReply, Repeats: 2}})
		require.Len(t, r.d.Points, 1)
		runs := r.d.Points[0].Runs
		require.Len(t, runs, 2)
		for _, run := range runs {
			first, turn := run[0], run[1]
			require.True(t, first.OK(), first.Err)
			require.True(t, turn.OK(), turn.Err)
			assert.Equal(t, turnReply, first.CompletionTokens, "the first message's reply decodes")
			require.Len(t, turn.Request.Messages, 3)
			assert.Equal(t, first.Request.Messages[0], turn.Request.Messages[0], "the turn carries the first message")
			assert.InDelta(t, turnReply, simserver.CountTokens(turn.Request.Messages[1]), 8, "a reply as long as the one decoded")
			assert.Equal(t, ttftOutput, turn.Request.MaxTokens)
			grew := turn.PromptTokens - first.PromptTokens
			assert.InDelta(t, turnReply+turnTokens, grew, 16, "the turn's prompt grows by the reply and the new message")
		}
		assert.EqualValues(t, 2*2, s.Sim.Engine().Stats().Finished, "two repeats of a pair")
	})
}

// TestTurnBesideStreams checks the turn-beside probe's shape against the simulator: the
// conversation's reply decodes while the streams do, its turn carries the first message and
// the reply, every stream is still decoding when the turn's first token comes, and the streams
// are cancelled then rather than run to their end.
func TestTurnBesideStreams(t *testing.T) {
	truth, err := engine.LookupProfile("vllm-llama3-8b-h100")
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		r, _ := simRunner(t, truth, 5)
		r.running, r.step, r.ttft, r.perTok = 4, truth.DecodeBase, 20*time.Millisecond, truth.PrefillPerToken
		r.turnsBeside(context.Background(), []Point{{Exp: ExpTurnBeside, Batch: 7, Prompt: 1024, Output: turnReply, Repeats: 2}})
		require.Len(t, r.d.Points, 1)
		m := r.d.Points[0]
		assert.Equal(t, 3, m.Point.Batch, "as many streams as the server runs beside the conversation")
		require.Equal(t, 2, len(m.Runs), "runs kept; left out: %v", r.d.Skipped)
		for _, run := range m.Runs {
			require.Equal(t, 2+3, len(run))
			first, turn := run[0], run[1]
			require.True(t, first.OK(), first.Err)
			require.True(t, turn.OK(), turn.Err)
			assert.Equal(t, turnReply, first.CompletionTokens)
			require.Len(t, turn.Request.Messages, 3)
			assert.Equal(t, first.Request.Messages[0], turn.Request.Messages[0])
			for _, st := range run[2:] {
				require.NotEmpty(t, st.Chunks)
				assert.True(t, st.Chunks[0].Before(first.Chunks[len(first.Chunks)-1]), "the streams decode while the reply does")
				assert.False(t, st.Chunks[len(st.Chunks)-1].Before(turn.Chunks[0]), "still decoding at the turn's first token")
				assert.Less(t, len(st.Chunks), st.Request.MaxTokens, "cancelled before its end")
			}
			assert.Empty(t, besideKept(run, false))
		}
	})
}

// simRunner is a runner of the experiments against a simulator of truth, started in the
// caller's synctest bubble.
func simRunner(t *testing.T, truth *engine.Profile, seed int64) (*runner, *simtest.Server) {
	s := simtest.NewLocalServer(t, simserver.Options{Profile: truth})
	c := &Client{URL: s.URL, Model: truth.Model, HTTP: s.Client(), Clock: s.Clock()}
	return &runner{o: Options{Client: c, Seed: seed, Budget: time.Hour}, d: &Data{}, start: c.Clock.Now()}, s
}

// TestPrefixSizeReadsTheServersCacheCount: where the server reports its own timings, the
// prefix-size probe's repeats are judged by what its cache supplied, not by their TTFT, which
// on llama-server carries the saving of the fills' idle slots. The figures are one
// calibration's (docs/calibrate.md §1): the repeated-prefix probe's fresh and repeated TTFT
// 153 and 17 ms (a hit under 85 ms), repeats after 1, 2 and 4 fills of 2 048 tokens that took
// 18–57 ms, and after 8 fills 112 and 114 ms, every one computing 7 tokens over 2 054 cached.
func TestPrefixSizeReadsTheServersCacheCount(t *testing.T) {
	start := time.Unix(0, 0)
	at := func(ttft time.Duration, timed *ServerTimings) Obs {
		return Obs{Start: start, Chunks: []time.Time{start.Add(ttft), start.Add(ttft + 4*time.Millisecond)},
			PromptTokens: 2061, CompletionTokens: 2, Server: timed}
	}
	hit := &ServerTimings{Computed: 7, Cached: 2054, Prompt: 14 * time.Millisecond}
	miss := &ServerTimings{Computed: 2056, Cached: 5, Prompt: 150 * time.Millisecond}
	hitBelow := 85 * time.Millisecond

	for _, c := range []struct {
		name   string
		repeat Obs
		want   bool
	}{
		{"cached, however slow", at(112*time.Millisecond, hit), true},
		{"computed, however fast", at(60*time.Millisecond, miss), false},
		{"no timings, fast", at(60*time.Millisecond, nil), true},
		{"no timings, slow", at(112*time.Millisecond, nil), false},
	} {
		got, why := repeatAnswered(&c.repeat, hitBelow)
		assert.Equal(t, c.want, got, "%s: %s", c.name, why)
	}

	// sizeBounds reads the probe the same way: the repeats after 8 fills were answered, so the
	// cache holds at least the prefix and 8 prompts, and no fill bounds it from above.
	prefix := Measured{Point: Point{Exp: ExpPrefix, Batch: 2, Prompt: 2048}, Runs: [][]Obs{
		{at(153*time.Millisecond, &ServerTimings{Computed: 2056, Cached: 5}), at(17*time.Millisecond, hit)}}}
	d := &Data{Points: []Measured{prefix}}
	for _, f := range []struct {
		fill int
		ttft time.Duration
	}{{1, 18 * time.Millisecond}, {2, 31 * time.Millisecond}, {4, 57 * time.Millisecond}, {8, 112 * time.Millisecond}, {8, 114 * time.Millisecond}} {
		d.Points = append(d.Points, Measured{Point: Point{Exp: ExpPrefixSize, Batch: f.fill, Prompt: 2048}, Runs: [][]Obs{
			{at(147*time.Millisecond, &ServerTimings{Computed: 2056, Cached: 5}), at(f.ttft, hit)}}})
	}
	lo, hi, ok := sizeBounds(d, 1)
	require.True(t, ok)
	assert.Equal(t, 2061.0+8*2048, lo, "the prefix and 8 fills")
	assert.Zero(t, hi, "no fill missed")
}
