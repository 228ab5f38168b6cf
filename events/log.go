package events

import (
	"time"

	"github.com/agentsim/agentsim/clock"
)

// Recorder takes events as they happen. Implementations are safe for concurrent use.
type Recorder interface {
	Record(e Event)
}

// Log is a Recorder that appends events to events.jsonl, stamping each with the simulated time
// since the run started and the wall clock.
type Log struct {
	*Writer[Event]
	clk   *clock.Clock
	start time.Time // simulated time the run started
}

// CreateLog creates (or truncates) the events file at path. start is the run's simulated start
// time.
func CreateLog(path string, clk *clock.Clock, start time.Time) (*Log, error) {
	w, err := Create[Event](path)
	if err != nil {
		return nil, err
	}
	return &Log{Writer: w, clk: clk, start: start}, nil
}

// Record stamps e and appends it.
func (l *Log) Record(e Event) {
	l.Stamp(&e)
	l.Write(e)
}

// Stamp sets e's simulated time since the run started and its wall time.
func (l *Log) Stamp(e *Event) {
	e.TS = l.Since()
	e.Wall = FormatWall(l.clk.WallNow())
}

// FormatWall renders a wall time as events and samples record it: RFC 3339 in UTC, to the
// nanosecond.
func FormatWall(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Since returns the simulated seconds since the run started.
func (l *Log) Since() float64 { return l.clk.Since(l.start).Seconds() }
