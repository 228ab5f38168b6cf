package events

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/agentsim/agentsim/clock"
)

// Recorder takes events as they happen. Implementations are safe for concurrent use.
type Recorder interface {
	Record(e Event)
}

// Log is a Recorder that appends events to a JSONL file, stamping each with the simulated time
// since the run started and the wall clock.
type Log struct {
	clk   *clock.Clock
	start time.Time // simulated time the run started

	mu     sync.Mutex
	f      *os.File
	w      *bufio.Writer
	counts map[Kind]int
	err    error // the first write error; later records are dropped
}

// Create creates (or truncates) the JSONL file at path. start is the run's simulated start
// time.
func Create(path string, clk *clock.Clock, start time.Time) (*Log, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &Log{clk: clk, start: start, f: f, w: bufio.NewWriterSize(f, 64<<10), counts: map[Kind]int{}}, nil
}

// Record stamps e and appends it.
func (l *Log) Record(e Event) {
	l.Stamp(&e)
	l.Write(e)
}

// Stamp sets e's simulated time since the run started and its wall time.
func (l *Log) Stamp(e *Event) {
	e.TS = l.clk.Since(l.start).Seconds()
	e.Wall = l.clk.WallNow().UTC().Format(time.RFC3339Nano)
}

// Write appends v (an Event, a Sample…) as one JSON line. A write failure (disk full) is kept
// for Err and ends recording; it does not panic or block the caller.
func (l *Log) Write(v any) {
	line, err := json.Marshal(v)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	if err == nil {
		_, err = l.w.Write(append(line, '\n'))
	}
	if err != nil {
		l.err = fmt.Errorf("write %s: %w", l.f.Name(), err)
		return
	}
	if e, ok := v.(Event); ok {
		l.counts[e.Kind]++
	}
}

// Since returns the simulated seconds since the run started.
func (l *Log) Since() float64 { return l.clk.Since(l.start).Seconds() }

// Count returns how many events of kind k were recorded.
func (l *Log) Count(k Kind) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts[k]
}

// Flush writes buffered events to the file.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		if err := l.w.Flush(); err != nil {
			l.err = fmt.Errorf("flush %s: %w", l.f.Name(), err)
		}
	}
	return l.err
}

// Err returns the first write error, if any.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// FlushEvery flushes the log every interval of wall time until ctx is done, so a killed run
// keeps every event up to its last interval.
func (l *Log) FlushEvery(ctx context.Context, interval time.Duration) {
	t := l.clk.NewTicker(l.clk.ToSim(interval))
	defer t.Stop()
	for {
		select {
		case <-t.C:
			_ = l.Flush()
		case <-ctx.Done():
			return
		}
	}
}

// Close flushes and closes the file and returns the first error.
func (l *Log) Close() error {
	ferr := l.Flush()
	l.mu.Lock()
	defer l.mu.Unlock()
	cerr := l.f.Close()
	if ferr != nil {
		return ferr
	}
	return cerr
}

// Read parses an events.jsonl file. A final line cut short (a run killed mid-write) is
// ignored; any other malformed line is an error naming its line number.
func Read(r io.Reader) ([]Event, error) {
	var out []Event
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		complete := err == nil
		if err != nil && !errors.Is(err, io.EOF) {
			return out, err
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			var e Event
			if jerr := json.Unmarshal(line, &e); jerr != nil {
				if !complete {
					return out, nil
				}
				return out, fmt.Errorf("events line %d: %w", n, jerr)
			}
			out = append(out, e)
		}
		if !complete {
			return out, nil
		}
	}
}

// ReadFile parses the events.jsonl at path.
func ReadFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f)
}
