package events

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/agentsim/agentsim/clock"
)

// Writer appends values to a JSONL file, one JSON object a line: events.jsonl holds Events,
// samples.jsonl Samples. It is safe for concurrent use. A write failure (a full disk) is kept
// for Err and ends writing; it never panics or blocks the caller.
type Writer[T any] struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	err error // the first write error; later values are dropped
}

// Create creates (or truncates) the JSONL file at path.
func Create[T any](path string) (*Writer[T], error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &Writer[T]{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// Write appends v as one line.
func (w *Writer[T]) Write(v T) {
	line, err := json.Marshal(v)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	if err == nil {
		_, err = w.w.Write(append(line, '\n'))
	}
	if err != nil {
		w.err = fmt.Errorf("write %s: %w", w.f.Name(), err)
	}
}

// Flush writes buffered lines to the file and returns the first error, if any.
func (w *Writer[T]) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		if err := w.w.Flush(); err != nil {
			w.err = fmt.Errorf("flush %s: %w", w.f.Name(), err)
		}
	}
	return w.err
}

// Err returns the first write error, if any.
func (w *Writer[T]) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// FlushEvery flushes the file every interval of wall time, as clk measures it, until ctx is
// done, so a killed run keeps every line up to its last interval.
func (w *Writer[T]) FlushEvery(ctx context.Context, clk *clock.Clock, interval time.Duration) {
	t := clk.NewTicker(clk.ToSim(interval))
	defer t.Stop()
	for {
		select {
		case <-t.C:
			_ = w.Flush()
		case <-ctx.Done():
			return
		}
	}
}

// Close flushes and closes the file and returns the first error.
func (w *Writer[T]) Close() error {
	ferr := w.Flush()
	w.mu.Lock()
	defer w.mu.Unlock()
	cerr := w.f.Close()
	if ferr != nil {
		return ferr
	}
	return cerr
}

// Read parses JSONL of T values. A final line cut short (a run killed mid-write) is ignored;
// any other malformed line is an error naming its line number.
func Read[T any](r io.Reader) ([]T, error) {
	var out []T
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		complete := err == nil
		if err != nil && !errors.Is(err, io.EOF) {
			return out, fmt.Errorf("line %d: %w", n, err)
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			var v T
			if jerr := json.Unmarshal(line, &v); jerr != nil {
				if !complete {
					return out, nil
				}
				return out, fmt.Errorf("line %d: %w", n, jerr)
			}
			out = append(out, v)
		}
		if !complete {
			return out, nil
		}
	}
}

// ReadFile parses the JSONL file at path (see Read). Its errors name the file once:
// "read events.jsonl: no such file or directory", "samples.jsonl line 3: …".
func ReadFile[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	out, err := Read[T](f)
	if err != nil {
		return nil, fmt.Errorf("%s %w", path, err)
	}
	return out, nil
}
