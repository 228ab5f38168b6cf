package agents

import (
	"unicode/utf16"
	"unicode/utf8"
)

// jstr is a JSON string value found in a data line, kept undecoded until it is needed.
type jstr struct {
	// raw is the text between the quotes. When esc is false it is plain ASCII and is the
	// decoded value itself; otherwise decode it with appendUnquoted.
	raw []byte
	// set reports that the key was present with a string value (not absent, not null).
	set bool
	// esc reports escapes or non-ASCII bytes in raw.
	esc bool
}

// appendTo appends the decoded value of s to dst.
func (s jstr) appendTo(dst []byte) []byte {
	if !s.esc {
		return append(dst, s.raw...)
	}
	return appendUnquoted(dst, s.raw)
}

// equals reports whether the decoded value of s is lit.
func (s jstr) equals(lit string) bool {
	if !s.esc {
		return string(s.raw) == lit
	}
	var buf [64]byte
	return string(s.appendTo(buf[:0])) == lit
}

// unescaped maps the byte after a backslash to the byte it stands for ('u' is handled apart).
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// appendUnquoted appends the decoded JSON string body s to dst, exactly as encoding/json
// decodes it: invalid UTF-8 and unpaired surrogates become U+FFFD. s must already have been
// validated by the scanner (complete escapes, no control characters, no bare quotes).
func appendUnquoted(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && s[i+1] == 'u':
			r := hex4(s[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				// A valid pair consumes the second escape; anything else becomes U+FFFD
				// and leaves what follows to be decoded on its own.
				if d := utf16.DecodeRune(r, u4At(s, i)); d != utf8.RuneError {
					dst = utf8.AppendRune(dst, d)
					i += 6
					continue
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		case c == '\\':
			dst = append(dst, unescaped[s[i+1]])
			i += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			dst = utf8.AppendRune(dst, r)
			i += n
		}
	}
	return dst
}

// u4At returns the code unit of a \uXXXX escape at s[i:], or -1 if there is none.
func u4At(s []byte, i int) rune {
	if len(s) < i+6 || s[i] != '\\' || s[i+1] != 'u' {
		return -1
	}
	return hex4(s[i+2 : i+6])
}

// hex4 decodes four hexadecimal digits, or returns -1.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		v := hexVal[c]
		if v < 0 {
			return -1
		}
		r = r<<4 | rune(v)
	}
	return r
}

// hexVal maps a byte to its hexadecimal value, or -1.
var hexVal = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = int8(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = int8(c - 'a' + 10)
		t[c-'a'+'A'] = int8(c - 'a' + 10)
	}
	return t
}()
