package record

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"net/textproto"
)

// dechunker decodes HTTP/1.1's chunked transfer coding in place, read by read, for the
// responses Transport pumps (upBody.pump): a read's data bytes are moved to its front, the
// framing between them dropped, with no buffer of its own (a size line cut by a read
// boundary is carried as its value so far). It reads what net/http's chunked reader reads: a
// size line of up to 16 hex digits, then whitespace or an extension after ';', ending in
// CRLF and holding no other CR; CRLF after each chunk's data; no more framing than net/http
// allows for the data it brings; after the last chunk, the trailer section to its empty line.
type dechunker struct {
	st      uint8
	digits  uint8  // hex digits of the size line so far
	left    uint64 // dcSize: the size so far; dcData: the chunk's bytes still to come
	lineLen int    // bytes of the size line so far
	excess  int64  // framing beyond what the data allows, as net/http's chunked reader counts it
	trailer []byte // the trailer section so far, when it is not empty
	lineAt  int    // where its current line begins
}

const (
	dcSize    = iota // the digits of a size line
	dcWS             // past them: whitespace
	dcExt            // an extension
	dcCR             // the size line's CR: its LF comes next
	dcData           // a chunk's data
	dcDataCR         // the CR after it
	dcDataLF         // the LF after it
	dcTrailer        // the trailer section, after the last chunk
	dcDone           // the body's end
)

// maxChunkLine bounds a size line, its CRLF aside (net/http's chunked reader reads no longer
// one), maxExcess the framing beyond what the data allows (net/http's bound), and maxTrailer
// the trailer section.
const maxChunkLine, maxExcess, maxTrailer = 4095, 16 << 10, 64 << 10

var (
	errChunkLength    = errors.New("invalid byte in chunk length")
	errChunkLine      = errors.New("a chunk's size line does not end in CRLF")
	errChunkLineLong  = errors.New("header line too long")
	errChunkMalformed = errors.New("malformed chunked encoding")
	errChunkExcess    = errors.New("chunked encoding contains too much non-data")
	errTrailerLong    = errors.New("chunked trailer too long")
)

// done reports whether the body has ended: the last chunk and the trailer section read.
func (d *dechunker) done() bool { return d.st == dcDone }

// decode decodes p, the next bytes of the body, in place: it moves their data to p's front
// and returns its length, and how many bytes of p follow the body's end (a server sending
// more than its response).
func (d *dechunker) decode(p []byte) (n, extra int, err error) {
	i := 0
	for i < len(p) {
		switch d.st {
		case dcData:
			k := len(p) - i
			if uint64(k) > d.left {
				k = int(d.left)
			}
			if n != i {
				copy(p[n:], p[i:i+k])
			}
			n, i = n+k, i+k
			d.left -= uint64(k)
			if d.left == 0 {
				d.st = dcDataCR
			}
			continue
		case dcDone:
			return n, len(p) - i, nil
		case dcTrailer:
			k, err := d.trail(p[i:])
			if err != nil {
				return n, 0, err
			}
			i += k
			continue
		}
		c := p[i]
		i++
		switch d.st {
		case dcSize:
			if v, ok := unhex(c); ok {
				if d.digits == 16 {
					return n, 0, errChunkLength
				}
				d.left, d.digits = d.left<<4|uint64(v), d.digits+1
				break
			}
			if d.digits == 0 {
				return n, 0, errChunkLength
			}
			switch c {
			case '\r':
				d.st = dcCR
			case ';':
				d.st = dcExt
			case ' ', '\t':
				d.st = dcWS
			case '\n':
				return n, 0, errChunkLine
			default:
				return n, 0, errChunkLength
			}
		case dcWS:
			switch c {
			case '\r':
				d.st = dcCR
			case ' ', '\t':
			case '\n':
				return n, 0, errChunkLine
			default:
				return n, 0, errChunkLength
			}
		case dcExt:
			switch c {
			case '\r':
				d.st = dcCR
			case '\n':
				return n, 0, errChunkLine
			}
		case dcCR:
			if c != '\n' {
				return n, 0, errChunkLine
			}
			if err := d.endSizeLine(); err != nil {
				return n, 0, err
			}
			continue
		case dcDataCR:
			if c != '\r' {
				return n, 0, errChunkMalformed
			}
			d.st = dcDataLF
			continue
		case dcDataLF:
			if c != '\n' {
				return n, 0, errChunkMalformed
			}
			d.st, d.left, d.digits, d.lineLen = dcSize, 0, 0, 0
			continue
		}
		if c != '\r' {
			if d.lineLen++; d.lineLen > maxChunkLine {
				return n, 0, errChunkLineLong
			}
		}
	}
	return n, 0, nil
}

// endSizeLine ends a size line: the chunk's data follows, or, after the last chunk (size 0),
// the trailer section. It fails a line whose framing, with the chunks' before, is too much
// for their data.
func (d *dechunker) endSizeLine() error {
	d.excess += int64(d.lineLen) + 2 - 16 - 2*int64(min(d.left, 1<<61))
	d.excess = max(d.excess, 0)
	if d.excess > maxExcess {
		return errChunkExcess
	}
	if d.left == 0 {
		d.st = dcTrailer
		return nil
	}
	d.st = dcData
	return nil
}

// trail reads the trailer section from p, up to its empty line, and returns the bytes of p
// it took. An empty section (the common case: CRLF alone) is kept nowhere.
func (d *dechunker) trail(p []byte) (int, error) {
	for i, c := range p {
		if len(d.trailer)-d.lineAt == 0 && c == '\n' || len(d.trailer)-d.lineAt == 1 && c == '\n' && d.trailer[d.lineAt] == '\r' {
			// The empty line: the section's end.
			d.st = dcDone
			if d.lineAt == 0 {
				d.trailer = nil // no fields
			} else {
				d.trailer = append(d.trailer, c)
			}
			return i + 1, nil
		}
		if len(d.trailer) >= maxTrailer {
			return i, errTrailerLong
		}
		d.trailer = append(d.trailer, c)
		if c == '\n' {
			d.lineAt = len(d.trailer)
		}
	}
	return len(p), nil
}

// trailers returns the fields of the trailer section read, nil when it had none.
func (d *dechunker) trailers() (http.Header, error) {
	if len(d.trailer) == 0 {
		return nil, nil
	}
	h, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(d.trailer))).ReadMIMEHeader()
	if err != nil {
		return nil, err
	}
	return http.Header(h), nil
}

// unhex is the value of the hex digit c.
func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
