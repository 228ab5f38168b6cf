package calibrate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/simserver/simtest"
)

// TestCheckTableColumns: every column of calibrate check's table has its header, above it:
// split on runs of two or more spaces, the header and every row have the same cells, and each
// cell sits within its header's column.
func TestCheckTableColumns(t *testing.T) {
	var b bytes.Buffer
	PrintRows(&b, []Row{
		{Agents: 4, Figure: "TTFT p50", Server1: 0.1234, Server2: 0.1266, Twin: 0.2244, Error: 0.796, Spread: 0.025},
		{Agents: 12, Figure: "throughput", Server1: 1234.5, Server2: 1200, Twin: 1000.25, Error: -0.177, Spread: 0.028},
		{Agents: 1, Figure: "e2e p90", Server1: 2.758116, Server2: 12.503192, Twin: 11.388391, Error: 3.329, Spread: 0.097},
	})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 4)
	cells := regexp.MustCompile(`\S+( \S+)*`)
	head := cells.FindAllStringIndex(lines[0], -1)
	names := cells.FindAllString(lines[0], -1)
	assert.Equal(t, []string{"agents", "figure", "server 1", "server 2", "twin", "error", "direction", "spread", "inside"}, names)
	for _, l := range lines[1:] {
		row := cells.FindAllStringIndex(l, -1)
		require.Len(t, row, len(head), "row %q: one cell per header", l)
		for i, c := range row {
			// A cell is under its header: left-aligned ones start with it, right-aligned ones
			// end with it.
			assert.True(t, c[0] == head[i][0] || c[1] == head[i][1], "row %q: cell %q is not under %q", l, l[c[0]:c[1]], names[i])
		}
	}
}

// TestCheckRunsAreFresh: against a server with a prefix cache, check's two server runs at one
// concurrency measure the same thing, because each sends text the server has not seen; sent
// again, the same workload is answered from the cache (TTFT at least halved), which would
// pass a warm cache off as the server's own spread.
func TestCheckRunsAreFresh(t *testing.T) {
	truth, err := engine.LookupProfile("vllm-llama3-8b-h100")
	require.NoError(t, err)
	require.Positive(t, truth.PrefixCacheTokens)
	w := Workload{Agents: []int{4}, Rounds: 3, First: 2000, Turn: 200, Output: 16, Seed: 11}
	synctest.Test(t, func(t *testing.T) {
		s := simtest.NewLocalServer(t, simserver.Options{Profile: truth})
		c := &Client{URL: s.URL, Model: truth.Model, HTTP: s.Client(), Clock: s.Clock()}
		run1 := RunWorkload(context.Background(), c, w.Fresh(4, 0), 4)
		run2 := RunWorkload(context.Background(), c, w.Fresh(4, 1), 4)
		again := RunWorkload(context.Background(), c, w.Fresh(4, 1), 4)
		t.Logf("TTFT p50: run 1 %s, run 2 %s, run 2 again %s", run1.TTFT[0], run2.TTFT[0], again.TTFT[0])
		assert.InEpsilon(t, run1.TTFT[0].Seconds(), run2.TTFT[0].Seconds(), 0.05, "two fresh runs agree")
		assert.Less(t, again.TTFT[0], run2.TTFT[0]/2, "a repeat is answered from the cache")
		assert.NotEqual(t, w.Fresh(4, 0).Seed, w.Fresh(8, 0).Seed, "each concurrency has its own text")
	})
}

// TestFlushTakesEverySlot checks that a flush before a check's run sends its requests at once
// (each on a slot of its own, so every slot lets go of what it held), each of fresh text and
// one token, and that flushes with other seeds send other text.
func TestFlushTakesEverySlot(t *testing.T) {
	const n = 8
	var mu sync.Mutex
	firsts := map[string]int{}
	inFlight, most := 0, 0
	all := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages  []struct{ Content string } `json:"messages"`
			MaxTokens int                        `json:"max_tokens"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) != 1 || body.MaxTokens != 1 {
			http.Error(w, fmt.Sprintf("want one message and max_tokens 1: %+v %v", body, err), http.StatusBadRequest)
			return
		}
		mu.Lock()
		firsts[body.Messages[0].Content]++
		inFlight++
		most = max(most, inFlight)
		wait := all
		if most == n && len(firsts)%n == 0 {
			close(all)
			all = make(chan struct{})
		}
		mu.Unlock()
		select { // the requests of one flush are all in flight at once, or the test fails
		case <-wait:
		case <-time.After(5 * time.Second):
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" x\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	}))
	defer s.Close()
	clk, err := clock.New(1)
	require.NoError(t, err)
	c := &Client{URL: s.URL, Model: "m", HTTP: s.Client(), Clock: clk}
	Flush(context.Background(), c, n, 1)
	mu.Lock()
	assert.Equal(t, n, most, "every request of the flush in flight at once")
	assert.Len(t, firsts, n, "each request has text of its own")
	most = 0
	mu.Unlock()
	Flush(context.Background(), c, n, 2)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, n, most)
	assert.Len(t, firsts, 2*n, "another seed's flush sends other text")
	for text, times := range firsts {
		assert.Equal(t, 1, times, "sent once: %q", text)
	}
}

// TestReferenceLine checks the reference comparison in check's table (ReferenceRows) and under
// it: against a twin a quarter slower than the server in every term, its TTFT and TPOT come
// out +25 %; against the server's own profile, 0; with no twin request completed, there are
// no rows and the line says there is nothing to compare.
func TestReferenceLine(t *testing.T) {
	truth, err := engine.LookupProfile("vllm-llama3-8b-h100")
	require.NoError(t, err)
	slow := *truth
	for _, d := range []*time.Duration{&slow.PrefillBase, &slow.PrefillPerToken, &slow.DecodeBase, &slow.DecodePerSeq} {
		*d = *d * 5 / 4
	}
	slow.PrefillAttnPerToken2Ns *= 1.25
	slow.DecodePerKVTokenNs *= 1.25
	refs := func(p *engine.Profile) []Obs {
		var obs []Obs
		synctest.Test(t, func(t *testing.T) {
			s := simtest.NewLocalServer(t, simserver.Options{Profile: p})
			c := &Client{URL: s.URL, Model: p.Model, HTTP: s.Client(), Clock: s.Clock()}
			for i := range 3 {
				obs = append(obs, Reference(context.Background(), c, int64(i)))
			}
		})
		return obs
	}
	server := refs(truth)
	pct := regexp.MustCompile(`TTFT server [^,]+ \(([^)]+) over 3\), twin [^ ]+ \(([-+][0-9.]+) %\); TPOT server [^,]+, twin [^ ]+ \(([-+][0-9.]+) %\)`)
	for _, c := range []struct {
		twin *engine.Profile
		want float64
	}{{&slow, 25}, {truth, 0}} {
		twin := refs(c.twin)
		rows := ReferenceRows(4, server[0], server[1], twin[0])
		require.Len(t, rows, 2)
		for i, name := range []string{"ref TTFT", "ref TPOT"} {
			assert.Equal(t, name, rows[i].Figure)
			assert.Equal(t, 4, rows[i].Agents)
			assert.InDelta(t, c.want/100, rows[i].Error, 0.005, "%s: %+v", name, rows[i])
		}
		line := ReferenceLine(server, twin)
		m := pct.FindStringSubmatch(line)
		require.NotNil(t, m, line)
		for _, got := range m[2:] {
			var v float64
			_, err := fmt.Sscan(got, &v)
			require.NoError(t, err)
			assert.InDelta(t, c.want, v, 0.5, line)
		}
	}
	assert.Contains(t, ReferenceLine(server, []Obs{{Err: "refused"}}), "3 of 3 server and 0 of 1 twin requests completed: no comparison")
	assert.Nil(t, ReferenceRows(4, server[0], server[1], Obs{Err: "refused"}), "no rows without the twin's reference")
}
