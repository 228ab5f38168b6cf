package trace

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Writer writes a trace: the header first, then one request a line, each checked as the
// Reader checks it, so a Writer never produces a trace its Reader refuses.
//
// The header is written before any request, so its counts must be known in advance or left
// 0 ("not stated"). Importers read their whole source first and state them; a recording,
// which appends requests as they end, leaves them 0. Close checks stated counts against what
// was written.
type Writer struct {
	bw     *bufio.Writer
	header Header
	seen   *sessions
	err    error // the first error; later writes are refused
}

// NewWriter writes h's line to w and returns a Writer for the requests. h.Schema is set to
// Schema. Output is buffered: call Flush to push it out, Close at the end.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	h.Schema = Schema
	if err := h.Validate(); err != nil {
		return nil, fmt.Errorf("trace header: %w", err)
	}
	tw := &Writer{bw: bufio.NewWriterSize(w, 64<<10), header: h, seen: newSessions()}
	if err := tw.writeLine(&h); err != nil {
		return nil, err
	}
	return tw, nil
}

// Write appends r after checking it alone and against the earlier requests of its session.
// A request that fails the checks is not written; the error names the request's line.
func (w *Writer) Write(r Request) error {
	if w.err != nil {
		return w.err
	}
	if err := w.seen.add(&r); err != nil {
		return fmt.Errorf("trace request %d (session %q seq %d): %s", w.seen.n+1, r.Session, r.Seq, joinLines(err))
	}
	return w.writeLine(&r)
}

func (w *Writer) writeLine(v any) error {
	b, err := json.Marshal(v)
	if err == nil {
		b = append(b, '\n')
		_, err = w.bw.Write(b)
	}
	if err != nil {
		w.err = fmt.Errorf("write trace: %w", err)
	}
	return w.err
}

// Flush writes buffered lines to the underlying writer; each line is written whole.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = fmt.Errorf("write trace: %w", err)
	}
	return w.err
}

// Close flushes and checks the header's stated counts against the requests written. It does
// not close the underlying writer.
func (w *Writer) Close() error {
	if err := w.Flush(); err != nil {
		return err
	}
	if err := w.seen.checkCounts(&w.header); err != nil {
		return fmt.Errorf("trace header: %s", joinLines(err))
	}
	return nil
}

// Validate reads the whole trace in r and returns the header and the first problem, as a
// *LineError, or nil when the trace is valid. name is used in errors.
func Validate(r io.Reader, name string) (Header, error) {
	rd, err := NewReader(r, name)
	if err != nil {
		return Header{}, err
	}
	for {
		_, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return rd.Header(), nil
		}
		if err != nil {
			return rd.Header(), err
		}
	}
}
