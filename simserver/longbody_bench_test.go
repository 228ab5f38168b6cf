package simserver_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/simserver"
)

// longWords is n words of text.
func longWords(n int) string {
	words := []string{"the", "of", "and", "code", "read", "file", "test", "fix"}
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[i%len(words)])
	}
	return b.String()
}

// longBody is a coding-agent request of about 115k tokens (~0.5 MB): a 2,400-token system
// prompt, the 98,000-token session so far, then 30 steps of a 200-token reply calling a tool
// and the tool's 500-token result; through the Responses API when responses.
func longBody(model string, responses bool) []byte {
	var b bytes.Buffer
	if responses {
		fmt.Fprintf(&b, `{"model":%q,"stream":false,"store":false,"max_output_tokens":1,"instructions":%q,"input":[{"role":"user","content":%q}`,
			model, longWords(2400), longWords(98000))
		for step := range 30 {
			fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"output_text","text":%q}]},{"type":"function_call","call_id":"call_%d","name":"read","arguments":"{\"path\":\"a.go\"}"},{"type":"function_call_output","call_id":"call_%d","output":%q}`,
				longWords(200), step, step, longWords(500))
		}
		b.WriteString("]}")
		return b.Bytes()
	}
	fmt.Fprintf(&b, `{"model":%q,"stream":false,"max_tokens":1,"messages":[{"role":"system","content":%q},{"role":"user","content":%q}`,
		model, longWords(2400), longWords(98000))
	for step := range 30 {
		fmt.Fprintf(&b, `,{"role":"assistant","content":%q,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.go\"}"}}]},{"role":"tool","tool_call_id":"call_%d","content":%q}`,
			longWords(200), step, step, longWords(500))
	}
	b.WriteString("]}")
	return b.Bytes()
}

// halfBody is a request body that gives half of its bytes, 4 KiB a read as a socket does,
// then says so and waits for release before giving the rest.
type halfBody struct {
	data    []byte
	off     int
	half    *sync.WaitGroup
	release chan struct{}
	waited  bool
}

func (h *halfBody) Read(p []byte) (int, error) {
	if !h.waited && h.off >= len(h.data)/2 {
		h.waited = true
		h.half.Done()
		<-h.release
	}
	if h.off == len(h.data) {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 4<<10)], h.data[h.off:])
	h.off += n
	return n, nil
}

// BenchmarkLongRequestInFlight measures what a long request (longBody, ~0.5 MB) costs the
// simulator while its body arrives: 50 requests are served at once, each body stopping
// halfway until all 50 are there. With all 50 waiting, it reports the live heap per request in
// flight (after a collection; the bodies themselves are the client's and counted before), and
// the bytes allocated per request over the whole of it: read, parse, admission, a one-token
// answer.
//
//	go test -run '^$' -bench LongRequestInFlight -benchtime 5x ./simserver/
func BenchmarkLongRequestInFlight(b *testing.B) {
	for _, api := range []string{"chat", "responses"} {
		b.Run("api="+api, func(b *testing.B) { benchLongInFlight(b, api == "responses") })
	}
}

func benchLongInFlight(b *testing.B, responses bool) {
	const requests = 50
	clk, err := clock.New(1_000_000)
	if err != nil {
		b.Fatal(err)
	}
	prof := simserver.DSV4PD()
	prof.BootstrapTimeout, prof.WaitingTimeout = 0, 0
	srv, err := simserver.New(simserver.Options{Clock: clk, Profile: prof})
	if err != nil {
		b.Fatal(err)
	}
	srv.Engine().Start()
	defer srv.Engine().Stop()
	h := srv.Handler()
	path := "/v1/chat/completions"
	if responses {
		path = "/v1/responses"
	}
	body := longBody(prof.Model, responses)
	var live, alloc float64
	for range b.N {
		var half, done sync.WaitGroup
		half.Add(requests)
		release := make(chan struct{})
		recs := make([]*httptest.ResponseRecorder, requests)
		bodies := make([]*halfBody, requests)
		for i := range bodies {
			bodies[i] = &halfBody{data: body, half: &half, release: release}
		}
		var before, during, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range requests {
			recs[i] = httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, path, bodies[i])
			req.ContentLength = int64(len(body))
			done.Add(1)
			go func() {
				defer done.Done()
				h.ServeHTTP(recs[i], req)
			}()
		}
		half.Wait()
		runtime.GC()
		runtime.ReadMemStats(&during)
		close(release)
		done.Wait()
		runtime.ReadMemStats(&after)
		for _, rec := range recs {
			if rec.Code != http.StatusOK {
				b.Fatalf("%s: %d %s", path, rec.Code, rec.Body.Bytes())
			}
		}
		live += (float64(during.HeapAlloc) - float64(before.HeapAlloc)) / requests
		alloc += float64(after.TotalAlloc-before.TotalAlloc) / requests
	}
	b.ReportMetric(live/float64(b.N), "live-B/request")
	b.ReportMetric(alloc/float64(b.N), "alloc-B/request")
}
