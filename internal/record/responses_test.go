package record_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/internal/fakeserver"
	"github.com/agentsim/agentsim/internal/memnet"
	"github.com/agentsim/agentsim/internal/record"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/trace"
)

// responsesProxy is a Proxy in front of a fake Responses server, on the in-memory network.
type responsesProxy struct {
	proxy  *record.Proxy
	client *http.Client
	buf    *syncBuffer
}

// startResponsesProxy serves a Proxy of f with opts' Observer and Content.
func startResponsesProxy(t *testing.T, f *fakeserver.Server, opts record.Options) *responsesProxy {
	t.Helper()
	ts, hc := f.StartInMemory(t)
	up, err := url.Parse(ts.URL)
	require.NoError(t, err)
	buf := &syncBuffer{}
	opts.Upstream, opts.Trace, opts.Clock, opts.Transport = up, buf, clock.Real(), ownTransport(hc.Transport)
	p, err := record.New(opts)
	require.NoError(t, err)
	ln := memnet.Listen()
	srv := &http.Server{Handler: p}
	done := make(chan struct{})
	go func() { _ = srv.Serve(ln); close(done) }()
	rp := &responsesProxy{proxy: p, client: ln.Client(), buf: buf}
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
		rp.client.CloseIdleConnections()
		require.NoError(t, p.Close())
	})
	return rp
}

// respReply is what a harness keeps of a reply: its id, its text and its function calls.
type respReply struct {
	id, text string
	calls    []map[string]any // function_call items
}

// send posts one Responses request through the proxy and reads its reply, streamed or not.
func (rp *responsesProxy) send(t *testing.T, body map[string]any, stream bool) respReply {
	t.Helper()
	body["model"], body["stream"] = "m", stream
	b, _ := json.Marshal(body)
	resp, err := rp.client.Post("http://proxy/v1/responses", "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	var obj openai.CreateResponseResponse
	if !stream {
		require.NoError(t, json.Unmarshal(raw, &obj))
	} else {
		for _, line := range strings.Split(string(raw), "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			var ev openai.ResponseStreamEvent
			if ok && json.Unmarshal([]byte(data), &ev) == nil && ev.Type == openai.ResponseStreamEventCompleted {
				obj = *ev.Response
			}
		}
	}
	r := respReply{id: obj.ID}
	for _, it := range obj.Output {
		m := it.(map[string]any)
		switch m["type"] {
		case "function_call":
			r.calls = append(r.calls, map[string]any{"type": "function_call", "call_id": m["call_id"], "name": m["name"], "arguments": m["arguments"]})
		case "message":
			for _, c := range m["content"].([]any) {
				r.text += c.(map[string]any)["text"].(string)
			}
		}
	}
	return r
}

func userItem(text string) map[string]any {
	return map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text}}}
}

func assistantItem(text string) map[string]any {
	return map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": text}}}
}

var respTools = []any{map[string]any{"type": "function", "name": "read", "parameters": map[string]any{"type": "object"}}, map[string]any{"type": "web_search"}}

// TestRecordResponsesConversation records Responses traffic as chat traffic is recorded:
// a Codex-like session named by prompt_cache_key whose whole input is sent each time (its
// function call answered by a function_call_output two seconds later, streamed and not), a
// chain continued by previous_response_id alone, and a conversation named by nothing whose
// session comes from its input items. Every line says api responses.
func TestRecordResponsesConversation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		content := &syncBuffer{}
		rp := startResponsesProxy(t, &fakeserver.Server{Tokens: 4, CallTools: 1}, record.Options{Content: content})
		task := userItem("find the bug")
		r0 := rp.send(t, map[string]any{"instructions": "you are a coding agent", "input": []any{task}, "tools": respTools,
			"prompt_cache_key": "sess-1", "store": false}, true)
		require.Len(t, r0.calls, 1)
		time.Sleep(2 * time.Second)
		out := map[string]any{"type": "function_call_output", "call_id": r0.calls[0]["call_id"], "output": "no match"}
		r1 := rp.send(t, map[string]any{"instructions": "you are a coding agent", "input": []any{task, r0.calls[0], out},
			"tools": respTools, "prompt_cache_key": "sess-1", "store": false}, false)
		require.Empty(t, r1.calls)
		time.Sleep(time.Second)
		rp.send(t, map[string]any{"previous_response_id": r1.id, "input": []any{userItem("now add a test")}}, true)

		hello := userItem("hello")
		b0 := rp.send(t, map[string]any{"input": []any{hello}}, true)
		rp.send(t, map[string]any{"input": []any{hello, assistantItem(b0.text), userItem("more")}}, false)
		rp.proxy.Close()

		_, rows := readTrace(t, rp.buf.String())
		bySession := map[string][]trace.Request{}
		for _, r := range rows {
			assert.Equal(t, trace.APIResponses, r.API)
			assert.Empty(t, r.Error)
			bySession[r.Session] = append(bySession[r.Session], r)
		}
		require.Len(t, bySession, 2, "%v", rows)
		s := bySession["sess-1"]
		require.Len(t, s, 3)
		assert.Equal(t, 1, s[0].ToolCalls)
		assert.Equal(t, []string{"read"}, s[0].ToolNames)
		assert.Equal(t, "tool_calls", s[0].FinishReason)
		assert.Positive(t, s[0].ToolsTokens)
		require.NotNil(t, s[0].ToolS)
		assert.InDelta(t, 2, *s[0].ToolS, 1e-3)
		assert.False(t, s[0].TokensEstimated, "usage from response.completed")
		require.NotNil(t, s[1].Extends)
		assert.Equal(t, 0, *s[1].Extends)
		assert.Equal(t, "stop", s[1].FinishReason)
		require.NotNil(t, s[2].Extends, "previous_response_id continues the chain")
		assert.Equal(t, 1, *s[2].Extends)
		c := bySession["c1"]
		require.Len(t, c, 2)
		require.NotNil(t, c[1].Extends, "the input items begin with the first request's and its reply")
		assert.Equal(t, 0, *c[1].Extends)

		// --keep-content: a Responses request's instructions and input, as sent, and its reply.
		var first struct {
			Session      string          `json:"session"`
			Instructions string          `json:"instructions"`
			Input        json.RawMessage `json:"input"`
			ToolCalls    []any           `json:"tool_calls"`
		}
		require.NoError(t, json.Unmarshal([]byte(strings.SplitN(content.String(), "\n", 2)[0]), &first))
		assert.Equal(t, "sess-1", first.Session)
		assert.Equal(t, "you are a coding agent", first.Instructions)
		assert.JSONEq(t, `[{"type":"message","role":"user","content":[{"type":"input_text","text":"find the bug"}]}]`, string(first.Input))
		assert.Len(t, first.ToolCalls, 1)
	})
}

// endings is an Observer that keeps how each request ended.
type endings struct {
	first   int
	classes []events.Class
}

func (w *endings) Sent(record.Seen)                      {}
func (w *endings) Headers(record.Seen, float64, int)     {}
func (w *endings) FirstToken(record.Seen, float64, bool) { w.first++ }
func (w *endings) Ended(_ record.Seen, _ float64, _ trace.Request, c events.Class, _ int) {
	w.classes = append(w.classes, c)
}

// TestRecordResponsesOutcomes: a whole Responses stream ends as none, with its first token
// seen, and a 400 for a function_call_output that answers no call as http_status with the
// server's message.
func TestRecordResponsesOutcomes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs := &endings{}
		f := &fakeserver.Server{Tokens: 3}
		rp := startResponsesProxy(t, f, record.Options{Observer: obs})
		rp.send(t, map[string]any{"input": "hi"}, true)
		b, _ := json.Marshal(map[string]any{"model": "m", "input": []any{map[string]any{"type": "function_call_output", "call_id": "call_x", "output": "?"}}})
		resp, err := rp.client.Post("http://proxy/v1/responses", "application/json", bytes.NewReader(b))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		rp.proxy.Close()
		_, rows := readTrace(t, rp.buf.String())
		require.Len(t, rows, 2)
		assert.Equal(t, []events.Class{events.ClassNone, events.ClassHTTPStatus}, obs.classes)
		assert.Equal(t, 1, obs.first, "the stream's first token")
		assert.Contains(t, rows[1].Error, "No tool call found for function call output with call_id call_x.")
	})
}

// TestWatchJudgesResponsesStreams: --watch judges a harness speaking the Responses API as it
// judges one speaking chat: healthy while the streams flow, and, once the server freezes with
// every session's stream open, stalled streams — the harness sends nothing while all its
// streams are silent — which agentsim diagnose reads again from the files.
func TestWatchJudgesResponsesStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const sessions = 8
		f := &fakeserver.Server{Tokens: 20, ITL: 100 * time.Millisecond}
		ts, hc := f.StartInMemory(t)
		up, _ := url.Parse(ts.URL)
		clk := clock.Real()
		dir := t.TempDir()
		w, err := record.NewWatcher(record.WatchOptions{Dir: dir, Upstream: ts.URL, TraceFile: "trace.jsonl", Clock: clk, Out: io.Discard})
		require.NoError(t, err)
		p, err := record.New(record.Options{Upstream: up, Trace: io.Discard, Clock: clk, Transport: ownTransport(hc.Transport), Observer: w})
		require.NoError(t, err)
		ln := memnet.Listen()
		srv := &http.Server{Handler: p}
		go func() { _ = srv.Serve(ln) }()

		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for s := range sessions {
			wg.Go(func() { responsesSession(ctx, ln.Client(), s) })
		}
		wg.Go(func() { w.Run(ctx, p) })
		time.Sleep(60 * time.Second)
		healthy := w.Verdict(p.Now())
		f.Freeze()
		time.Sleep(600 * time.Second)
		stuck := w.Verdict(p.Now())
		cancel()
		wg.Wait()
		_ = srv.Close()
		ln.Client().CloseIdleConnections()
		require.NoError(t, p.Close())
		require.NoError(t, w.Close())

		assert.Equal(t, results.Healthy, healthy.Kind, "%s", healthy.Summary)
		assert.Equal(t, results.StalledStreams, stuck.Kind, "%s\n%s", stuck.Summary, strings.Join(stuck.Evidence, "\n"))
		assert.Contains(t, stuck.Summary, fmt.Sprintf("while all %d of its open streams are silent", sessions))
		fromDir, _, err := diagnose.FromDir(dir)
		require.NoError(t, err)
		assert.Equal(t, results.StalledStreams, fromDir.Kind, "agentsim diagnose on the watch directory: %s", fromDir.Summary)
	})
}

// responsesSession is a Codex-like session: its whole input sent each time, a streamed reply
// read to its end, a second of thought, until ctx ends.
func responsesSession(ctx context.Context, c *http.Client, id int) {
	input := []any{userItem(fmt.Sprintf("task %d", id))}
	for ctx.Err() == nil {
		b, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "store": false, "input": input,
			"prompt_cache_key": fmt.Sprintf("s%d", id)})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://proxy/v1/responses", bytes.NewReader(b))
		resp, err := c.Do(req)
		if err != nil {
			return
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var text strings.Builder
		for _, line := range strings.Split(string(raw), "\n") {
			var ev openai.ResponseStreamEvent
			if data, ok := strings.CutPrefix(line, "data: "); ok && json.Unmarshal([]byte(data), &ev) == nil && ev.Type == openai.ResponseStreamEventOutputTextDelta {
				text.WriteString(ev.Delta)
			}
		}
		input = append(input, assistantItem(text.String()), userItem("go on"))
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}
