package agents

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/sashabaranov/go-openai"
)

// sseReader reads the data lines of a streamed chat completion from the response body. It
// keeps go-openai's stream reading (its streamReader.RecvRaw) byte for byte — the same lines
// are data, the same errors end the stream, so the wire classification does not change — but
// matches the prefixes without a regular expression and reads into a pooled buffer, without
// allocating per line.
//
// What go-openai does, and so this: a line is trimmed of surrounding white space; a line
// "data:" followed by optional white space is a data line, its payload after that prefix;
// "data: [DONE]" ends the stream. Every other line (SSE comments, event: lines, the blank
// lines between frames) is kept in an accumulator and counted; more than limit of them in a
// row is ErrTooManyEmptyStreamMessages. A data line whose payload starts with {"error": goes to
// the accumulator too and ends the stream at the next line. When the stream ends that way, or
// by a read error (io.EOF for a body that ended without [DONE]), the accumulator is read as
// an {"error":{…}} object: if it holds one, the stream's error is "error, <APIError>",
// otherwise it is the read error.
type sseReader struct {
	r     *bufio.Reader
	limit uint
	// acc holds the non-data lines, go-openai's error accumulator; nil until one is not empty.
	acc      []byte
	long     []byte // a line longer than the buffer, reassembled; reused
	finished bool   // data: [DONE] was read
	// events skips the event: lines of a Responses stream, which name every frame: they are
	// neither counted nor kept, since the accumulator would otherwise hold one per frame.
	events bool
}

// sseBufferBytes is the read buffer of a stream, held for as long as it lasts: a token's
// chunk frame is 200–400 bytes (vLLM's, the simulator's), longer lines are reassembled in
// sseReader.long.
const sseBufferBytes = 512

// sseReaders pools the read buffers of streams that ended.
var sseReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, sseBufferBytes) }}

// newSSEReader returns a reader of body that allows limit consecutive non-data lines.
func newSSEReader(body io.Reader, limit uint) *sseReader {
	r := sseReaders.Get().(*bufio.Reader)
	r.Reset(body)
	return &sseReader{r: r, limit: limit}
}

// release returns the read buffer to the pool; the reader is not used again.
func (s *sseReader) release() {
	if s.r != nil {
		s.r.Reset(nil)
		sseReaders.Put(s.r)
		s.r = nil
	}
}

// next returns the payload of the next data line, valid until the following call, or io.EOF
// after data: [DONE] (see sawDone), or the error that ended the stream.
func (s *sseReader) next() ([]byte, error) {
	if s.finished {
		return nil, io.EOF
	}
	var empty uint
	errorPrefix := false
	for {
		raw, readErr := s.line()
		if readErr != nil || errorPrefix {
			if apiErr := s.accumulatedError(); apiErr != nil {
				return nil, fmt.Errorf("error, %w", apiErr)
			}
			return nil, readErr
		}
		line := bytes.TrimSpace(raw)
		if s.events && bytes.HasPrefix(line, []byte("event:")) {
			continue
		}
		payload, isData := cutDataPrefix(line)
		if isData && bytes.HasPrefix(payload, []byte(`{"error":`)) {
			errorPrefix = true
		}
		if !isData || errorPrefix {
			if errorPrefix {
				line = payload
			}
			if len(line) > 0 {
				s.acc = append(s.acc, line...)
			}
			empty++
			if empty > s.limit {
				return nil, openai.ErrTooManyEmptyStreamMessages
			}
			continue
		}
		if string(payload) == "[DONE]" {
			s.finished = true
			return nil, io.EOF
		}
		return payload, nil
	}
}

// sawDone reports whether the stream ended with data: [DONE] rather than with its body.
func (s *sseReader) sawDone() bool { return s.finished }

// line reads one line, its newline included, as bufio.Reader.ReadBytes does: a last line
// without a newline comes with the read error, and is then ignored.
func (s *sseReader) line() ([]byte, error) {
	b, err := s.r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return b, err
	}
	s.long = append(s.long[:0], b...)
	for err == bufio.ErrBufferFull {
		b, err = s.r.ReadSlice('\n')
		s.long = append(s.long, b...)
	}
	return s.long, err
}

// accumulatedError reads the accumulated non-data lines as an error object; nil when they
// are not one.
func (s *sseReader) accumulatedError() *openai.APIError {
	if len(s.acc) == 0 {
		return nil
	}
	var resp *openai.ErrorResponse
	if json.Unmarshal(s.acc, &resp) != nil || resp == nil {
		return nil
	}
	return resp.Error
}

// cutDataPrefix strips a leading "data:" and the white space after it (the regular
// expression ^data:\s* of go-openai: \s is tab, newline, form feed, carriage return, space).
func cutDataPrefix(line []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return line, false
	}
	for len(rest) > 0 {
		switch rest[0] {
		case ' ', '\t', '\n', '\f', '\r':
			rest = rest[1:]
			continue
		}
		break
	}
	return rest, true
}

// errStreamHook is returned if a stream's response reached go-openai without passing the
// call's response hook, which hands the body to the call.
var errStreamHook = errors.New("agents: the response hook did not see the stream's response")
