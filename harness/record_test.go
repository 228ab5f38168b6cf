package harness

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/workloads"
)

// TestInboxTakesInStampOrder checks that the inbox hands events over in the order they were
// stamped, and that taking up to a sample's instant leaves later events queued, to be written
// after that sample.
func TestInboxTakesInStampOrder(t *testing.T) {
	ts := 0.0
	q := newInbox(func(it *recorded) { ts++; it.e.TS = ts })
	for i := range 5 {
		q.put(&events.Event{Agent: i})
	}
	got := q.take(nil, 3)
	assert.Equal(t, []float64{1, 2, 3}, stamps(got))
	assert.Equal(t, []int{0, 1, 2}, agentsOf(got))
	q.put(&events.Event{Agent: 5})
	got = q.take(got[:0], -1)
	assert.Equal(t, []float64{4, 5, 6}, stamps(got))
	assert.Empty(t, q.take(nil, -1))
	select {
	case <-q.ready:
	default:
		t.Error("put signals the writer")
	}
}

// TestInboxHandsItsBacklogOver checks that taking everything hands the queued events over
// without copying them, and that events put afterwards go to other storage: the events handed
// over stay as they were until the writer gives the buffer back.
func TestInboxHandsItsBacklogOver(t *testing.T) {
	ts := 0.0
	q := newInbox(func(it *recorded) { ts++; it.e.TS = ts })
	for i := range 3 {
		q.put(&events.Event{Agent: i})
	}
	queued := &q.items[0]
	got := q.take(nil, -1)
	assert.Same(t, queued, &got[0], "handed over, not copied")
	q.put(&events.Event{Agent: 3})
	q.put(&events.Event{Agent: 4})
	assert.Equal(t, []float64{1, 2, 3}, stamps(got), "later events do not overwrite those handed over")
	clear(got)
	assert.Equal(t, []float64{4, 5}, stamps(q.take(got[:0], -1)))
}

func stamps(rs []recorded) []float64 {
	var out []float64
	for _, r := range rs {
		out = append(out, r.e.TS)
	}
	return out
}

func agentsOf(rs []recorded) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.e.Agent)
	}
	return out
}

// TestRecordingAssistsAWriterFallenBehind checks that once more than assistAfter events are
// queued, the agent that records writes the backlog itself (the writer goroutine is not
// running here), so the inbox stays bounded and every event reaches the log in stamp order.
func TestRecordingAssistsAWriterFallenBehind(t *testing.T) {
	w := workloads.Defaults()
	clk, err := clock.New(1)
	require.NoError(t, err)
	dir := t.TempDir()
	r, err := newRun(Options{Command: "run", Workload: &w, Clock: clk, Dir: dir})
	require.NoError(t, err)
	const n = 3*assistAfter + 10
	for i := range n {
		r.RecordRef(&events.Event{Kind: events.AgentStart, Agent: i})
		require.LessOrEqual(t, len(r.inbox.items), assistAfter, "after event %d", i)
	}
	r.mu.Lock()
	r.flush(-1)
	r.now.release(r.emit) // the last instant's events, which the run's end would release
	r.mu.Unlock()
	require.NoError(t, r.log.Flush())
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var agentsSeen []int
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		var e events.Event
		require.NoError(t, json.Unmarshal(lines.Bytes(), &e))
		agentsSeen = append(agentsSeen, e.Agent)
	}
	require.Len(t, agentsSeen, n)
	for i, a := range agentsSeen {
		if a != i {
			t.Fatalf("event %d of the log is agent %d's: not in the order recorded", i, a)
		}
	}
	r.close()
}
