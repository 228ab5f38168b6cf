package simserver_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
)

// faultServer starts a server with the default profile and one fault set.
func faultServer(t *testing.T, fault string, params ...string) *testServer {
	t.Helper()
	faults, err := engine.ParseFaults([]string{fault}, params, 1)
	require.NoError(t, err)
	return startServer(t, simserver.Options{Faults: faults, Profile: admissionProfile()})
}

// admissionProfile is the default profile with the head and role chunk sent at admission. The
// fault tests use it to watch a stream from the moment it is admitted, a silent one included;
// what the default profile sends before the first token is TestFirstByteAtToken's.
func admissionProfile() *engine.Profile {
	p := engine.DSV4PD()
	p.FirstByte = engine.FirstByteAtAdmission
	return p
}

// liveStream reads a stream's frames in the background, so a test can look at what has
// arrived so far (after synctest.Wait) while the stream is still open.
type liveStream struct {
	mu     sync.Mutex
	frames []frame
	err    error
	ended  bool
	cancel context.CancelFunc
	resp   *http.Response
}

// openStream sends a streaming chat request and reads it in the background.
func (ts *testServer) openStream(body string) *liveStream {
	ts.t.Helper()
	return ts.openStreamAt("/v1/chat/completions", body)
}

// openStreamAt sends a streaming request to the path and reads it in the background.
func (ts *testServer) openStreamAt(path, body string) *liveStream {
	ts.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp := ts.postTo(ctx, path, body)
	require.Equal(ts.t, http.StatusOK, resp.StatusCode)
	s := &liveStream{cancel: cancel, resp: resp}
	start := ts.clk.Now()
	go func() {
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				s.mu.Lock()
				s.frames = append(s.frames, frame{data: strings.TrimSuffix(data, "\n"), at: ts.clk.Since(start).Seconds()})
				s.mu.Unlock()
			}
			if err != nil {
				s.mu.Lock()
				if !errors.Is(err, io.EOF) {
					s.err = err
				}
				s.ended = true
				s.mu.Unlock()
				return
			}
		}
	}()
	ts.t.Cleanup(cancel)
	return s
}

// snapshot returns the frames so far and whether the stream has ended.
func (s *liveStream) snapshot() ([]frame, bool, error) {
	synctest.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]frame(nil), s.frames...), s.ended, s.err
}

// wait lets d of simulated time pass (the test's clock has speedup 1).
func (ts *testServer) wait(d time.Duration) {
	_ = ts.clk.Sleep(context.Background(), d)
	synctest.Wait()
}

// finish waits for the stream's end, giving the simulation up to limit of simulated time.
func (ts *testServer) finish(s *liveStream, limit time.Duration) ([]frame, error) {
	ts.t.Helper()
	for waited := time.Duration(0); ; waited += time.Second {
		frames, ended, err := s.snapshot()
		if ended {
			return frames, err
		}
		require.Less(ts.t, waited, limit, "stream still open after %s", limit)
		ts.wait(time.Second)
	}
}

const longGen = `,"max_tokens":400,"ignore_eos":true`

// TestFaultErrors429And503 checks injected refusals: status, OpenAI body, Retry-After.
func TestFaultErrors429And503(t *testing.T) {
	for _, tc := range []struct {
		kind       string
		status     int
		typ        string
		retryAfter string
	}{
		{"429", http.StatusTooManyRequests, "RateLimitError", "5"},
		{"503", http.StatusServiceUnavailable, "InternalServerError", ""},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				ts := faultServer(t, "errors", "rate=1", "kind="+tc.kind)
				resp := ts.post(context.Background(), streamBody(""))
				require.Equal(t, tc.status, resp.StatusCode)
				assert.Equal(t, tc.retryAfter, resp.Header.Get("Retry-After"))
				assert.Equal(t, tc.typ, decodeError(t, resp).Error.Type)
			})
		})
	}
}

// TestFaultErrorsRetryAfterRoundsUp checks Retry-After is whole seconds, rounded up.
func TestFaultErrorsRetryAfterRoundsUp(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := faultServer(t, "errors", "rate=1", "kind=429", "retry_after=1500ms")
		resp := ts.post(context.Background(), streamBody(""))
		resp.Body.Close()
		assert.Equal(t, "2", resp.Header.Get("Retry-After"))
	})
}

// TestFaultErrorFrame checks the frame kind: a 200 stream that sends tokens, then the error
// frame, then [DONE], and no finish chunk.
func TestFaultErrorFrame(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := faultServer(t, "errors", "rate=1", "kind=frame")
		resp := ts.post(context.Background(), streamBody(longGen))
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		frames, err := readFrames(ts.clk, resp.Body)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(frames), 3)
		n := len(frames)
		assert.Equal(t, "[DONE]", frames[n-1].data)
		assert.Equal(t, `{"error":{"message":"`+simserver.StreamErrorMessage+`","type":"InternalServerError","param":null,"code":503}}`, frames[n-2].data,
			"the error frame carries the whole OpenAI error object")
		r := decodeStream(t, frames[:n-2], simserver.FieldReasoningContent)
		assert.Empty(t, r.finish, "no finish chunk before an error frame")
		assert.Positive(t, simserver.CountTokens(r.content))
		assert.Less(t, simserver.CountTokens(r.content), 400)

		// Not streaming, the same fault is a 503 after the tokens before it.
		resp = ts.post(context.Background(), `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"x"}]`+longGen+`}`)
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		decodeError(t, resp)
		ts.wait(time.Second)
		assert.Zero(t, ts.Engine().Stats().DecodeRunning, "failed generations are cancelled")
	})
}

// TestFaultDrop checks that a dropped stream ends without a finish chunk or [DONE], as a
// broken connection, and that its slot is freed.
func TestFaultDrop(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := faultServer(t, "drop", "fraction=1")
		resp := ts.post(context.Background(), streamBody(longGen))
		defer resp.Body.Close()
		frames, err := readFrames(ts.clk, resp.Body)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "the chunked body is cut")
		require.NotEmpty(t, frames)
		for _, f := range frames {
			assert.NotEqual(t, "[DONE]", f.data)
			assert.NotContains(t, f.data, `"finish_reason":"`)
		}
		r := decodeStream(t, frames, simserver.FieldReasoningContent)
		assert.Less(t, simserver.CountTokens(r.content), 400)

		_, err = ts.client.Post(ts.url+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"x"}]`+longGen+`}`))
		assert.Error(t, err, "a dropped non-streaming request gets no response")
		ts.wait(time.Second)
		s := ts.Engine().Stats()
		assert.Zero(t, s.DecodeRunning)
		assert.Equal(t, int64(2), s.Aborted)

		// A one-token output is cut too: after its token, before the finish chunk.
		resp = ts.post(context.Background(), streamBody(`,"max_tokens":1,"ignore_eos":true`))
		defer resp.Body.Close()
		frames, err = readFrames(ts.clk, resp.Body)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "a one-token stream is cut as well")
		require.Len(t, frames, 2, "the role chunk and the one token")
		assert.Equal(t, 1, simserver.CountTokens(decodeStream(t, frames, simserver.FieldReasoningContent).content))
	})
}

// TestFaultQueueLimit checks that once max_queued requests wait, the next one gets 503 "The
// request queue is full." (SGLang rejects at len(waiting) >= max_queued_requests).
func TestFaultQueueLimit(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := faultServer(t, "queue-limit", "max_queued=2")
		var codes []int
		for range 5 {
			s := ts.Engine().Stats()
			over := s.PrefillQueued+s.DecodeWaiting >= 2
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			resp := ts.post(ctx, streamBody(longGen))
			codes = append(codes, resp.StatusCode)
			if over {
				require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
				e := decodeError(t, resp)
				assert.Equal(t, "The request queue is full.", e.Error.Message)
			} else {
				require.Equal(t, http.StatusOK, resp.StatusCode)
			}
		}
		assert.Contains(t, codes, http.StatusServiceUnavailable, "codes %v", codes)
	})
}

// TestFaultPrefillPin checks a pinned request: its stream opens (role chunk) and stays
// silent, and prefill_inflight counts it until the client leaves.
func TestFaultPrefillPin(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := faultServer(t, "prefill-pin", "fraction=1")
		s := ts.openStream(streamBody(longGen))
		ts.wait(120 * time.Second)
		frames, ended, _ := s.snapshot()
		assert.False(t, ended, "the stream stays open")
		require.Len(t, frames, 1, "only the role chunk")
		assert.Contains(t, frames[0].data, `"role":"assistant"`)
		assert.Equal(t, 1.0, ts.gaugeValue("prefill_inflight"))
		assert.Equal(t, 1.0, ts.gaugeValue("sglang:num_prefill_inflight_queue_reqs", "engine_type", "prefill"))
		assert.Equal(t, 0.0, ts.gaugeValue("decode_running"))

		s.cancel()
		ts.wait(3 * time.Second) // dsv4-pd's abort_delay is 2 s
		assert.Equal(t, 0.0, ts.gaugeValue("prefill_inflight"), "a client leaving frees the pinned request")
		assert.Equal(t, 1.0, ts.gaugeValue("sglang:num_aborted_requests_total"))
	})
}

// TestFaultStallStream checks a stalled stream: one gap of the fault's duration in simulated
// time, then the rest of the stream.
func TestFaultStallStream(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := faultServer(t, "stall-stream", "fraction=1", "duration=30s")
		resp := ts.post(context.Background(), streamBody(longGen))
		defer resp.Body.Close()
		frames, err := readFrames(ts.clk, resp.Body)
		require.NoError(t, err)
		r := decodeStream(t, frames, simserver.FieldReasoningContent)
		require.True(t, r.done)
		assert.Equal(t, 400, simserver.CountTokens(r.content))
		var gaps []float64
		// From the first token on: before it is the time to first token.
		for i := 2; i < len(frames); i++ {
			if g := frames[i].at - frames[i-1].at; g > 1 {
				gaps = append(gaps, g)
			}
		}
		require.Len(t, gaps, 1, "one stall")
		assert.InDelta(t, 30, gaps[0], 0.1, "stall duration in simulated seconds")
	})
}

// TestFaultSerialize checks that decode runs one request at a time and latency grows with
// concurrency, against the same load on a healthy server.
func TestFaultSerialize(t *testing.T) {
	const n = 4
	run := func(t *testing.T, ts *testServer) (maxRunning int, maxLatency float64) {
		var wg sync.WaitGroup
		lat := make([]float64, n)
		for i := range n {
			wg.Go(func() {
				resp := ts.post(context.Background(), streamBody(`,"max_tokens":300,"ignore_eos":true`))
				defer resp.Body.Close()
				frames, err := readFrames(ts.clk, resp.Body)
				assert.NoError(t, err)
				lat[i] = frames[len(frames)-1].at
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		for {
			select {
			case <-done:
				for _, l := range lat {
					maxLatency = max(maxLatency, l)
				}
				return maxRunning, maxLatency
			default:
			}
			maxRunning = max(maxRunning, int(ts.gaugeValue("decode_running")))
			ts.wait(100 * time.Millisecond)
		}
	}
	var healthy, serialized float64
	bubble(t, func(t *testing.T) {
		running, lat := run(t, startServer(t, simserver.Options{}))
		assert.Equal(t, n, running, "healthy: the batch holds all requests")
		healthy = lat
	})
	bubble(t, func(t *testing.T) {
		running, lat := run(t, faultServer(t, "serialize"))
		assert.Equal(t, 1, running, "serialize: decode_running never above 1")
		serialized = lat
	})
	t.Logf("max latency of %d concurrent: healthy %.2fs, serialized %.2fs", n, healthy, serialized)
	assert.Greater(t, serialized, 2*healthy)
}

// TestFaultSlowDecode checks that decode time (first to last token) grows by the factor.
func TestFaultSlowDecode(t *testing.T) {
	decode := func(ts *testServer) float64 {
		resp := ts.post(context.Background(), streamBody(`,"max_tokens":300,"ignore_eos":true`))
		defer resp.Body.Close()
		frames, err := readFrames(ts.clk, resp.Body)
		require.NoError(t, err)
		return frames[len(frames)-2].at - frames[1].at
	}
	var healthy, slow float64
	bubble(t, func(t *testing.T) { healthy = decode(startServer(t, simserver.Options{})) })
	bubble(t, func(t *testing.T) { slow = decode(faultServer(t, "slow-decode", "factor=3")) })
	assert.InEpsilon(t, 3, slow/healthy, 0.02, "healthy %.3fs, slow %.3fs", healthy, slow)
}

// TestFaultLongContextWedge checks the incident's root cause: a prompt at or above the
// threshold wedges — an open, silent stream that has left the running batch — while a short
// prompt on the same server completes.
func TestFaultLongContextWedge(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := faultServer(t, "long-context-wedge", "threshold_tokens=2000", "probability=1")
		long := `{"model":"deepseek-v4-flash","stream":true,"max_tokens":400,"ignore_eos":true,"messages":[{"role":"user","content":"` +
			strings.Repeat("word ", 2100) + `"}]}`
		wedged := ts.openStream(long)
		ts.wait(20 * time.Second)
		frames, ended, _ := wedged.snapshot()
		assert.False(t, ended, "the wedged stream stays open")
		r := decodeStream(t, frames, simserver.FieldReasoningContent)
		assert.Less(t, simserver.CountTokens(r.content), 400, "the wedged stream stopped short")
		assert.Equal(t, 0.0, ts.gaugeValue("decode_running"), "the wedged request left the batch")
		assert.Equal(t, 1, ts.Engine().Stats().DecodeWedged)
		ts.wait(100 * time.Second)
		after, _, _ := wedged.snapshot()
		assert.Len(t, after, len(frames), "and stays silent")

		short := ts.openStream(streamBody(longGen))
		frames, err := ts.finish(short, 60*time.Second)
		require.NoError(t, err)
		r = decodeStream(t, frames, simserver.FieldReasoningContent)
		assert.True(t, r.done, "a short prompt completes")
		assert.Equal(t, 400, simserver.CountTokens(r.content))

		wedged.cancel()
		ts.wait(3 * time.Second) // dsv4-pd's abort_delay is 2 s
		s := ts.Engine().Stats()
		assert.Zero(t, s.DecodeWedged, "a client leaving frees the wedged request")
		assert.Zero(t, s.KVUsedTokens)
	})
}

// TestClientDisconnectFreesSlot checks that a client going away mid-stream cancels its
// generation after the profile's abort delay (2 s on dsv4-pd, as SGLang): the slot is held
// meanwhile, then decode_running goes back down and the abort is counted.
func TestClientDisconnectFreesSlot(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{})
		s := ts.openStream(streamBody(`,"max_tokens":5000,"ignore_eos":true`))
		ts.wait(3 * time.Second)
		frames, ended, _ := s.snapshot()
		require.False(t, ended)
		require.Greater(t, len(frames), 2, "tokens are flowing")
		assert.Equal(t, 1.0, ts.gaugeValue("decode_running"))

		s.cancel()
		ts.wait(1900 * time.Millisecond)
		assert.Equal(t, 1, ts.Engine().Stats().DecodeRunning, "the slot is held during the abort delay")
		ts.wait(200 * time.Millisecond)
		st := ts.Engine().Stats()
		assert.Zero(t, st.DecodeRunning)
		assert.Zero(t, st.KVUsedTokens)
		assert.Equal(t, int64(1), st.Aborted)
		assert.Equal(t, 0.0, ts.gaugeValue("decode_running"))
		assert.Equal(t, 1.0, ts.gaugeValue("sglang:num_aborted_requests_total"))
		assert.Equal(t, 1.0, ts.gaugeValue("vllm:request_success_total", "finished_reason", "abort"))
	})
}
