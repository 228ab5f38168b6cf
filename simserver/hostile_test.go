package simserver_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
)

// hostileConns is how many hostile clients each test opens at once.
const hostileConns = 200

// maxHeapGrowth is the most the server's heap may grow while it holds hostileConns hostile
// connections.
const maxHeapGrowth = 64 << 20

// These tests use real loopback sockets and wall time: the protections they check are
// network-level (socket deadlines), which a synctest bubble's in-memory pipes do not model.

// openHostile dials the server n times and sends each connection the head of a chat request
// that declares declared body bytes, followed by the first byte of the body.
func openHostile(t *testing.T, addr string, n int, declared int) []net.Conn {
	t.Helper()
	head := fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\n\r\n{", declared)
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		conns = append(conns, c)
		_, err = io.WriteString(c, head)
		require.NoError(t, err)
	}
	return conns
}

// heapInUse is the heap in use after a full collection, in bytes.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// waitGoroutines waits, up to a hang guard, until at least n goroutines run. Callers leave a
// margin for goroutines of earlier tests that end meanwhile (idle connections closing).
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines running; want at least %d", runtime.NumGoroutine(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func getHealth(t *testing.T, url string) int {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(url + "/health")
	require.NoError(t, err, "/health answers while hostile clients hold connections")
	resp.Body.Close()
	return resp.StatusCode
}

// TestDeclaredLengthReservesNothing opens 200 connections that each declare a body of
// 8 388 000 bytes (just under the 8 MiB limit) and send one byte: the server's heap grows by
// less than 64 MiB while it holds them all, and /health still answers.
func TestDeclaredLengthReservesNothing(t *testing.T) {
	ts := simtest.NewLoopbackServer(t, simserver.Options{ReadTimeout: time.Minute})
	require.Equal(t, http.StatusOK, getHealth(t, ts.URL))
	before := heapInUse()
	goroutines := runtime.NumGoroutine()

	conns := openHostile(t, ts.Listener.Addr().String(), hostileConns, 8_388_000)
	// Each connection has a server goroutine blocked reading its body.
	waitGoroutines(t, goroutines+hostileConns-hostileConns/20)
	during := heapInUse()
	growth := int64(during) - int64(before)
	t.Logf("heap in use: %d B before, %d B holding %d connections (growth %d B, %d B per connection)",
		before, during, len(conns), growth, growth/int64(len(conns)))
	assert.Less(t, growth, int64(maxHeapGrowth), "heap growth with %d connections declaring 8 MB each", len(conns))
	assert.Equal(t, http.StatusOK, getHealth(t, ts.URL))
}

// TestLongHeadsAreCapped opens 200 connections that each send 60 KiB of headers and never
// end them: the heap grows by less than 64 MiB, /health answers, and a head beyond 64 KiB is
// refused with 431.
func TestLongHeadsAreCapped(t *testing.T) {
	ts := simtest.NewLoopbackServer(t, simserver.Options{ReadTimeout: time.Minute})
	require.Equal(t, http.StatusOK, getHealth(t, ts.URL))
	before := heapInUse()
	goroutines := runtime.NumGoroutine()
	header := "X-Pad: " + strings.Repeat("a", 1000) + "\r\n"
	conns := make([]net.Conn, 0, hostileConns)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range hostileConns {
		c, err := net.Dial("tcp", ts.Listener.Addr().String())
		require.NoError(t, err)
		conns = append(conns, c)
		_, err = io.WriteString(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: sim\r\n"+strings.Repeat(header, 60))
		require.NoError(t, err)
	}
	waitGoroutines(t, goroutines+hostileConns-hostileConns/20)
	during := heapInUse()
	growth := int64(during) - int64(before)
	t.Logf("heap in use: %d B before, %d B holding %d connections with 60 KiB heads (growth %d B)", before, during, len(conns), growth)
	assert.Less(t, growth, int64(maxHeapGrowth))
	assert.Equal(t, http.StatusOK, getHealth(t, ts.URL))

	// One more header line takes the head past the cap.
	c := conns[0]
	_, err := io.WriteString(c, strings.Repeat(header, 10)+"\r\n")
	require.NoError(t, err)
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second)) // a hang guard
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
}

// TestSlowBodiesTimeOut opens 200 connections that trickle their bodies a byte at a time:
// each gets 408 with an OpenAI error body once the read timeout passes, its connection is
// closed, and /health answers meanwhile.
func TestSlowBodiesTimeOut(t *testing.T) {
	const timeout = 500 * time.Millisecond
	ts := simtest.NewLoopbackServer(t, simserver.Options{ReadTimeout: timeout})
	conns := openHostile(t, ts.Listener.Addr().String(), hostileConns, 10_000)
	stop := make(chan struct{})
	var trickle sync.WaitGroup
	defer func() { close(stop); trickle.Wait() }()
	for _, c := range conns {
		trickle.Go(func() {
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := io.WriteString(c, " "); err != nil {
						return
					}
				}
			}
		})
	}
	assert.Equal(t, http.StatusOK, getHealth(t, ts.URL))

	statuses := make([]int, len(conns))
	var read sync.WaitGroup
	for i, c := range conns {
		read.Go(func() {
			// A hang guard, not a performance bound: the server should answer after timeout.
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), `"type":"RequestTimeoutError"`) {
				statuses[i] = resp.StatusCode
			}
			if _, err := br.ReadByte(); err == nil {
				statuses[i] = -1 // the connection stayed open
			}
		})
	}
	read.Wait()
	for i, s := range statuses {
		require.Equal(t, http.StatusRequestTimeout, s, "connection %d: status after trickling its body past %s", i, timeout)
	}
	assert.Equal(t, http.StatusOK, getHealth(t, ts.URL))
}

// TestLongStreamOutlivesReadTimeout checks that the read timeout bounds receiving a request,
// not answering it: a stream that lasts several times the timeout ends with [DONE].
func TestLongStreamOutlivesReadTimeout(t *testing.T) {
	const timeout = 100 * time.Millisecond
	clk, err := clock.New(4)
	require.NoError(t, err)
	ts := simtest.NewLoopbackServer(t, simserver.Options{ReadTimeout: timeout, Clock: clk})
	start := time.Now()
	resp, err := ts.Client().Post(ts.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"deepseek-v4-flash","stream":true,"max_tokens":60,"ignore_eos":true,"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	took := time.Since(start)
	require.Greater(t, took, 2*timeout, "the stream must outlast the read timeout for this test to mean anything")
	assert.True(t, strings.HasSuffix(string(body), "data: [DONE]\n\n"), "a stream of %s ends with [DONE]", took)
}
