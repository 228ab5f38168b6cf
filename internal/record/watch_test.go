//lint:file-ignore SA1019 max_tokens is the field the inference servers agentsim targets read.

package record_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/memnet"
	"github.com/agentsim/agentsim/internal/record"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
)

// thirdParty is a small harness written straight against go-openai, as a user's own would
// be: sessions that each hold a growing conversation, behind a counting semaphore of slots
// requests at once, with think time between a session's requests. It knows nothing of
// agentsim.
type thirdParty struct {
	client    *openai.Client
	sem       chan struct{}
	sessions  int
	context   int           // words of each session's first message
	maxTokens int           // per request
	think     time.Duration // after each reply
	// stuckAfter, when > 0, makes the harness's scheduler stop handing out work once that
	// many requests were sent: its sessions block before the semaphore, for ever.
	stuckAfter int64
	sent       atomic.Int64
}

// run runs every session until ctx ends.
func (h *thirdParty) run(ctx context.Context) {
	var wg sync.WaitGroup
	for s := 0; s < h.sessions; s++ {
		wg.Go(func() { h.session(ctx, s) })
	}
	wg.Wait()
}

func (h *thirdParty) session(ctx context.Context, id int) {
	msgs := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You are a browsing agent."},
		{Role: openai.ChatMessageRoleUser, Content: fmt.Sprintf("agent %d: %s", id, strings.Repeat("page text ", h.context/2))},
	}
	for ctx.Err() == nil {
		if h.stuckAfter > 0 && h.sent.Load() >= h.stuckAfter {
			<-ctx.Done() // the scheduler's bug: no more work is handed out
			return
		}
		select {
		case h.sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		h.sent.Add(1)
		reply, err := h.ask(ctx, msgs)
		<-h.sem
		if err != nil {
			continue
		}
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: reply},
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "tool result: " + strings.Repeat("row ", 50)})
		select {
		case <-time.After(h.think):
		case <-ctx.Done():
		}
	}
}

func (h *thirdParty) ask(ctx context.Context, msgs []openai.ChatCompletionMessage) (string, error) {
	st, err := h.client.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{
		Model: "deepseek-v4-flash", Messages: msgs, Stream: true, MaxTokens: h.maxTokens})
	if err != nil {
		return "", err
	}
	defer st.Close()
	var b strings.Builder
	for {
		r, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return b.String(), nil
		}
		if err != nil {
			return "", err
		}
		for _, c := range r.Choices {
			b.WriteString(c.Delta.Content)
		}
	}
}

// watched is one watched recording: a simulator with faults, the proxy and its watcher, and
// a third-party harness, all in one bubble.
type watched struct {
	dir   string
	proxy *record.Proxy
	w     *record.Watcher
	out   *syncBuffer
}

// watch runs h through a watched proxy in front of a simulator with faults for d of virtual
// time and returns the verdict then; the files stay in the returned dir.
func watch(t *testing.T, faults []string, params []string, h *thirdParty, d time.Duration) (results.Verdict, *watched) {
	t.Helper()
	clk, err := clock.New(1)
	require.NoError(t, err)
	f, err := simserver.ParseFaults(faults, params, 1)
	require.NoError(t, err)
	sim := simtest.NewServer(t, simserver.Options{Clock: clk, Faults: f})
	up, _ := url.Parse(sim.URL)
	wd := &watched{dir: t.TempDir(), out: &syncBuffer{}}
	wd.w, err = record.NewWatcher(record.WatchOptions{Dir: wd.dir, Upstream: sim.URL, TraceFile: "trace.jsonl",
		MetricsURL: sim.URL + "/metrics", Client: sim.Client(), Clock: clk, Out: wd.out})
	require.NoError(t, err)
	wd.proxy, err = record.New(record.Options{Upstream: up, Trace: io.Discard, Clock: clk, Transport: ownTransport(sim.Client().Transport), Observer: wd.w})
	require.NoError(t, err)
	ln := memnet.Listen()
	srv := &http.Server{Handler: wd.proxy}
	go func() { _ = srv.Serve(ln) }()
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL, cfg.HTTPClient = "http://proxy/v1", ln.Client()
	h.client = openai.NewClientWithConfig(cfg)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { h.run(ctx) })
	wg.Go(func() { wd.w.Run(ctx, wd.proxy) })
	time.Sleep(d)
	v := wd.w.Verdict(wd.proxy.Now())
	cancel()
	wg.Wait()
	_ = srv.Close()
	ln.Client().CloseIdleConnections()
	require.NoError(t, wd.proxy.Close())
	require.NoError(t, wd.w.Close())
	return v, wd
}

// TestWatchTellsSlowFromSilentFromStopped watches the same third-party harness in the three
// states a proxy must tell apart, and checks that agentsim diagnose reads the same verdict
// from the files --watch wrote.
func TestWatchTellsSlowFromSilentFromStopped(t *testing.T) {
	cases := []struct {
		name           string
		faults, params []string
		h              *thirdParty
		d              time.Duration
		kind           results.VerdictKind
		summary        []string
	}{
		// A slow server: every request takes minutes, but tokens flow and the harness keeps
		// sending.
		{"slow", []string{"slow-decode"}, []string{"factor=30"},
			&thirdParty{sessions: 16, context: 400, maxTokens: 300, think: 5 * time.Second}, 1500 * time.Second,
			results.Slow, []string{"requests complete but slowly"}},
		// The incident: long contexts wedge; every slot of the harness's semaphore is held by
		// a silent stream, so it sends nothing.
		{"wedge", []string{"long-context-wedge"}, []string{"threshold_tokens=3000", "probability=0.02"},
			&thirdParty{sessions: 30, context: 1500, maxTokens: 200, think: time.Second}, 600 * time.Second,
			results.StalledStreams, []string{"the harness has sent nothing for", "while all 16 of its open streams are silent"}},
		// The harness's own scheduler stops: nothing in flight, the server idle.
		{"stopped", nil, nil,
			&thirdParty{sessions: 30, context: 400, maxTokens: 100, think: time.Second, stuckAfter: 40}, 600 * time.Second,
			results.HarnessStopped, []string{"the harness has sent nothing for", "nothing is in flight and the server is idle"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc.h.sem = make(chan struct{}, 16)
				v, wd := watch(t, tc.faults, tc.params, tc.h, tc.d)
				t.Logf("%s: %s\n%s\nwatch output:\n%s", v.Kind, v.Summary, strings.Join(v.Evidence, "\n"), wd.out.String())
				assert.Equal(t, tc.kind, v.Kind)
				for _, s := range tc.summary {
					assert.Contains(t, v.Summary, s)
				}
				fromDir, _, err := diagnose.FromDir(wd.dir)
				require.NoError(t, err)
				assert.Equal(t, tc.kind, fromDir.Kind, "agentsim diagnose on the watch directory: %s", fromDir.Summary)
			})
		})
	}
}

// TestWatchSamplesAtWallPace: on a server's clock at 1,000×, a 750 ms sample interval is
// 0.75 ms of wall time; the watch samples no more often than every 10 ms of wall time.
func TestWatchSamplesAtWallPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.New(1000)
		require.NoError(t, err)
		dir := t.TempDir()
		w, err := record.NewWatcher(record.WatchOptions{Dir: dir, Upstream: "http://upstream", Clock: clk})
		require.NoError(t, err)
		up, _ := url.Parse("http://upstream")
		p, err := record.New(record.Options{Upstream: up, Trace: io.Discard, Clock: clk, Observer: w})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); w.Run(ctx, p) }()
		time.Sleep(time.Second)
		cancel()
		<-done
		require.NoError(t, p.Close())
		require.NoError(t, w.Close())
		b, err := os.ReadFile(filepath.Join(dir, rundir.Samples))
		require.NoError(t, err)
		n := strings.Count(string(b), "\n")
		assert.True(t, n >= 90 && n <= 101, "%d samples in 1 s of wall time at 1,000×; want 90–101 (one each 10 ms)", n)
	})
}
