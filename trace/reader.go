package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxLineBytes bounds one line of a trace (16 MiB): a request with a very long hash_ids list
// fits many times over, and a file that is not JSON Lines fails fast instead of filling memory.
const MaxLineBytes = 16 << 20

// Reader reads a trace one request at a time; it never holds more than one line. Every
// error it returns is a *LineError naming the file and the line ("trace.jsonl:12: …").
type Reader struct {
	name   string
	br     *bufio.Reader
	line   int
	header Header
	seen   *sessions
	err    error // sticky: after an error or the end, Next returns it again
}

// NewReader reads and checks the header line of the trace in r. name is the file's name as
// the user gave it, used in errors ("-" for standard input).
func NewReader(r io.Reader, name string) (*Reader, error) {
	rd := &Reader{name: name, br: bufio.NewReaderSize(r, 64<<10), seen: newSessions()}
	line, n, err := rd.readLine()
	if err == io.EOF {
		return nil, &LineError{Name: name, Line: 1, Err: errors.New("empty file: a trace begins with its header line " + headerExample)}
	}
	if err != nil {
		return nil, err
	}
	if err := decodeHeader(line, &rd.header); err != nil {
		return nil, &LineError{Name: name, Line: n, Err: err}
	}
	return rd, nil
}

const headerExample = `{"schema":"agentsim.trace/v1",…}`

// decodeHeader parses the header line, telling a file that is not a trace (no schema field)
// from a trace of another schema version.
func decodeHeader(line []byte, h *Header) error {
	var probe struct {
		Schema *string `json:"schema"`
	}
	if err := json.Unmarshal(line, &probe); err != nil || probe.Schema == nil {
		return fmt.Errorf("no trace header: the first line must be %s; other formats are read by agentsim trace import", headerExample)
	}
	if *probe.Schema != Schema {
		return fmt.Errorf("schema %q is not supported; this agentsim reads %s", *probe.Schema, Schema)
	}
	if err := decodeStrict(line, h); err != nil {
		return err
	}
	return h.Validate()
}

// Header returns the trace's header.
func (r *Reader) Header() Header { return r.header }

// Line returns the number of the line read last (1 is the header).
func (r *Reader) Line() int { return r.line }

// Next returns the next request, checked alone and against the earlier requests of its
// session. At the end it checks the header's counts and returns io.EOF. After any error,
// Next keeps returning it.
func (r *Reader) Next() (Request, error) {
	if r.err != nil {
		return Request{}, r.err
	}
	req, err := r.next()
	if err != nil {
		r.err = err
	}
	return req, err
}

func (r *Reader) next() (Request, error) {
	line, n, err := r.readLine()
	if err == io.EOF {
		if err := r.seen.checkCounts(&r.header); err != nil {
			return Request{}, &LineError{Name: r.name, Line: 1, Err: err}
		}
		return Request{}, io.EOF
	}
	if err != nil {
		return Request{}, err
	}
	var req Request
	if err := decodeStrict(line, &req); err != nil {
		return Request{}, &LineError{Name: r.name, Line: n, Err: err}
	}
	if err := r.seen.add(&req); err != nil {
		return Request{}, &LineError{Name: r.name, Line: n, Err: err}
	}
	return req, nil
}

// readLine returns the next non-blank line and its number, or io.EOF. A last line without
// its newline is accepted when it is complete JSON and reported as truncated otherwise (a
// writer killed mid-line).
func (r *Reader) readLine() ([]byte, int, error) {
	for {
		line, err := r.readRaw()
		if err != nil && err != io.EOF {
			return nil, r.line, err
		}
		if len(line) == 0 && err == io.EOF {
			return nil, r.line, io.EOF
		}
		r.line++
		complete := err == nil
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if !complete && !json.Valid(line) {
			return nil, r.line, &LineError{Name: r.name, Line: r.line, Err: fmt.Errorf("truncated last line (%d bytes, no newline): the writer stopped mid-line", len(line))}
		}
		return line, r.line, nil
	}
}

// readRaw reads up to and including the next newline, refusing lines over MaxLineBytes.
func (r *Reader) readRaw() ([]byte, error) {
	var buf []byte
	for {
		frag, err := r.br.ReadSlice('\n')
		if len(buf)+len(frag) > MaxLineBytes {
			return nil, &LineError{Name: r.name, Line: r.line + 1, Err: fmt.Errorf("line longer than %d bytes: not a trace line", MaxLineBytes)}
		}
		if err == bufio.ErrBufferFull {
			buf = append(buf, frag...)
			continue
		}
		if err != nil && err != io.EOF {
			return nil, &LineError{Name: r.name, Line: r.line + 1, Err: err}
		}
		if buf == nil {
			// ReadSlice's buffer is reused by the next read; the caller is done with the line
			// before then, except for the JSON decoder which copies what it keeps.
			return frag, err
		}
		return append(buf, frag...), err
	}
}

// decodeStrict decodes one JSON object into v, refusing unknown fields and trailing data,
// with messages that name the field.
func decodeStrict(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return errors.New("invalid JSON: more than one value on the line")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("invalid JSON: trailing data after the object")
	}
	return nil
}

// jsonError rewrites encoding/json's errors into the "field = value: allowed" form.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		if v, ok := strings.CutPrefix(te.Value, "number "); ok {
			return fmt.Errorf("%s = %s: must be %s", te.Field, v, jsonKind(te.Type.String()))
		}
		return fmt.Errorf("%s is a JSON %s: must be %s", te.Field, te.Value, jsonKind(te.Type.String()))
	case errors.As(err, &se):
		return fmt.Errorf("invalid JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("invalid JSON: the object is not closed")
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
		return fmt.Errorf("unknown field %s: not part of %s", f, Schema)
	}
	return errors.New(msg)
}

// jsonKind names a Go type the way a trace's author thinks of it.
func jsonKind(goType string) string {
	switch goType {
	case "int", "*int":
		return "a whole number"
	case "uint64":
		return "a non-negative whole number"
	case "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "*float64":
		return "a number"
	case "[]string":
		return "an array of strings"
	case "[]uint64":
		return "an array of non-negative whole numbers"
	}
	return "a " + goType
}
