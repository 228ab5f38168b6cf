package simserver

import (
	"encoding/json"
	"errors"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// A request body is read as it arrives and kept compact: every string of a text member
// longer than longText bytes — a message's content, a tool call's arguments, a tool's output,
// at the paths textPaths names — is replaced by a placeholder holding its digest and tokens
// (textDigest), made from its decoded bytes as they arrive. What remains is the body's
// structure and short strings, which the request's parser reads as it read the whole body: the
// same members, types and values, the same faults in the same order, only texts the
// simulator never quotes digested early. A coding-agent request of ~0.5 MB compacts to a few
// kilobytes and its tool definitions, and no part of it is held whole on the way.
//
// The body is not checked here: a fault is left for the parser to find. A string that is
// not well formed is kept as it is from its fault on, and everything after it; a syntax
// error's offset is given back in the body's bytes (compactBody.original).

// longText is the length from which a text member's string is digested rather than kept,
// in bytes as sent.
const longText = 256

// textPaths are the members whose strings are texts, by API: a path of lower-cased member
// names, "[]" for an array's element. Member names match as encoding/json matches them, but
// for case folding beyond ASCII, which only keeps a string whole.
var textPaths = map[bool]map[string]bool{
	false: { // chat completions
		"messages/[]/content":                          true,
		"messages/[]/content/[]/text":                  true,
		"messages/[]/tool_calls/[]/function/arguments": true,
		"messages/[]/reasoning_content":                true,
		"messages/[]/reasoning":                        true,
	},
	true: { // the Responses API; not instructions, which the response echoes
		"input":                       true,
		"input/[]/content":            true,
		"input/[]/content/[]/text":    true,
		"input/[]/content/[]/refusal": true,
		"input/[]/arguments":          true,
		"input/[]/input":              true,
		"input/[]/output":             true,
		"input/[]/output/[]/text":     true,
		"input/[]/summary/[]/text":    true,
	},
}

// compactBody is a request body as compactBody read it.
type compactBody struct {
	data []byte
	// shifts say where the data is shorter than the body: from data offset at on, the body is
	// saved bytes further on.
	shifts []shift
}

// shift is a point from which data is saved bytes shorter than the body.
type shift struct{ at, saved int64 }

// original is the body's offset of data offset off.
func (c *compactBody) original(off int64) int64 {
	saved := int64(0)
	for _, s := range c.shifts {
		if s.at > off {
			break
		}
		saved = s.saved
	}
	return off + saved
}

// compactor reads a body into a compactBody.
type compactor struct {
	src      io.Reader
	buf      []byte
	pos, end int
	readErr  error // of src, once it has failed or ended

	out      compactBody
	saved    int64
	paths    map[string]bool
	stack    []lexFrame
	path     []byte // scratch
	verbatim bool   // the rest is copied as it is
}

// lexFrame is an open object or array.
type lexFrame struct {
	obj       bool
	expectKey bool   // an object's next string is a member name
	key       string // the member being read, lower-cased; "" when not ASCII or too long to match
}

// readCompact reads src to its end into a compact body; responses chooses the API's paths.
// reserve is the room to start with, in bytes. The error is src's.
func readCompact(src io.Reader, responses bool, reserve int) (*compactBody, error) {
	c := &compactor{src: src, buf: make([]byte, 4<<10), paths: textPaths[responses]}
	c.out.data = make([]byte, 0, reserve)
	err := c.run()
	return &c.out, err
}

// fill makes at least n bytes available from pos, unless src ends first; false when none is.
func (c *compactor) fill(n int) bool {
	for c.end-c.pos < n && c.readErr == nil {
		if c.pos > 0 {
			c.end = copy(c.buf, c.buf[c.pos:c.end])
			c.pos = 0
		}
		k, err := c.src.Read(c.buf[c.end:])
		c.end += k
		if err != nil {
			c.readErr = err
		}
	}
	return c.end > c.pos
}

// run reads the whole body.
func (c *compactor) run() error {
	for c.fill(1) {
		if c.verbatim {
			c.out.data = append(c.out.data, c.buf[c.pos:c.end]...)
			c.pos = c.end
			continue
		}
		b := c.buf[c.pos:c.end]
		i := 0
		for i < len(b) && !structural[b[i]] {
			i++
		}
		c.out.data = append(c.out.data, b[:i]...)
		c.pos += i
		if i == len(b) {
			continue
		}
		ch := b[i]
		if ch == '"' {
			c.str()
			continue
		}
		c.out.data = append(c.out.data, ch)
		c.pos++
		c.punct(ch)
	}
	if errors.Is(c.readErr, io.EOF) {
		return nil
	}
	return c.readErr
}

// structural marks the bytes that change where the reader is in the body.
var structural = func() (s [256]bool) {
	for _, ch := range []byte(`{}[]:,"`) {
		s[ch] = true
	}
	return s
}()

// punct follows the body's structure past ch.
func (c *compactor) punct(ch byte) {
	var top *lexFrame
	if n := len(c.stack); n > 0 {
		top = &c.stack[n-1]
	}
	switch ch {
	case '{':
		c.stack = append(c.stack, lexFrame{obj: true, expectKey: true})
	case '[':
		c.stack = append(c.stack, lexFrame{})
	case '}', ']':
		if top == nil || top.obj != (ch == '}') {
			c.verbatim = true // not JSON: the parser says where
			return
		}
		c.stack = c.stack[:len(c.stack)-1]
	case ':':
		if top != nil && top.obj {
			top.expectKey = false
		}
	case ',':
		if top != nil && top.obj {
			top.expectKey, top.key = true, ""
		}
	}
}

// str reads a string: a member name, kept and noted; a text, digested when long; or another
// value, kept.
func (c *compactor) str() {
	n := len(c.stack)
	if n > 0 && c.stack[n-1].obj && c.stack[n-1].expectKey {
		c.stack[n-1].key = c.keep(true)
		return
	}
	if c.isText() {
		c.text()
		return
	}
	c.keep(false)
}

// isText reports whether the string about to be read is at a text path.
func (c *compactor) isText() bool {
	if len(c.stack) > 6 {
		return false
	}
	p := c.path[:0]
	for i, f := range c.stack {
		if i > 0 {
			p = append(p, '/')
		}
		switch {
		case !f.obj:
			p = append(p, "[]"...)
		case f.key == "":
			return false
		default:
			p = append(p, f.key...)
		}
	}
	c.path = p
	return c.paths[string(p)]
}

// maxKey is the longest member name matched against textPaths, in bytes.
const maxKey = 32

// keep copies a string as it is, the quotes included; name asks for its value lower-cased
// when it is a short ASCII name without escapes ("" otherwise). A string that is not well
// formed is copied with the rest of the body.
func (c *compactor) keep(name bool) string {
	c.out.data = append(c.out.data, '"')
	c.pos++
	start := len(c.out.data)
	plain := name
	for c.fill(1) {
		b := c.buf[c.pos:c.end]
		i := 0
		for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20 {
			i++
		}
		c.out.data = append(c.out.data, b[:i]...)
		c.pos += i
		if i == len(b) {
			continue
		}
		switch ch := b[i]; {
		case ch == '"':
			c.out.data = append(c.out.data, '"')
			c.pos++
			s := c.out.data[start : len(c.out.data)-1]
			if !plain || len(s) > maxKey {
				return ""
			}
			return lowerASCII(s)
		case ch == '\\':
			plain = false
			if !c.fill(2) || c.end-c.pos < 2 {
				c.verbatim = true
				return ""
			}
			c.out.data = append(c.out.data, c.buf[c.pos:c.pos+2]...)
			c.pos += 2
		default:
			c.verbatim = true // a control character: the parser says where
			return ""
		}
	}
	c.verbatim = true
	return ""
}

// lowerASCII is s lower-cased, or "" when s is not all ASCII.
func lowerASCII(s []byte) string {
	out := make([]byte, len(s))
	for i, ch := range s {
		switch {
		case ch >= 0x80:
			return ""
		case 'A' <= ch && ch <= 'Z':
			ch += 'a' - 'A'
		}
		out[i] = ch
	}
	return string(out)
}

// text reads a text member's string: kept as it is while it is short, digested and replaced
// by its placeholder once it is long. Its digest is of its bytes as encoding/json decodes
// them — escapes resolved, an unpaired surrogate or a byte not UTF-8 as U+FFFD — so a text
// digests the same whichever way it came.
func (c *compactor) text() {
	quote := len(c.out.data)
	c.out.data = append(c.out.data, '"')
	c.pos++
	raw := int64(1) // bytes of the body the string took so far
	long := false
	d := textCounter{hash: fnvOffset64}
	// fault keeps the string from its fault on, dropping what was digested of it.
	fault := func() {
		if long {
			c.out.data = append(c.out.data[:quote], '"')
			c.saved += raw - 1
			c.out.shifts = append(c.out.shifts, shift{at: int64(len(c.out.data)), saved: c.saved})
		}
		c.verbatim = true
	}
	for {
		if !c.fill(1) {
			fault()
			return
		}
		b := c.buf[c.pos:c.end]
		i := 0
		for i < len(b) {
			ch := b[i]
			if ch == '"' || ch == '\\' || ch < 0x20 || ch >= 0x80 {
				break
			}
			d.byte(ch)
			i++
		}
		if !long {
			c.out.data = append(c.out.data, b[:i]...)
		}
		c.pos += i
		raw += int64(i)
		if !long && raw > longText {
			long = true
			c.out.data = c.out.data[:quote]
		}
		if i == len(b) {
			continue
		}
		var n int // bytes the next element takes
		switch ch := b[i]; {
		case ch == '"':
			raw++
			c.pos++
			if !long {
				c.out.data = append(c.out.data, '"')
				return
			}
			c.out.data = append(appendPlaceholder(append(c.out.data, '"'), d.hash, d.tokens()), '"')
			c.saved += raw - int64(len(c.out.data)-quote)
			c.out.shifts = append(c.out.shifts, shift{at: int64(len(c.out.data)), saved: c.saved})
			return
		case ch == '\\':
			c.fill(12)
			if n = d.escape(c.buf[c.pos:c.end]); n == 0 {
				fault()
				return
			}
		case ch < 0x20:
			fault()
			return
		default:
			c.fill(utf8.UTFMax)
			n = d.utf8(c.buf[c.pos:c.end])
		}
		if !long {
			c.out.data = append(c.out.data, c.buf[c.pos:c.pos+n]...)
		}
		c.pos += n
		raw += int64(n)
	}
}

// textCounter digests a text's decoded bytes as they come: FNV-1a and CountTokens.
type textCounter struct {
	hash   uint64
	count  int // tokens of the runs ended
	run    int // bytes of the run of non-space bytes going on
	encode [utf8.UTFMax]byte
}

// byte digests one decoded byte.
func (d *textCounter) byte(ch byte) {
	d.hash = (d.hash ^ uint64(ch)) * fnvPrime64
	if isSpace(ch) {
		d.count += (d.run + bytesPerToken - 1) / bytesPerToken
		d.run = 0
		return
	}
	d.run++
}

// bytes digests decoded bytes.
func (d *textCounter) bytes(b []byte) {
	for _, ch := range b {
		d.byte(ch)
	}
}

// tokens is CountTokens of the text so far.
func (d *textCounter) tokens() int { return d.count + (d.run+bytesPerToken-1)/bytesPerToken }

// rune digests the UTF-8 encoding of r.
func (d *textCounter) rune(r rune) { d.bytes(d.encode[:utf8.EncodeRune(d.encode[:], r)]) }

// escape digests the escape at the start of b (a backslash, and up to 11 more bytes of the
// body) as encoding/json decodes it, and returns its length; 0 when it is not well formed.
func (d *textCounter) escape(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/':
		d.byte(b[1])
	case 'b':
		d.byte('\b')
	case 'f':
		d.byte('\f')
	case 'n':
		d.byte('\n')
	case 'r':
		d.byte('\r')
	case 't':
		d.byte('\t')
	case 'u':
		r := hex4(b[2:])
		if r < 0 {
			return 0
		}
		if utf16.IsSurrogate(r) {
			if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
				if r2 := hex4(b[8:]); r2 >= 0 {
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						d.rune(pair)
						return 12
					}
				}
			}
			r = utf8.RuneError
		}
		d.rune(r)
		return 6
	default:
		return 0
	}
	return 2
}

// utf8 digests the byte sequence at the start of b as encoding/json decodes it — a rune, or a
// byte that begins none as U+FFFD — and returns its length.
func (d *textCounter) utf8(b []byte) int {
	r, n := utf8.DecodeRune(b)
	if r == utf8.RuneError && n == 1 {
		d.rune(utf8.RuneError)
		return 1
	}
	d.bytes(b[:n])
	return n
}

// hex4 is the value of four hexadecimal digits at the start of b, or -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, ch := range b[:4] {
		switch {
		case '0' <= ch && ch <= '9':
			ch -= '0'
		case 'a' <= ch && ch <= 'f':
			ch = ch - 'a' + 10
		case 'A' <= ch && ch <= 'F':
			ch = ch - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(ch)
	}
	return r
}

// placeSyntaxError gives the offset of the syntax error aerr reports, if it is one, in the
// body's bytes rather than the compact body's.
func (c *compactBody) placeSyntaxError(aerr *apiError) *apiError {
	if len(c.shifts) == 0 || json.Valid(c.data) {
		return aerr
	}
	var syntax *json.SyntaxError
	if !errors.As(json.Unmarshal(c.data, new(any)), &syntax) {
		return aerr
	}
	return syntaxError(syntax, c.original(syntax.Offset))
}
