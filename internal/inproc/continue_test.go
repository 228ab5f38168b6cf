package inproc

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/bubbled"
)

// continuer is a handler that sends its head and hands the rest of the response to a step
// writing "part N\n" once a second, up to parts, then ending; a step that finds the request
// context done sends ended its error and cuts the response. returned is closed when the
// handler has returned; steps counts the calls.
type continuer struct {
	parts    int
	ended    chan error
	returned chan struct{}
	steps    atomic.Int32
}

func newContinuer(parts int) *continuer {
	return &continuer{parts: parts, ended: make(chan error, 1), returned: make(chan struct{})}
}

func (c *continuer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer close(c.returned)
	w.Header().Set("Content-Type", "text/event-stream")
	w.(http.Flusher).Flush()
	n := 0
	ok := Continue(w, func() bool {
		c.steps.Add(1)
		select {
		case <-time.After(time.Second):
		case <-r.Context().Done():
			c.ended <- r.Context().Err()
			panic(http.ErrAbortHandler)
		}
		n++
		_, _ = w.Write([]byte("part " + strconv.Itoa(n) + "\n"))
		w.(http.Flusher).Flush()
		return n < c.parts
	})
	if !ok {
		panic("Continue refused an inproc ResponseWriter")
	}
}

// TestContinueRunsOnReads checks that a continued response is written by its steps as the
// client reads, after the handler has returned, and ends when a step says so.
func TestContinueRunsOnReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newContinuer(3)
		tr := &Transport{Handler: h}
		defer tr.Close()
		start := time.Now()
		resp, err := get(t.Context(), tr)
		require.NoError(t, err)
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		<-h.returned
		time.Sleep(10 * time.Second)
		assert.Zero(t, h.steps.Load(), "no step runs before the client reads")
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, "part 1\npart 2\npart 3\n", string(body))
		assert.EqualValues(t, 3, h.steps.Load())
		assert.Equal(t, 13*time.Second, time.Since(start), "each part a second after the client asked for it")
		require.NoError(t, resp.Body.Close())
	})
}

// TestContinueEndsWithTheRequest checks that a continued response whose client stops reading
// is drained to its end when the client closes the body, when its context ends, or when the
// transport's Context does, and that Close waits for that.
func TestContinueEndsWithTheRequest(t *testing.T) {
	for _, how := range []string{"close", "cancel", "server"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newContinuer(100)
				base, stop := context.WithCancel(context.Background())
				defer stop()
				tr := &Transport{Handler: h, Context: base}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				resp, err := get(ctx, tr)
				require.NoError(t, err)
				buf := make([]byte, 64)
				n, err := resp.Body.Read(buf)
				require.NoError(t, err)
				assert.Equal(t, "part 1\n", string(buf[:n]))
				time.Sleep(time.Minute) // the client stops reading
				switch how {
				case "close":
					require.NoError(t, resp.Body.Close())
				case "cancel":
					cancel()
				case "server":
					stop()
				}
				tr.Close() // returns once the drain has ended the response
				assert.ErrorIs(t, <-h.ended, context.Canceled)
				if how == "server" {
					_, err = io.ReadAll(resp.Body)
					assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "a step's abort cuts the body")
				}
			})
		})
	}
}

// TestContinueOutsideInproc checks that Continue refuses a ResponseWriter of net/http's, or
// any other, and reaches an inproc one through Unwrap.
func TestContinueOutsideInproc(t *testing.T) {
	assert.False(t, Continue(struct{ http.ResponseWriter }{}, func() bool { return false }))
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			wrapped := unwrapper{w}
			assert.True(t, Continue(wrapped, func() bool {
				_, _ = w.Write([]byte("continued"))
				return false
			}))
		})}
		defer tr.Close()
		resp, err := get(t.Context(), tr)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, "continued", string(body))
	})
}

type unwrapper struct{ http.ResponseWriter }

func (u unwrapper) Unwrap() http.ResponseWriter { return u.ResponseWriter }

// TestContinuePanicLogged checks that a step's panic other than http.ErrAbortHandler is logged
// with its stack and cuts the body, as a handler's does.
func TestContinuePanicLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logged strings.Builder
		tr := &Transport{ErrorLog: log.New(&logged, "", 0), Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.(http.Flusher).Flush()
			Continue(w, func() bool { panic("step broke") })
		})}
		defer tr.Close()
		resp, err := get(t.Context(), tr)
		require.NoError(t, err)
		_, err = io.ReadAll(resp.Body)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
		assert.Contains(t, logged.String(), "step broke")
		assert.Contains(t, logged.String(), "goroutine ")
	})
}

// TestContinueStepLargerThanWindow checks that a step writing more than Window at once does
// not wait for its client — the goroutine running it, who reads once it returns.
func TestContinueStepLargerThanWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		big := bytes.Repeat([]byte("x"), Window+FlushBytes+1)
		tr := &Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.(http.Flusher).Flush()
			Continue(w, func() bool {
				_, _ = w.Write(big)
				w.(http.Flusher).Flush()
				return false
			})
		})}
		defer tr.Close()
		resp, err := get(t.Context(), tr)
		require.NoError(t, err)
		n, err := io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		assert.EqualValues(t, len(big), n)
	})
}

// manualCtx is a Transport Context whose cancellation runs the functions registered on it
// (its children's cancellation, the Transport's watch) one at a time, in the order a test
// chooses.
type manualCtx struct {
	mu   sync.Mutex
	done chan struct{}
	err  error
	fns  []func()
}

func (c *manualCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *manualCtx) Done() <-chan struct{}       { return c.done }
func (c *manualCtx) Value(any) any               { return nil }

func (c *manualCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// AfterFunc is what context.AfterFunc and context.WithCancel use on a parent that has it.
func (c *manualCtx) AfterFunc(f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fns = append(c.fns, f)
	return func() bool { return false }
}

// TestContinueDrainedWhenContextEndsMidHandler checks that a response continued after the
// Transport's Context has ended is drained, even when the watch on Context took its list of
// continued responses before that one joined it and the request's own context was not yet
// cancelled: Close must not wait for a client that is not reading.
func TestContinueDrainedWhenContextEndsMidHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &manualCtx{done: make(chan struct{})}
		release := make(chan struct{})
		var handlers atomic.Int32
		tr := &Transport{Context: base, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
			if handlers.Add(1) == 2 {
				<-release // the second handler is still running when the server stops
			}
			Continue(w, func() bool {
				select {
				case <-time.After(time.Second):
				case <-r.Context().Done():
					panic(http.ErrAbortHandler)
				}
				_, _ = w.Write([]byte("part\n"))
				return true
			})
		})}
		respA, err := get(t.Context(), tr)
		require.NoError(t, err)
		synctest.Wait()
		// B's handler runs on its client's goroutine, and RoundTrip returns once it has.
		var respB *http.Response
		gotB := make(chan error, 1)
		go func() {
			var err error
			respB, err = get(t.Context(), tr)
			gotB <- err
		}()
		synctest.Wait()
		// Registered on Context: A's request context, the watch (at A's continuation), B's.
		require.Len(t, base.fns, 3)
		base.mu.Lock()
		base.err = context.Canceled
		close(base.done)
		base.mu.Unlock()
		base.fns[0]() // A's request ends
		base.fns[1]() // the watch drains what is continued: A
		synctest.Wait()
		close(release) // B's handler returns and continues; its request has not ended yet
		synctest.Wait()
		base.fns[2]() // now it has
		closed := make(chan struct{})
		go func() { tr.Close(); close(closed) }()
		time.Sleep(time.Hour)
		synctest.Wait()
		select {
		case <-closed:
		default:
			t.Fatal("Close still waits an hour after Context ended: B's response was never drained")
		}
		require.NoError(t, <-gotB)
		_, err = io.ReadAll(respB.Body)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "B was cut")
		require.NoError(t, respA.Body.Close())
		require.NoError(t, respB.Body.Close())
	})
}

// TestContinueBeforeTheHead checks that a handler may continue before it sends anything: the
// head goes out with the first step that flushes, run by RoundTrip on the client's goroutine,
// so a client waits for it as long as the steps take; a step that cuts the response first
// makes RoundTrip fail as a connection closed without an answer, and a client that gives up
// gets its context's error.
func TestContinueBeforeTheHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var handlerReturned atomic.Bool
		tr := &Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer handlerReturned.Store(true)
			n := 0
			Continue(w, func() bool {
				select {
				case <-time.After(3 * time.Second): // the first token
				case <-r.Context().Done():
					panic(http.ErrAbortHandler)
				}
				if r.URL.Query().Get("cut") != "" {
					panic(http.ErrAbortHandler)
				}
				n++
				if n == 1 {
					w.Header().Set("Content-Type", "text/event-stream")
				}
				_, _ = w.Write([]byte("part " + strconv.Itoa(n) + "\n"))
				w.(http.Flusher).Flush()
				return n < 2
			})
		})}
		defer tr.Close()
		start := time.Now()
		resp, err := get(t.Context(), tr)
		require.NoError(t, err)
		assert.True(t, handlerReturned.Load())
		assert.Equal(t, 3*time.Second, time.Since(start), "the head came with the first part")
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, "part 1\npart 2\n", string(body))
		assert.Equal(t, 6*time.Second, time.Since(start))

		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://any/?cut=1", nil)
		_, err = tr.RoundTrip(req)
		assert.ErrorIs(t, err, io.EOF, "cut before the head")

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err = get(ctx, tr)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "the client gave up before the head")
	})
}

// TestRunsOnTheCaller checks that a Transport runs the handler on the goroutine calling
// RoundTrip — it starts none — and that a handler that does not continue is seen whole when it
// returns.
func TestRunsOnTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var during int
		tr := &Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			during = bubbled.Count()
			w.(http.Flusher).Flush()
			time.Sleep(time.Second)
			_, _ = w.Write([]byte("whole"))
		})}
		defer tr.Close()
		before := bubbled.Count()
		start := time.Now()
		resp, err := get(t.Context(), tr)
		require.NoError(t, err)
		assert.Equal(t, before, during, "no goroutine started for the handler")
		assert.Equal(t, time.Second, time.Since(start), "seen when the handler returned")
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, "whole", string(body))
	})
}

// TestClientGivesUp checks that a client whose context ends gets its context's error however
// the server answers: a handler reading a request body that is slow to come stops (the body
// is closed), a step that answers the cancellation with a response of its own does not make
// it a success, and a request whose context has already ended is not sent.
func TestClientGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var served atomic.Int32
		tr := &Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served.Add(1)
			if r.Method == http.MethodPost {
				_, _ = io.ReadAll(r.Body)
				return
			}
			Continue(w, func() bool {
				select {
				case <-time.After(3 * time.Second):
				case <-r.Context().Done():
					w.WriteHeader(http.StatusServiceUnavailable)
					return false
				}
				_, _ = w.Write([]byte("x"))
				return false
			})
		})}
		defer tr.Close()

		pr, pw := io.Pipe()
		defer pw.Close()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://any/", pr)
		start := time.Now()
		_, err := tr.RoundTrip(req)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "slow request body")
		assert.Equal(t, time.Second, time.Since(start))

		ctx, cancel = context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err = get(ctx, tr)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "answered after the client gave up")

		served.Store(0)
		_, err = get(ctx, tr)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "context ended before the send")
		assert.Zero(t, served.Load(), "not sent")
	})
}

// TestLargeBody checks that a handler writing more than Window without Continue does not wait
// for a reader that can only read once it returns.
func TestLargeBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		big := bytes.Repeat([]byte("y"), 2*Window)
		tr := &Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write(big)
		})}
		defer tr.Close()
		resp, err := get(t.Context(), tr)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Len(t, body, len(big))
	})
}
