package record

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"unicode/utf8"
)

// A stream's frames are read by a scan of their bytes rather than by encoding/json: the
// proxy reads a handful of fields of every frame a harness receives, and decoding each frame
// by reflection cost more CPU than the server spent making it. scanChunk reads the frames a
// stream is made of — one choice whose delta carries content or reasoning text, or nothing,
// and a finish reason — exactly as json.Unmarshal into a streamChunk would, and hands any
// other frame back to it: tool-call deltas, usage, an error, several choices, an escaped
// string in a field it reads, a key that matches a field only without regard to case (as
// encoding/json matches them), a repeated field, invalid JSON.

// chunk is what scanChunk read of a chat chunk: its choice's fields, which point into the
// frame's bytes, and which of them it met (a repeated one goes to encoding/json).
type chunk struct {
	choice                                     bool // the chunk has a choice
	content, text, reasoningContent, reasoning []byte
	finish                                     []byte
	hasContent, hasText, hasRC, hasReason      bool
	hasFinish, hasDelta                        bool
}

// scanChunk reads data, one chat chunk's JSON, and reports whether it could. m, when not
// nil, is what the stream's last scanned frame left (see chunkMemo): a frame that differs
// from that one only in its content's text is read from it, one that begins with its bytes
// up to its choices key is read on from there, and a frame read otherwise leaves its own.
func scanChunk(data []byte, m *chunkMemo) (chunk, bool) {
	if c, ok := m.same(data); ok {
		return c, true
	}
	var c chunk
	s := scanner{b: data}
	seen := 0 // bit 0 choices, 1 usage, 2 error
	keyAt := 0
	if k := m.prefix(); len(k) > 0 && bytes.HasPrefix(data, k) {
		s.i, s.depth, seen, keyAt = len(k), 1, m.seen, len(k)
	} else {
		if s.peek() != '{' {
			return c, false
		}
		s.i++
		s.depth++
		if s.peek() == '}' {
			s.i++
			s.space()
			return c, s.i == len(s.b)
		}
	}
	seenBefore := seen
	for {
		if s.peek() != '"' {
			return c, false
		}
		at := s.i
		key, plain, ok := s.str()
		if !ok || !plain || s.peek() != ':' {
			return c, false
		}
		s.i++
		switch string(key) {
		case "choices":
			if seen&1 == 0 {
				keyAt, seenBefore = at, seen
			}
			ok = once(&seen, 1) && s.choices(&c)
		case "usage":
			ok = once(&seen, 2) && s.null()
		case "error":
			ok = once(&seen, 4) && s.null()
		default:
			ok = !foldsTo(key, "choices", "usage", "error") && s.skip()
		}
		if !ok {
			return c, false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.space()
			if s.i != len(s.b) {
				return c, false
			}
			m.remember(data, keyAt, seenBefore, &s, c)
			return c, true
		default:
			return c, false
		}
	}
}

// chunkMemo is what a stream's last scanned frame leaves for the next. Every chunk of one
// reply repeats the same id, object, created and model, and most differ only in their
// content's text, so a frame is mostly the bytes of the one before. The scan reads bytes in
// order, and its state at any byte depends only on the bytes before it, so:
//   - a frame that begins with the last one's bytes up to its choices key is in the state
//     that one's scan was in at that key, and is read on from there;
//   - a frame that is the last one with another plain string as its content (the same bytes
//     before the string and after it) reads as that one did, with that content, provided the
//     last one read nothing else that points into its bytes (no finish reason, no other
//     text).
//
// frame is the last frame (when at most maxMemoFrame bytes), keyAt where its choices key
// begins (0 when it has none), seen the fields met before it; valAt and valEnd delimit its
// content's bytes between the quotes when it can stand for frames differing there (else
// valEnd is 0), and read is what it read.
type chunkMemo struct {
	frame         []byte
	keyAt, seen   int
	valAt, valEnd int
	read          chunk
}

// maxMemoFrame bounds the bytes a stream keeps of its last frame.
const maxMemoFrame = 512

// same reads data when it is the memo's frame with another plain string as its content.
func (m *chunkMemo) same(data []byte) (chunk, bool) {
	if m == nil || m.valEnd == 0 {
		return chunk{}, false
	}
	before, after := m.frame[:m.valAt], m.frame[m.valEnd+1:]
	if len(data) <= len(before)+len(after) || !bytes.HasPrefix(data, before) || !bytes.HasSuffix(data, after) {
		return chunk{}, false
	}
	s := scanner{b: data[:len(data)-len(after)], i: m.valAt - 1} // at the opening quote
	v, plain, ok := s.str()
	if !ok || !plain || s.i != len(s.b) {
		return chunk{}, false
	}
	c := m.read
	c.content = v
	return c, true
}

// prefix returns the memo frame's bytes before its choices key, or nothing.
func (m *chunkMemo) prefix() []byte {
	if m == nil {
		return nil
	}
	return m.frame[:m.keyAt]
}

// remember keeps data, a frame read whole into c by s, as the memo's frame: keyAt is where
// its choices key begins and seen the fields met before it.
func (m *chunkMemo) remember(data []byte, keyAt, seen int, s *scanner, c chunk) {
	if m == nil {
		return
	}
	if len(data) > maxMemoFrame {
		m.frame, m.keyAt, m.valEnd = m.frame[:0], 0, 0
		return
	}
	m.frame, m.keyAt, m.seen, m.valEnd = append(m.frame[:0], data...), keyAt, seen, 0
	if c.choice && s.valEnd > 0 && len(c.text)+len(c.reasoningContent)+len(c.reasoning)+len(c.finish) == 0 {
		m.valAt, m.valEnd, m.read = s.valAt, s.valEnd, c
		m.read.content, m.read.text, m.read.reasoningContent, m.read.reasoning, m.read.finish = nil, nil, nil, nil, nil
	}
}

// scanEvent reads data, one Responses stream event's JSON, as json.Unmarshal into a
// responseEvent would, when it has neither item, response nor message (the delta events a
// reply streams): its type, delta and output index, the strings pointing into data. Any other
// event, and one with an escaped string in a field it reads, goes to encoding/json.
func scanEvent(data []byte) (typ, delta []byte, index int, ok bool) {
	s := scanner{b: data}
	var hasType, hasDelta, hasIndex bool
	ok = s.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return s.text(&typ, &hasType)
		case "delta":
			return s.text(&delta, &hasDelta)
		case "output_index":
			return !hasIndex && s.integer(&index, &hasIndex)
		}
		return !foldsTo(key, "type", "delta", "output_index", "item", "response", "message") && s.skip()
	})
	s.space()
	return typ, delta, index, ok && s.i == len(s.b)
}

// integer reads an int field's value: an integer that fits an int, or null (which leaves it
// as it was, as encoding/json does).
func (s *scanner) integer(dst *int, has *bool) bool {
	*has = true
	if s.peek() == 'n' {
		return s.literal("null")
	}
	start := s.i
	if !s.number() {
		return false
	}
	n, err := strconv.Atoi(string(s.b[start:s.i]))
	*dst = n
	return err == nil
}

// once sets bit in seen and reports whether it was clear: a field's first occurrence.
func once(seen *int, bit int) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// foldsTo reports whether key equals one of names without regard to case: a field
// encoding/json would fill that the scan leaves to it.
func foldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if len(key) == len(n) && bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// maxDepth is the deepest nesting the scan reads, as encoding/json's.
const maxDepth = 10000

// scanner reads JSON from b at i; depth is the objects and arrays open. valAt and valEnd
// delimit the bytes of a chat chunk's content string between its quotes, once read.
type scanner struct {
	b             []byte
	i             int
	depth         int
	valAt, valEnd int
}

// space skips JSON whitespace.
func (s *scanner) space() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return // the common case: no whitespace between tokens
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, or 0 at the end.
func (s *scanner) peek() byte {
	s.space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// object reads an object, calling field with each key (unescaped keys only) to read its value.
func (s *scanner) object(field func(key []byte) bool) bool {
	if s.peek() != '{' || s.depth >= maxDepth {
		return false
	}
	s.i++
	s.depth++
	defer func() { s.depth-- }()
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		if s.peek() != '"' {
			return false
		}
		key, plain, ok := s.str()
		if !ok || !plain || s.peek() != ':' {
			return false
		}
		s.i++
		if !field(key) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// str reads a string and returns its bytes between the quotes; plain says they need no
// unescaping and are valid UTF-8, so that they are the string's value as they stand. Eight
// bytes at a time pass while none of them is a quote, a backslash, a control byte or
// non-ASCII; the byte loop reads from the first eight that has one.
func (s *scanner) str() (v []byte, plain, ok bool) {
	start := s.i + 1
	i := start
	for i+8 <= len(s.b) && !special8(binary.LittleEndian.Uint64(s.b[i:])) {
		i += 8
	}
	plain = true
	ascii := true
	for ; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			v = s.b[start:i]
			return v, plain && (ascii || utf8.Valid(v)), true
		case c == '\\':
			plain = false
			i++
			if i >= len(s.b) {
				return nil, false, false
			}
			switch s.b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(s.b) || !hex4(s.b[i+1:i+5]) {
					return nil, false, false
				}
				i += 4
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, false, false
}

// special8 reports whether any of the eight bytes in w is a quote, a backslash, below 0x20 or
// 0x80 and above (a byte that needs the string's byte loop): zero bytes of w^'"…' and
// w^'\\…', and bytes below 0x20, found by borrows, as in "Bit Twiddling Hacks" (haszero,
// hasless).
func special8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(x uint64) uint64 { return (x - ones) & ^x & highs }
	return (zero(w^('"'*ones)) | zero(w^('\\'*ones)) | ((w - 0x20*ones) & ^w & highs) | w&highs) != 0
}

// hex4 reports whether b is four hex digits.
func hex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// literal reads the literal word.
func (s *scanner) literal(word string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

// null reads null.
func (s *scanner) null() bool { return s.peek() == 'n' && s.literal("null") }

// text reads a string field's value: a string that needs no unescaping, or null (which
// leaves the field as it was, as encoding/json does).
func (s *scanner) text(dst *[]byte, has *bool) bool {
	if *has {
		return false
	}
	*has = true
	switch s.peek() {
	case 'n':
		return s.literal("null")
	case '"':
		v, plain, ok := s.str()
		*dst = v
		return ok && plain
	}
	return false
}

// choices reads the choices: null, none, or one.
func (s *scanner) choices(c *chunk) bool {
	switch s.peek() {
	case 'n':
		return s.literal("null")
	case '[':
	default:
		return false
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		return true
	}
	c.choice = true
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "delta":
			return !c.hasDelta && s.delta(c)
		case "text":
			return s.text(&c.text, &c.hasText)
		case "finish_reason":
			return s.text(&c.finish, &c.hasFinish)
		}
		return !foldsTo(key, "delta", "text", "finish_reason") && s.skip()
	})
	if !ok || s.peek() != ']' {
		return false // not an object, or more than one choice
	}
	s.i++
	return true
}

// delta reads a choice's delta: null, or an object without tool calls.
func (s *scanner) delta(c *chunk) bool {
	c.hasDelta = true
	if s.peek() == 'n' {
		return s.literal("null")
	}
	tools := false
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "content":
			at := s.peek() == '"'
			start := s.i + 1
			if !s.text(&c.content, &c.hasContent) {
				return false
			}
			if at {
				s.valAt, s.valEnd = start, s.i-1
			}
			return true
		case "reasoning_content":
			return s.text(&c.reasoningContent, &c.hasRC)
		case "reasoning":
			return s.text(&c.reasoning, &c.hasReason)
		case "tool_calls":
			if tools {
				return false
			}
			tools = true
			if s.null() {
				return true
			}
			if s.peek() != '[' {
				return false
			}
			s.i++
			if s.peek() != ']' {
				return false // tool-call deltas go to encoding/json
			}
			s.i++
			return true
		}
		return !foldsTo(key, "content", "reasoning_content", "reasoning", "tool_calls") && s.skip()
	})
}

// skip reads any JSON value, checking it is well formed.
func (s *scanner) skip() bool {
	switch c := s.peek(); {
	case c == '{':
		return s.object(func([]byte) bool { return s.skip() })
	case c == '[':
		if s.depth >= maxDepth {
			return false
		}
		s.i++
		s.depth++
		defer func() { s.depth-- }()
		if s.peek() == ']' {
			s.i++
			return true
		}
		for {
			if !s.skip() {
				return false
			}
			switch s.peek() {
			case ',':
				s.i++
			case ']':
				s.i++
				return true
			default:
				return false
			}
		}
	case c == '"':
		_, _, ok := s.str()
		return ok
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return false
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	s.i = i
	return true
}
