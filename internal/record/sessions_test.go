package record_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/record"
	"github.com/agentsim/agentsim/internal/wire"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
)

// post sends a raw chat request through the proxy with extra headers and returns the status
// and body.
func post(t *testing.T, pr *proxied, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://proxy/v1/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := pr.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestNamedSessions takes the session from X-Session-ID, X-Agent-ID or the user field, in
// that order; two requests of one named session in flight at once go to two lanes, since a
// trace's session is a closed loop.
func TestNamedSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr := startProxy(t, newSim(t), record.Options{})
		body := func(user, text string) string {
			return `{"model":"deepseek-v4-flash","max_tokens":5,"user":"` + user + `","messages":[{"role":"user","content":"` + text + `"}]}`
		}
		post(t, pr, body("u1", "a"), map[string]string{wire.SessionIDHeader: "s-1", wire.AgentIDHeader: "agent-9"})
		post(t, pr, body("u1", "b"), map[string]string{wire.AgentIDHeader: "agent-9"})
		post(t, pr, body("u1", "c"), nil)
		post(t, pr, body("u1", "d"), nil)
		var wg sync.WaitGroup
		for range 2 { // at once, one name
			wg.Go(func() { post(t, pr, body("", "e"), map[string]string{wire.SessionIDHeader: "pair"}) })
		}
		wg.Wait()
		pr.stop(t)
		_, reqs := readTrace(t, pr.buf.String())
		var got []string
		for _, r := range reqs {
			got = append(got, r.Session)
			assert.Nil(t, r.Extends, "unrelated messages extend nothing")
		}
		assert.ElementsMatch(t, []string{"s-1", "agent-9", "u1", "u1", "pair", "pair~2"}, got)
	})
}

// TestInjectUsage asks for the usage frame only with InjectUsage: without it the harness's
// request reaches the server unchanged and the counts are estimated.
func TestInjectUsage(t *testing.T) {
	for _, inject := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			pr := startProxy(t, newSim(t), record.Options{InjectUsage: inject})
			_, body := post(t, pr, `{"model":"deepseek-v4-flash","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, nil)
			pr.stop(t)
			_, reqs := readTrace(t, pr.buf.String())
			require.Len(t, reqs, 1)
			assert.Equal(t, !inject, reqs[0].TokensEstimated, "inject %v", inject)
			assert.Equal(t, inject, strings.Contains(body, `"usage":{`), "inject %v: the harness sees the usage frame only when injected", inject)
		})
	}
}

// TestKeepContent writes the messages and reply beside the trace only when asked.
func TestKeepContent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		content := &syncBuffer{}
		pr := startProxy(t, newSim(t), record.Options{Content: content})
		reply := chat(t, pr.openai(), []openai.ChatCompletionMessage{{Role: "user", Content: "secret plan"}}, false)
		pr.stop(t)
		assert.NotContains(t, pr.buf.String(), "secret plan", "the trace stores no text")
		var line struct {
			Session  string            `json:"session"`
			Messages []json.RawMessage `json:"messages"`
			Reply    string            `json:"reply"`
		}
		require.NoError(t, json.Unmarshal([]byte(content.String()), &line))
		assert.Equal(t, "c1", line.Session)
		assert.Contains(t, string(line.Messages[0]), "secret plan")
		assert.Equal(t, reply, line.Reply)
	})
}

// TestHugeBody sends a body larger than MaxBody: it reaches the server whole and unchanged,
// the server's 413 reaches the harness, and the trace records the request without parsing it.
func TestHugeBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := simtest.NewServer(t, simserver.Options{MaxRequestBytes: 4096})
		pr := startProxy(t, sim, record.Options{MaxBody: 1024})
		huge := `{"model":"deepseek-v4-flash","max_tokens":5,"messages":[{"role":"user","content":"` + strings.Repeat("x", 8000) + `"}]}`
		status, direct := func() (int, string) {
			resp, err := sim.Client().Post(sim.URL+"/v1/chat/completions", "application/json", strings.NewReader(huge))
			require.NoError(t, err)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}()
		pstatus, proxied := post(t, pr, huge, nil)
		assert.Equal(t, http.StatusRequestEntityTooLarge, status)
		assert.Equal(t, status, pstatus)
		assert.Equal(t, direct, proxied)
		// Under the server's limit but over the proxy's: answered, recorded unparsed.
		mid := `{"model":"deepseek-v4-flash","max_tokens":5,"messages":[{"role":"user","content":"` + strings.Repeat("y", 2000) + `"}]}`
		st, _ := post(t, pr, mid, nil)
		assert.Equal(t, http.StatusOK, st)
		pr.stop(t)
		_, reqs := readTrace(t, pr.buf.String())
		require.Len(t, reqs, 2)
		assert.Equal(t, 413, reqs[0].Status)
		assert.Equal(t, 200, reqs[1].Status)
		assert.Empty(t, reqs[1].Model, "an unparsed body names no model")
		assert.False(t, reqs[1].TokensEstimated, "the server's usage still counts")
	})
}
