package simserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSON values as the tool-call model reads schemas and writes arguments: an object keeps its
// keys in order (jsonObject), so arguments list their properties as the schema declares them;
// a number is a json.Number, exact as written; arrays are []any, strings string, booleans
// bool and null nil.

// jsonObject is a JSON object with its members in order.
type jsonObject []jsonMember

// jsonMember is one member of a jsonObject.
type jsonMember struct {
	key string
	val any
}

// get returns the value of key and whether the object has it.
func (o jsonObject) get(key string) (any, bool) {
	for _, m := range o {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

// decodeOrdered decodes one JSON value, objects as jsonObject (a repeated key keeps its last
// value, as encoding/json does) and numbers as json.Number.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// decodeValue reads the next value from dec.
func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
		obj := jsonObject{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			obj = obj.set(k.(string), v)
		}
		_, err := dec.Token()
		return obj, err
	}
	return tok, nil
}

// set returns the object with key set to v, in place when it has the key already.
func (o jsonObject) set(key string, v any) jsonObject {
	for i := range o {
		if o[i].key == key {
			o[i].val = v
			return o
		}
	}
	return append(o, jsonMember{key, v})
}

// appendJSON appends v as compact JSON in ASCII: every rune beyond ASCII, and every control
// character, is escaped, so the text can be cut anywhere between bytes into stream pieces.
func appendJSON(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case json.Number:
		return append(b, x...)
	case string:
		return appendASCIIString(b, x)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, e)
		}
		return append(b, ']')
	case jsonObject:
		b = append(b, '{')
		for i, m := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendASCIIString(b, m.key)
			b = append(b, ':')
			b = appendJSON(b, m.val)
		}
		return append(b, '}')
	}
	panic(fmt.Sprintf("appendJSON: %T is no JSON value", v))
}

// appendASCIIString appends s as a JSON string in ASCII.
func appendASCIIString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r >= 0x20 && r < 0x7f:
			b = append(b, byte(r))
		case r < 0x10000:
			b = appendUnicodeEscape(b, r)
		default:
			r1, r2 := surrogates(r)
			b = appendUnicodeEscape(appendUnicodeEscape(b, r1), r2)
		}
	}
	return append(b, '"')
}

// surrogates splits a rune beyond the basic plane into its UTF-16 pair.
func surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

func appendUnicodeEscape(b []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// appendEscaped appends ASCII text as the inside of a JSON string: quotes and backslashes
// escaped. It is how argument text (itself JSON) goes into a delta's arguments field.
func appendEscaped(b []byte, text []byte) []byte {
	for _, c := range text {
		if c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return b
}

// equalJSON reports whether two JSON values are equal as JSON Schema compares them: numbers
// by value (1 equals 1.0), objects whatever the order of their members.
func equalJSON(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		return ok && numberCmp(x, y) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case jsonObject:
		y, ok := b.(jsonObject)
		if !ok || len(x) != len(y) {
			return false
		}
		for _, m := range x {
			w, ok := y.get(m.key)
			if !ok || !equalJSON(m.val, w) {
				return false
			}
		}
		return true
	}
	return a == b
}

// rat returns a JSON number as an exact rational; false if it is not one, or if its exponent
// is beyond ±maxExponent (1e999999999 would take big.Rat gigabytes).
func rat(n json.Number) (*big.Rat, bool) {
	s := string(n)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > maxExponent || e < -maxExponent {
			return nil, false
		}
	}
	return new(big.Rat).SetString(s)
}

// maxExponent bounds the exponents of the numbers in schemas and arguments.
const maxExponent = 400

// numberCmp compares two JSON numbers exactly.
func numberCmp(a, b json.Number) int {
	x, ok1 := rat(a)
	y, ok2 := rat(b)
	if !ok1 || !ok2 {
		return bytes.Compare([]byte(a), []byte(b))
	}
	return x.Cmp(y)
}

// runeCount is a string's length as JSON Schema counts it, in code points.
func runeCount(s string) int { return utf8.RuneCountInString(s) }
