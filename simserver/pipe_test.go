package simserver

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

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/memnet"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testServer is a Server running Serve on an in-memory listener, with an HTTP client dialling it.
type testServer struct {
	*Server
	t      testing.TB
	clk    *clock.Clock
	client *http.Client
	url    string
	stop   func()
}

// startServer runs a server with the options (clock speedup 1 unless set) until the test
// ends. Inside a synctest bubble every goroutine it starts ends before the bubble does.
func startServer(t testing.TB, o Options) *testServer {
	t.Helper()
	if o.Clock == nil {
		var err error
		o.Clock, err = clock.New(1)
		require.NoError(t, err)
	}
	srv, err := New(o)
	require.NoError(t, err)
	ln := memnet.Listen()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	tr := &http.Transport{DialContext: ln.DialContext, DisableCompression: true}
	ts := &testServer{Server: srv, t: t, clk: o.Clock, client: &http.Client{Transport: tr}, url: "http://sim"}
	var once sync.Once
	ts.stop = func() {
		once.Do(func() {
			tr.CloseIdleConnections()
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve() = %v; want nil", err)
			}
			tr.CloseIdleConnections()
		})
	}
	t.Cleanup(ts.stop)
	return ts
}

// post sends a chat completions body and returns the response (body unread).
func (ts *testServer) post(ctx context.Context, body string, header ...string) *http.Response {
	ts.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.url+"/v1/chat/completions", strings.NewReader(body))
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
