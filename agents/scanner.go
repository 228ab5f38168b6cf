package agents

// scanner is a validating, allocation-free JSON reader over one data line. Any syntax it
// does not accept sets bad and moves to the end of the input, so every later step fails
// fast; the caller then falls back to encoding/json.
type scanner struct {
	b     []byte
	i     int
	depth int
	bad   bool
}

// fail marks the line as not read by the fast path.
func (s *scanner) fail() {
	s.bad = true
	s.i = len(s.b)
}

// ws skips JSON whitespace.
func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// open consumes c, the opening byte of an object or array.
func (s *scanner) open(c byte) bool {
	if s.peek() != c {
		s.fail()
		return false
	}
	s.i++
	s.depth++
	if s.depth > maxFastDepth {
		s.fail()
		return false
	}
	return true
}

// next reports whether the open container has another element, n elements having been read;
// it consumes the separating comma, or the closing byte at the end.
func (s *scanner) next(closing byte, n int) bool {
	c := s.peek()
	if c == closing && !s.bad {
		s.i++
		s.depth--
		return false
	}
	if n > 0 {
		if c != ',' {
			s.fail()
			return false
		}
		s.i++
	}
	return !s.bad
}

// key reads a member name and its colon. Escaped names are left to encoding/json.
func (s *scanner) key() []byte {
	k := s.str()
	if k.esc && hasBackslash(k.raw) {
		s.fail()
	}
	if s.peek() != ':' {
		s.fail()
		return nil
	}
	s.i++
	return k.raw
}

// hasBackslash reports whether b contains an escape.
func hasBackslash(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

// plain marks the string bytes that need no attention: not a quote, backslash, control
// character or non-ASCII byte.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads a string, checking its escapes.
func (s *scanner) str() (v jstr) {
	if s.peek() != '"' {
		s.fail()
		return v
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case plain[c]:
			s.i++
		case c == '"':
			v.raw, v.set = s.b[start:s.i], true
			s.i++
			return v
		case c == '\\':
			v.esc = true
			s.escape()
		case c >= 0x80:
			v.esc = true
			s.i++
		default: // control character
			s.fail()
		}
	}
	s.fail()
	return jstr{}
}

// escape checks the escape sequence at s.i.
func (s *scanner) escape() {
	if s.i+1 >= len(s.b) {
		s.fail()
		return
	}
	switch s.b[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
	case 'u':
		if s.i+6 > len(s.b) || hex4(s.b[s.i+2:s.i+6]) < 0 {
			s.fail()
			return
		}
		s.i += 6
	default:
		s.fail()
	}
}

// null consumes a null literal if one is next.
func (s *scanner) null() bool {
	if s.peek() == 'n' && s.lit("null") {
		return true
	}
	return false
}

// lit consumes the literal word w, which must be next.
func (s *scanner) lit(w string) bool {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		s.fail()
		return false
	}
	s.i += len(w)
	return true
}

// strOrNull reads a string or null (the zero jstr).
func (s *scanner) strOrNull() jstr {
	if s.null() {
		return jstr{}
	}
	return s.str()
}

// intOrNull reads a plain integer or null (0). Fractions, exponents and integers of more
// than 15 digits are left to encoding/json, whose float64 reading this must match.
func (s *scanner) intOrNull() int {
	if s.null() {
		return 0
	}
	neg := s.peek() == '-'
	if neg {
		s.i++
	}
	start, v := s.i, 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		v = v*10 + int(s.b[s.i]-'0')
		s.i++
	}
	digits := s.i - start
	if digits == 0 || digits > 15 || (digits > 1 && s.b[start] == '0') || s.numberGoesOn() {
		s.fail()
		return 0
	}
	if neg {
		return -v
	}
	return v
}

// numberGoesOn reports a fraction or exponent after an integer's digits.
func (s *scanner) numberGoesOn() bool {
	return s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E')
}

// skip reads and checks any value.
func (s *scanner) skip() {
	switch c := s.peek(); {
	case c == '{':
		s.open('{')
		for n := 0; s.next('}', n); n++ {
			s.key()
			s.skip()
		}
	case c == '[':
		s.open('[')
		for n := 0; s.next(']', n); n++ {
			s.skip()
		}
	case c == '"':
		s.str()
	case c == 't':
		s.lit("true")
	case c == 'f':
		s.lit("false")
	case c == 'n':
		s.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		s.number()
	default:
		s.fail()
	}
}

// number checks a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		s.fail()
		return
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			s.fail()
			return
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			s.fail()
		}
	}
}

// digits consumes decimal digits and returns how many.
func (s *scanner) digits() int {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}
