package inproc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// get sends a GET through t with ctx.
func get(ctx context.Context, t *Transport) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://any/path?q=1", nil)
	if err != nil {
		panic(err)
	}
	return t.RoundTrip(req)
}

// TestHeadAtFlush checks that the response head arrives when the handler flushes, not when it
// calls WriteHeader, and that body bytes become readable at each flush, not at each write.
func TestHeadAtFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			assert.Equal(t, "/path?q=1", r.RequestURI)
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.Header().Set("X-Late", "ignored") // after WriteHeader: not sent
			part := 0
			Continue(w, func() bool {
				part++
				switch part {
				case 1:
					time.Sleep(time.Second)
					w.(http.Flusher).Flush()
				case 2:
					_, _ = w.Write([]byte("one "))
				case 3:
					time.Sleep(time.Second)
					_, _ = w.Write([]byte("two"))
					w.(http.Flusher).Flush()
				case 4:
					time.Sleep(time.Second)
				}
				return part < 4
			})
		})}
		defer tr.Close()
		start := time.Now()
		resp, err := get(t.Context(), tr)
		require.NoError(t, err)
		assert.Equal(t, time.Second, time.Since(start), "head at the first flush")
		assert.Equal(t, "200 OK", resp.Status)
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		assert.Empty(t, resp.Header.Get("X-Late"))
		assert.EqualValues(t, -1, resp.ContentLength)
		buf := make([]byte, 64)
		n, err := resp.Body.Read(buf)
		require.NoError(t, err)
		assert.Equal(t, "one two", string(buf[:n]), "both writes at the second flush, not the first write")
		assert.Equal(t, 2*time.Second, time.Since(start))
		n, err = resp.Body.Read(buf)
		assert.Equal(t, 0, n)
		assert.Equal(t, io.EOF, err, "the end when the handler returns")
		assert.Equal(t, 3*time.Second, time.Since(start))
		require.NoError(t, resp.Body.Close())
	})
}

// TestHeadWhenHandlerReturns checks a handler that never flushes: the head and whole body go
// out when it returns, with net/http's defaults (200, sniffed Content-Type).
func TestHeadWhenHandlerReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("<html>hi</html>"))
			time.Sleep(time.Second)
		})}
		defer tr.Close()
		start := time.Now()
		resp, err := get(t.Context(), tr)
		require.NoError(t, err)
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, "<html>hi</html>", string(body))
	})
}

// TestLargeWriteFlushes checks that more than FlushBytes of unflushed body go out without a
// Flush, as net/http's 4 KiB buffer does.
func TestLargeWriteFlushes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		big := bytes.Repeat([]byte("x"), FlushBytes+1)
		tr := &Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			wrote := false
			Continue(w, func() bool {
				if !wrote {
					wrote = true
					_, _ = w.Write(big)
					return true
				}
				time.Sleep(time.Second)
				return false
			})
		})}
		defer tr.Close()
		start := time.Now()
		resp, err := get(t.Context(), tr)
		require.NoError(t, err)
		assert.Zero(t, time.Since(start), "sent at the write")
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, big, body)
	})
}

// TestAbort checks the two ways a cut response shows: before the head, RoundTrip fails as a
// connection closed without an answer (io.EOF); after it, the body ends with
// io.ErrUnexpectedEOF after the bytes already flushed.
func TestAbort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := &Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("never flushed"))
			panic(http.ErrAbortHandler)
		})}
		defer before.Close()
		resp, err := get(t.Context(), before)
		require.ErrorIs(t, err, io.EOF)
		assert.Nil(t, resp)

		after := &Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("data: 1\n\n"))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		})}
		defer after.Close()
		resp, err = get(t.Context(), after)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
		assert.Equal(t, "data: 1\n\n", string(body))
	})
}

// TestPanicLogged checks that a panic other than http.ErrAbortHandler is logged with its stack
// and cuts the response.
func TestPanicLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logged bytes.Buffer
		tr := &Transport{ErrorLog: log.New(&logged, "", 0), Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			panic("boom")
		})}
		_, err := get(t.Context(), tr)
		require.ErrorIs(t, err, io.EOF)
		tr.Close()
		assert.Contains(t, logged.String(), "inproc: panic serving GET /path: boom\n")
		assert.Contains(t, logged.String(), "inproc_test.go", "with the stack")
	})
}

// streamer flushes a frame at once and then every second, from steps (Continue), until its
// request ends, and reports the context error it ended with.
func streamer(ended chan<- error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := true
		Continue(w, func() bool {
			if !first {
				select {
				case <-time.After(time.Second):
				case <-r.Context().Done():
					ended <- r.Context().Err()
					return false
				}
			}
			first = false
			if _, err := w.Write([]byte("data: x\n\n")); err != nil {
				ended <- err
				return false
			}
			w.(http.Flusher).Flush()
			return true
		})
	})
}

// TestClientEnds checks the three ways a client ends a request — cancelling its context before
// the head, cancelling it while reading, closing the body — and that each ends the handler's
// request at once.
func TestClientEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ended := make(chan error, 1)
		tr := &Transport{Handler: http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
			ended <- r.Context().Err()
		})}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		_, err := get(ctx, tr)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "before the head")
		assert.ErrorIs(t, <-ended, context.Canceled, "the server's side is cancelled, not given the client's deadline")
		tr.Close()

		tr = &Transport{Handler: streamer(ended)}
		ctx, cancel = context.WithCancel(t.Context())
		resp, err := get(ctx, tr)
		require.NoError(t, err)
		buf := make([]byte, 64)
		_, err = resp.Body.Read(buf)
		require.NoError(t, err)
		cancel()
		assert.ErrorIs(t, <-ended, context.Canceled, "while reading")
		_, err = io.ReadAll(resp.Body)
		assert.ErrorIs(t, err, context.Canceled, "reads fail once the client's context ends")
		tr.Close()

		tr = &Transport{Handler: streamer(ended)}
		resp, err = get(t.Context(), tr)
		require.NoError(t, err)
		time.Sleep(1500 * time.Millisecond)
		require.NoError(t, resp.Body.Close())
		assert.ErrorIs(t, <-ended, context.Canceled, "closing the body")
		_, err = resp.Body.Read(buf)
		assert.ErrorIs(t, err, http.ErrBodyReadAfterClose)
		tr.Close()
	})
}

// TestServerStops checks that cancelling the transport's Context ends the requests in flight,
// that Close waits for their handlers, and that a request after Close fails as a refused
// connection does.
func TestServerStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ended := make(chan error, 1)
		base, stop := context.WithCancel(context.Background())
		tr := &Transport{Handler: streamer(ended), Context: base}
		resp, err := get(t.Context(), tr)
		require.NoError(t, err)
		var body []byte
		var readErr error
		read := make(chan struct{})
		go func() { // the client reads the frames as they come
			body, readErr = io.ReadAll(resp.Body)
			close(read)
		}()
		time.Sleep(2500 * time.Millisecond)
		stop()
		tr.Close()
		assert.ErrorIs(t, <-ended, context.Canceled)
		<-read
		require.NoError(t, readErr, "the handler returned: the body ends")
		assert.Equal(t, strings.Repeat("data: x\n\n", 3), string(body))

		_, err = get(t.Context(), tr)
		var opErr *net.OpError
		require.ErrorAs(t, err, &opErr)
		assert.Equal(t, "dial", opErr.Op)
		assert.ErrorIs(t, err, net.ErrClosed)
	})
}

// TestRequestBodyReachesHandler checks that the handler reads the client's body and that the
// transport closes it, as RoundTrip must.
func TestRequestBodyReachesHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Length", "5")
			_, _ = w.Write(bytes.ToUpper(b))
		})}
		defer tr.Close()
		body := &closeCounter{Reader: strings.NewReader("hello")}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://any/", body)
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		got, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, "HELLO", string(got))
		assert.EqualValues(t, 5, resp.ContentLength)
		tr.Close()
		assert.Equal(t, 1, body.closes)
	})
}

type closeCounter struct {
	io.Reader
	closes int
}

func (c *closeCounter) Close() error { c.closes++; return nil }

// TestClosedBodyFailsWrites checks that the server's writes (a step's, run when the client
// closes the body) fail once the client has closed the body, as writes to a closed connection
// do.
func TestClosedBodyFailsWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var writeErr error
		tr := &Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.(http.Flusher).Flush()
			Continue(w, func() bool {
				_, writeErr = w.Write([]byte("late"))
				return false
			})
		})}
		resp, err := get(t.Context(), tr)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		tr.Close()
		assert.True(t, errors.Is(writeErr, errBodyClosed), "got %v", writeErr)
	})
}
