package events

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
)

func TestLogRoundTripAndStamps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk, err := clock.New(10)
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "events.jsonl")
		l, err := CreateLog(path, clk, clk.Now())
		require.NoError(t, err)
		time.Sleep(clk.ToWall(3 * time.Second))
		l.Record(Event{Kind: RequestSent, Agent: 2, Round: 1, Request: "a2-r1"})
		l.Record(Event{Kind: Done, Agent: 2, Round: 1, Request: "a2-r1", LatencyS: 1.5})
		require.NoError(t, l.Close())
		got, err := ReadFile[Event](path)
		require.NoError(t, err)
		require.Len(t, got, 2)
		assert.InDelta(t, 3.0, got[0].TS, 1e-9, "t_s is simulated seconds since start")
		assert.Equal(t, Done, got[1].Kind)
		_, err = time.Parse(time.RFC3339Nano, got[0].Wall)
		assert.NoError(t, err)
	})
}

func TestFlushEveryMakesEventsDurable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		path := filepath.Join(t.TempDir(), "events.jsonl")
		l, err := CreateLog(path, clk, clk.Now())
		require.NoError(t, err)
		ctx := t.Context()
		go l.FlushEvery(ctx, clk, time.Second)
		l.Record(Event{Kind: RoundStart, Agent: 1, Round: 1})
		time.Sleep(1100 * time.Millisecond)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Contains(t, string(b), `"event":"round_start"`, "flushed within a second without Close")
		require.NoError(t, l.Close())
	})
}
