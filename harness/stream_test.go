package harness

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/cli/console"
	"github.com/agentsim/agentsim/results"
)

// slowReading returns a client that reads the bodies of chat completions through c, each read
// waiting delay first: a harness that cannot keep up with the streams. /metrics is read at
// full speed.
func slowReading(c *http.Client, delay time.Duration) *http.Client {
	slow := *c
	slow.Transport = slowTransport{next: c.Transport, delay: delay}
	return &slow
}

type slowTransport struct {
	next  http.RoundTripper
	delay time.Duration
}

func (s slowTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(req)
	if err == nil && strings.HasPrefix(req.URL.Path, "/v1/chat/") {
		resp.Body = slowBody{ReadCloser: resp.Body, delay: s.delay}
	}
	return resp, err
}

type slowBody struct {
	io.ReadCloser
	delay time.Duration
}

func (b slowBody) Read(p []byte) (int, error) {
	time.Sleep(b.delay) // virtual time: the test runs in a bubble
	return b.ReadCloser.Read(p)
}

// streamWarnings returns the warnings about stream chunking.
func streamWarnings(res *results.Results) []string {
	var out []string
	for _, w := range res.Warnings {
		if strings.HasPrefix(w, "stream chunking: ") {
			out = append(out, w)
		}
	}
	return out
}

// liveStreamWarnings returns the stream chunking warnings the run gave while it ran.
func liveStreamWarnings(t *testing.T, dir string) []string {
	t.Helper()
	evs, err := events.ReadFile[events.Event](dir + "/events.jsonl")
	require.NoError(t, err)
	var out []string
	for _, e := range evs {
		if e.Kind == events.Warning && e.Agent < 0 && strings.HasPrefix(e.Message, "warning: stream chunking: ") {
			out = append(out, e.Message)
		}
	}
	return out
}

// TestStreamFiguresOnSimulator checks results.json's stream figures on a simulator that keeps
// up, at the profile's stream_interval of 1: one token per token frame, as the harness
// measured it and as the server counted it; frames that are the requests' own chunks; rates
// that are frames over the run's simulated and wall seconds; and no warning.
func TestStreamFiguresOnSimulator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, dir := runSim(t, t.Context(), simCase{workload: "smoke", speedup: 20})
		require.Equal(t, res.Requests.Sent, res.Requests.OK, "every request ok: %+v", res.Requests)
		evs, err := events.ReadFile[events.Event](dir + "/events.jsonl")
		require.NoError(t, err)
		var chunks, tokenChunks, tokens int64
		for _, e := range evs {
			if e.Kind.Terminal() {
				chunks += int64(e.Chunks)
				tokenChunks += int64(e.TokenChunks)
				tokens += int64(e.CompletionTokens)
			}
		}
		st := res.Stream
		assert.Equal(t, chunks, st.Frames, "frames: the terminal events' chunks")
		assert.Equal(t, tokenChunks, st.TokenFrames, "token frames: the done events' token_chunks")
		assert.Equal(t, int64(res.Requests.OK)*4, st.Frames-st.TokenFrames,
			"four frames a request carry no token: role, finish, usage, [DONE]")
		assert.Equal(t, 1.0, st.TokensPerChunk, "%d tokens over %d token frames", tokens, tokenChunks)
		assert.InDelta(t, float64(st.Frames)/res.SimSeconds, st.FramesPerSecond, 1e-9, "frames per simulated second")
		assert.InDelta(t, float64(st.Frames)/res.WallSeconds, st.FramesPerWallSecond, 1e-9, "frames per wall second")
		assert.InDelta(t, 20*st.FramesPerSecond, st.FramesPerWallSecond, 0.05*20*st.FramesPerSecond,
			"at --speedup 20 a wall second holds 20 simulated ones")

		require.NotNil(t, st.Server, "the simulator's own chunk count")
		assert.Equal(t, results.ServerStream{Chunks: tokenChunks, Tokens: tokens, TokensPerChunk: 1, StreamInterval: 1, CoalesceTokens: 1},
			*st.Server, "the server wrote every token frame the harness received, one token each, none behind")
		assert.Empty(t, streamWarnings(res))
		assert.Empty(t, liveStreamWarnings(t, dir))

		onDisk, err := results.Read(dir)
		require.NoError(t, err)
		assert.Equal(t, st, onDisk.Stream, "results.json's stream")
		var out bytes.Buffer
		console.PrintSummary(&out, res, dir)
		assert.Regexp(t, `(?m)^  stream +\d+ frames, [\d.,]+/s simulated, [\d.,]+/s wall; 1\.00 tokens per chunk; server: \d+ chunks of 1\.00 tokens, 0 behind, 0 coalesced \(stream_interval 1 token, coalesce limit 1 token\)$`,
			out.String())
	})
}

// TestStreamBehindIsCounted checks that a harness that cannot read its streams as fast as the
// simulator writes them gets the chunks written behind the engine counted, in results.json and
// the summary's stream line, still one token a chunk, without a stream warning: how late they
// went out is the simulator's lag, which is measured beside it.
func TestStreamBehindIsCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, dir := runSim(t, t.Context(), simCase{workload: "smoke", speedup: 20, readDelay: 5 * time.Millisecond})
		srv := res.Stream.Server
		require.NotNil(t, srv)
		assert.Positive(t, srv.Behind, "chunks written behind: %+v", *srv)
		assert.Zero(t, srv.Coalesced, "the profile does not coalesce")
		assert.Equal(t, 1.0, res.Stream.TokensPerChunk, "still one token a chunk, only late")
		assert.Empty(t, streamWarnings(res), "warnings %q", res.Warnings)
		assert.Empty(t, liveStreamWarnings(t, dir))
		require.NotNil(t, res.Harness.SimulatorLag)
		assert.Positive(t, res.Harness.SimulatorLag.Max, "the lateness is the simulator's lag")
		var out bytes.Buffer
		console.PrintSummary(&out, res, dir)
		assert.Regexp(t, `(?m)^  stream +.* server: [\d,]+ chunks of 1\.00 tokens, [1-9][\d,]* behind, 0 coalesced`, out.String())
	})
}

// TestStreamCoalescingAskedIsReported checks that a profile that asks for coalescing
// (stream_coalesce_tokens above stream_interval, as raw-throughput runs do) gets its
// coalesced chunks counted and its larger chunks measured, without a warning: the deviation
// was asked for.
func TestStreamCoalescingAskedIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, dir := runSim(t, t.Context(), simCase{workload: "smoke", speedup: 20, coalesce: 8, readDelay: 5 * time.Millisecond})
		srv := res.Stream.Server
		require.NotNil(t, srv)
		assert.Equal(t, []int{1, 8}, []int{srv.StreamInterval, srv.CoalesceTokens}, "stream_interval, coalesce limit")
		assert.Positive(t, srv.Coalesced, "coalesced chunks: %+v", *srv)
		assert.Greater(t, res.Stream.TokensPerChunk, 1.0, "the harness measured the larger chunks")
		assert.Greater(t, srv.TokensPerChunk, 1.0, "the server counted them")
		assert.Empty(t, streamWarnings(res), "coalescing was asked for")
		assert.Empty(t, liveStreamWarnings(t, dir), "coalescing was asked for")
	})
}
