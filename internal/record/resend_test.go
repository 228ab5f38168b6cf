package record_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/record"
	"github.com/agentsim/agentsim/trace"
)

// silentServer is a transport whose server never answers: each request waits until its
// client gives up.
type silentServer struct{}

func (silentServer) RoundTrip(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}

// sentLog is an Observer that keeps what Sent saw.
type sentLog struct {
	mu   sync.Mutex
	sent []record.Seen
}

func (l *sentLog) Sent(r record.Seen) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent = append(l.sent, r)
}
func (l *sentLog) Headers(record.Seen, float64, int)                            {}
func (l *sentLog) FirstToken(record.Seen, float64, bool)                        {}
func (l *sentLog) Ended(record.Seen, float64, trace.Request, events.Class, int) {}

func (l *sentLog) seen() []record.Seen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]record.Seen(nil), l.sent...)
}

// TestResendOvertakingItsFirstAttempt re-sends a request whose first attempt the proxy still
// holds open, as happens when a harness's idle timeout closes the first connection and the
// re-send arrives before the proxy has noticed: the re-send is the first attempt's retry, in
// its session, not a concurrent sibling in a session of its own. Two requests sent at once
// with the same messages stay twins.
func TestResendOvertakingItsFirstAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs := &sentLog{}
		up, err := url.Parse("http://upstream")
		require.NoError(t, err)
		p, err := record.New(record.Options{Upstream: up, Trace: &syncBuffer{}, Transport: silentServer{}, Observer: obs})
		require.NoError(t, err)
		body := `{"model":"m","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"summarise the repository"}]}`
		send := func(ctx context.Context) {
			req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://proxy/v1/chat/completions", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			p.ServeHTTP(httptest.NewRecorder(), req)
		}
		var wg sync.WaitGroup
		time.Sleep(time.Second)
		first, giveUp := context.WithCancel(context.Background())
		wg.Go(func() { send(first) })
		synctest.Wait()
		time.Sleep(30 * time.Second) // the harness's idle timeout
		again, stop := context.WithCancel(context.Background())
		wg.Go(func() { send(again) })
		synctest.Wait()
		require.Len(t, obs.seen(), 1, "the re-send waits for its first attempt's end")
		time.Sleep(5 * time.Millisecond)
		giveUp() // the proxy learns of the first attempt's end only now, 5 ms after the re-send
		synctest.Wait()
		sent := obs.seen()
		require.Len(t, sent, 2)
		assert.InDelta(t, 31.005, sent[1].SentS, 1e-6, "placed as sent when its first attempt ended")
		assert.False(t, sent[0].Retry)
		assert.True(t, sent[1].Retry, "the re-send is the first attempt's retry")
		assert.Equal(t, sent[0].Session, sent[1].Session)
		assert.Equal(t, sent[0].Seq+1, sent[1].Seq)

		// The same messages twice at once: two sessions, no retry, no wait.
		twin1, end1 := context.WithCancel(context.Background())
		twin2, end2 := context.WithCancel(context.Background())
		wg.Go(func() { send(twin1) })
		wg.Go(func() { send(twin2) })
		synctest.Wait()
		sent = obs.seen()
		require.Len(t, sent, 4, "neither twin waits for the other")
		assert.False(t, sent[2].Retry || sent[3].Retry)
		assert.NotEqual(t, sent[2].Session, sent[3].Session)
		stop()
		end1()
		end2()
		wg.Wait()
		require.NoError(t, p.Close())
	})
}
