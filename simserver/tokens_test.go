package simserver

import (
	"strings"
	"testing"
)

func TestCountTokens(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},          // nothing
		{"   \n\t", 0},   // whitespace is free
		{"a", 1},         // a short word is one token
		{"four", 1},      // four bytes are one token
		{"hello", 2},     // five bytes are two
		{"abcdefgh", 2},  // eight bytes are two
		{"abcdefghi", 3}, // nine are three
		{"the cat  sat\non the mat", 6},
		{"x,y", 1},          // punctuation is part of the run
		{"héllo", 2},        // bytes, not runes: 6 bytes
		{" lead trail ", 3}, // "lead" 1, "trail" 2
	} {
		if got := CountTokens(tc.text); got != tc.want {
			t.Errorf("CountTokens(%q) = %d; want %d", tc.text, got, tc.want)
		}
	}
}

// TestGeneratedTextCountsOneTokenPerWord checks that the vocabulary is made of one-token
// lowercase words, so generated text re-counts to exactly the tokens generated.
func TestGeneratedTextCountsOneTokenPerWord(t *testing.T) {
	for _, w := range vocabulary {
		if len(w) == 0 || len(w) > 4 || strings.ToLower(w) != w || strings.ContainsAny(w, " \"\\") {
			t.Errorf("vocabulary word %q: want 1–4 lowercase letters", w)
		}
	}
	for _, n := range []int{1, 7, 100, 5000} {
		text := string(appendWords(nil, 42, 3, n))
		if got := CountTokens(text); got != n {
			t.Errorf("CountTokens(appendWords(42, 3, %d)) = %d; want %d", n, got, n)
		}
	}
	a := string(appendWords(nil, 42, 0, 10))
	b := string(appendWords(appendWords(nil, 42, 0, 4), 42, 4, 6))
	if a != b {
		t.Errorf("text depends on how it is split: %q != %q", a, b)
	}
}

func BenchmarkAppendWords(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = appendWords(buf[:0], 7, i, 8)
	}
}
