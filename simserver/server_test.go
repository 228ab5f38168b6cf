package simserver_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
	"github.com/stretchr/testify/require"
)

// testServer is a simulator served in-process for one test, as commands serve their embedded
// simulator (simserver.Local), with the requests the tests send. Tests of what only a socket
// shows (hostile clients, declared lengths, read timeouts) use simtest.NewServer instead.
type testServer struct {
	*simtest.Server
	t      testing.TB
	clk    *clock.Clock
	client *http.Client
	url    string
}

// startServer runs a server with the options (clock speedup 1 unless set) until the test
// ends. Inside a synctest bubble every goroutine it starts ends before the bubble does.
func startServer(t testing.TB, o simserver.Options) *testServer {
	t.Helper()
	s := simtest.NewLocalServer(t, o)
	return &testServer{Server: s, t: t, clk: s.Clock(), client: s.Client(), url: s.URL}
}

// Engine returns the simulator's engine.
func (ts *testServer) Engine() *engine.Engine { return ts.Sim.Engine() }

// post sends a chat completions body and returns the response (body unread).
func (ts *testServer) post(ctx context.Context, body string, header ...string) *http.Response {
	ts.t.Helper()
	return ts.postTo(ctx, "/v1/chat/completions", body, header...)
}

// postTo sends a body to the path and returns the response (body unread).
func (ts *testServer) postTo(ctx context.Context, path, body string, header ...string) *http.Response {
	ts.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.url+path, strings.NewReader(body))
	require.NoError(ts.t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := ts.client.Do(req)
	require.NoError(ts.t, err)
	return resp
}

// get fetches a path and returns its status and body.
func (ts *testServer) get(path string) (int, string) {
	ts.t.Helper()
	resp, err := ts.client.Get(ts.url + path)
	require.NoError(ts.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(ts.t, err)
	return resp.StatusCode, string(b)
}

// frame is one SSE data frame and the simulated time it arrived.
type frame struct {
	data string
	at   float64 // simulated seconds since the request was sent
}

// readFrames reads SSE data frames until [DONE] (included) or the end of the body; err is
// the read error that ended the body early, if any.
func readFrames(clk *clock.Clock, body io.Reader) (frames []frame, err error) {
	start := clk.Now()
	br := bufio.NewReader(body)
	for {
		line, err := br.ReadString('\n')
		if strings.HasPrefix(line, "data: ") {
			data := strings.TrimSuffix(strings.TrimPrefix(line, "data: "), "\n")
			frames = append(frames, frame{data: data, at: clk.Since(start).Seconds()})
			if data == "[DONE]" {
				return frames, nil
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return frames, nil
			}
			return frames, err
		}
	}
}

// bubble runs f in a synctest bubble.
func bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	synctest.Test(t, f)
}
