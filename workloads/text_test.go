package workloads

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestVocabulary checks the properties Text's token counts rely on.
func TestVocabulary(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range vocabulary {
		if len(w) < 1 || len(w) > 4 || strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") != "" {
			t.Errorf("vocabulary word %q: want 1–4 lower-case letters", w)
		}
		if seen[w] {
			t.Errorf("vocabulary word %q appears twice", w)
		}
		seen[w] = true
	}
}

// TestTextLength checks that Text returns exactly tokens vocabulary words.
func TestTextLength(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 7, 8, 9, 1000, 12345} {
		got := Text(1, 2, 3, "read", n)
		words := strings.Fields(got)
		if want := max(n, 0); len(words) != want {
			t.Errorf("Text(1, 2, 3, read, %d) has %d words; want %d", n, len(words), want)
		}
		if strings.Join(words, " ") != got {
			t.Errorf("Text(1, 2, 3, read, %d) is not single-space separated", n)
		}
		for _, w := range words {
			if !slices.Contains(vocabulary[:], w) {
				t.Fatalf("Text(1, 2, 3, read, %d) has %q, not in the vocabulary", n, w)
			}
		}
	}
}

// TestTextDeterministic checks that equal inputs give equal text and that changing any one
// input changes it.
func TestTextDeterministic(t *testing.T) {
	base := Text(1, 2, 3, "read", 64)
	if again := Text(1, 2, 3, "read", 64); again != base {
		t.Fatalf("Text(1, 2, 3, read, 64) differs between calls:\n%s\n%s", base, again)
	}
	if prefix := Text(1, 2, 3, "read", 10); !strings.HasPrefix(base, prefix) {
		t.Errorf("Text(…, 10) = %q; want a prefix of Text(…, 64)", prefix)
	}
	variants := map[string]string{
		"seed":  Text(2, 2, 3, "read", 64),
		"agent": Text(1, 3, 3, "read", 64),
		"round": Text(1, 2, 4, "read", 64),
		"part":  Text(1, 2, 3, "task", 64),
		// Swapped agent and round must not collide either.
		"swap": Text(1, 3, 2, "read", 64),
	}
	for what, v := range variants {
		if v == base {
			t.Errorf("changing %s left the text unchanged", what)
		}
	}
}

// TestTextUsesWholeVocabulary checks that a long text draws every word, roughly evenly.
func TestTextUsesWholeVocabulary(t *testing.T) {
	const n = 256 * 400
	counts := map[string]int{}
	for _, w := range strings.Fields(Text(42, 0, 1, "read", n)) {
		counts[w]++
	}
	for _, w := range vocabulary {
		// Expected 400 each, sd 20: 300–500 is five standard deviations.
		if c := counts[w]; c < 300 || c > 500 {
			t.Errorf("word %q drawn %d times in %d; want about 400", w, c, n)
		}
	}
}

// TestTextAllocatesOnce checks the allocation budget: one string build per call.
func TestTextAllocatesOnce(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() { _ = Text(1, 2, 3, "read", 4000) })
	if allocs != 1 {
		t.Errorf("Text allocates %v times per call; want 1", allocs)
	}
}

// TestWordsForTokens covers the calibration helper's edges.
func TestWordsForTokens(t *testing.T) {
	tests := []struct {
		tokens int
		ratio  float64
		want   int
	}{
		{1000, 1, 1000},         // one token per word
		{1000, 1.25, 800},       // a tokenizer that splits some words
		{1000, 0.8, 1250},       // one that merges some
		{3, 2.5, 1},             // rounds to nearest: 1.2 → 1
		{1, 4, 1},               // never 0 words for a positive count
		{0, 1.3, 0},             // nothing asked, nothing given
		{-5, 1, 0},              // negative counts are 0
		{500, 0, 500},           // no calibration yet: one per word
		{500, math.NaN(), 500},  // a broken ratio is ignored
		{500, math.Inf(1), 500}, // likewise
	}
	for _, tt := range tests {
		if got := WordsForTokens(tt.tokens, tt.ratio); got != tt.want {
			t.Errorf("WordsForTokens(%d, %v) = %d; want %d", tt.tokens, tt.ratio, got, tt.want)
		}
	}
}

// BenchmarkText measures one prompt-sized text, as each agent round builds a few.
func BenchmarkText(b *testing.B) {
	for _, n := range []int{128, 8000} {
		b.Run("tokens="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(n))
			for i := 0; b.Loop(); i++ {
				_ = Text(1, i%30, i%8, "read", n)
			}
		})
	}
}

// TestTextStream checks that the stream, read in pieces of any size, makes Text's words, and
// that Len is their length.
func TestTextStream(t *testing.T) {
	for _, words := range []int{0, 1, 7, 8, 9, 1000} {
		want := Text(3, 4, 5, "task", words)
		for _, piece := range []int{1, 5, 64, 1 << 20} {
			s := NewTextStream(3, 4, 5, "task", words)
			if n := s.Len(); n != len(want) {
				t.Errorf("%d words: Len = %d, want %d", words, n, len(want))
			}
			var got []byte
			for !s.Done() {
				got = s.Append(got, len(got)+piece)
			}
			if string(got) != want {
				t.Errorf("%d words in pieces of %d bytes: %q, want %q", words, piece, got, want)
			}
		}
	}
}
