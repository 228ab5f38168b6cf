package traceimport

import (
	"strconv"
	"strings"
)

// parseMooncakeFast parses the common shape of a Mooncake line, an object of numbers and one
// array of whole numbers, about ten times faster than encoding/json. It returns false on
// anything else (strings, nesting, other keys' values it cannot skip), and the caller falls
// back to encoding/json, which also words the errors.
//
// The ids are appended to *arena, one backing array for many lines, and m.HashIDs is the
// line's part of it (capped, so appending to it cannot touch the next line's ids).
func parseMooncakeFast(b []byte, m *mooncakeLine, arena *[]uint64) bool {
	p := fastParser{b: b, arena: arena}
	if !p.eat('{') {
		return false
	}
	if p.eat('}') {
		return p.end()
	}
	for {
		key, ok := p.key()
		if !ok || !p.eat(':') {
			return false
		}
		switch key {
		case "timestamp":
			v, ok := p.float()
			if !ok {
				return false
			}
			m.Timestamp = &v
		case "input_length", "output_length":
			v, ok := p.int()
			if !ok {
				return false
			}
			if key == "input_length" {
				m.InputLength = &v
			} else {
				m.OutputLength = &v
			}
		case "hash_ids":
			ids, ok := p.ids()
			if !ok {
				return false
			}
			m.HashIDs = ids
		default:
			for _, k := range []string{"timestamp", "input_length", "output_length", "hash_ids"} {
				if strings.EqualFold(key, k) {
					return false // encoding/json matches keys case-insensitively
				}
			}
			if _, ok := p.float(); !ok { // other tools' numeric fields; anything else falls back
				return false
			}
		}
		if p.eat('}') {
			return p.end()
		}
		if !p.eat(',') {
			return false
		}
	}
}

type fastParser struct {
	b     []byte
	i     int
	arena *[]uint64
}

func (p *fastParser) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t') {
		p.i++
	}
}

func (p *fastParser) eat(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *fastParser) end() bool {
	p.space()
	return p.i == len(p.b)
}

// key reads a string of printable ASCII without escapes.
func (p *fastParser) key() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '"':
			k := string(p.b[start:p.i])
			p.i++
			return k, true
		case '\\':
			return "", false
		}
		if p.b[p.i] < 0x20 || p.b[p.i] >= 0x80 {
			return "", false
		}
		p.i++
	}
	return "", false
}

// number returns the bytes of a JSON number.
func (p *fastParser) number() []byte {
	p.space()
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		p.i++
	}
	return p.b[start:p.i]
}

// validNumber reports whether s is a number in JSON's grammar:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(s []byte) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	if n := digits(); n == 0 || (n > 1 && s[start] == '0') {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

func (p *fastParser) float() (float64, bool) {
	s := p.number()
	if !validNumber(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(s), 64)
	return v, err == nil
}

func (p *fastParser) int() (int, bool) {
	s := p.number()
	if !validNumber(s) {
		return 0, false
	}
	v, err := strconv.Atoi(string(s))
	return v, err == nil
}

// ids reads an array of non-negative whole numbers.
func (p *fastParser) ids() ([]uint64, bool) {
	if !p.eat('[') {
		return nil, false
	}
	if cap(*p.arena)-len(*p.arena) < 256 {
		*p.arena = make([]uint64, 0, 64<<10)
	}
	start := len(*p.arena)
	ids := (*p.arena)[start:start]
	done := func() ([]uint64, bool) {
		if start+len(ids) <= cap(*p.arena) { // else append moved ids out of the arena
			*p.arena = (*p.arena)[:start+len(ids)]
		}
		return ids[:len(ids):len(ids)], true
	}
	if p.eat(']') {
		return done()
	}
	for {
		p.space()
		var v uint64
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			d := uint64(p.b[p.i] - '0')
			if v > (1<<64-1-d)/10 {
				return nil, false
			}
			v = v*10 + d
			p.i++
			n++
		}
		if n == 0 || (n > 1 && p.b[p.i-n] == '0') {
			return nil, false
		}
		ids = append(ids, v)
		if p.eat(']') {
			return done()
		}
		if !p.eat(',') {
			return nil, false
		}
	}
}
