package events

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLogRoundTripAndStamps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.New(10)
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "events.jsonl")
		l, err := Create(path, clk, clk.Now())
		require.NoError(t, err)
		time.Sleep(clk.ToWall(3 * time.Second))
		l.Record(Event{Kind: RequestSent, Agent: 2, Round: 1, Request: "a2-r1"})
		l.Record(Event{Kind: Done, Agent: 2, Round: 1, Request: "a2-r1", LatencyS: 1.5})
		require.NoError(t, l.Close())
		got, err := ReadFile(path)
		require.NoError(t, err)
		require.Len(t, got, 2)
		assert.InDelta(t, 3.0, got[0].TS, 1e-9, "t_s is simulated seconds since start")
		assert.Equal(t, Done, got[1].Kind)
		assert.Equal(t, 1, l.Count(Done))
		_, err = time.Parse(time.RFC3339Nano, got[0].Wall)
		assert.NoError(t, err)
	})
}

func TestFlushEveryMakesEventsDurable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		path := filepath.Join(t.TempDir(), "events.jsonl")
		l, err := Create(path, clk, clk.Now())
		require.NoError(t, err)
		ctx := t.Context()
		go l.FlushEvery(ctx, time.Second)
		l.Record(Event{Kind: RoundStart, Agent: 1, Round: 1})
		time.Sleep(1100 * time.Millisecond)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Contains(t, string(b), `"event":"round_start"`, "flushed within a second without Close")
		require.NoError(t, l.Close())
	})
}

func TestReadToleratesTruncatedLastLine(t *testing.T) {
	in := `{"t_s":1,"event":"request_sent","agent":1,"round":1}` + "\n" + `{"t_s":2,"event":"do`
	got, err := Read(strings.NewReader(in))
	require.NoError(t, err)
	assert.Len(t, got, 1)

	_, err = Read(strings.NewReader("{bad}\n{}\n"))
	assert.ErrorContains(t, err, "events line 1")
}
