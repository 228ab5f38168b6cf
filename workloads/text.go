package workloads

import (
	"math"
	"strings"
)

// vocabulary is the fixed word list Text draws from: 256 common lower-case English words of
// at most 4 letters, each one token for the usual BPE tokenizers (and for a tokenizer that
// splits on spaces). Its length is a power of two so one random byte picks one word.
var vocabulary = [256]string{
	"the", "of", "and", "to", "in", "is", "it", "you", "that", "he", "was", "for", "on", "are",
	"with", "as", "his", "they", "be", "at", "one", "have", "this", "from", "or", "had", "by",
	"hot", "word", "but", "what", "some", "we", "can", "out", "were", "all", "when", "up", "use",
	"your", "how", "said", "an", "each", "she", "do", "time", "if", "will", "way", "many", "then",
	"them", "like", "so", "her", "long", "make", "see", "him", "two", "has", "look", "more",
	"day", "go", "come", "did", "no", "most", "my", "over", "know", "than", "call", "who", "may",
	"down", "side", "been", "now", "find", "any", "new", "work", "part", "take", "get", "made",
	"live", "back", "only", "me", "our", "man", "year", "good", "give", "very", "just", "name",
	"form", "much", "also", "tell", "help", "line", "turn", "move", "need", "end", "set", "off",
	"play", "home", "read", "hand", "port", "big", "even", "land", "here", "must", "high", "such",
	"act", "why", "ask", "men", "went", "kind", "try", "us", "old", "cold", "air", "away", "ago",
	"boy", "cut", "dog", "eat", "far", "few", "fly", "fun", "got", "gun", "hat", "ice", "job",
	"key", "law", "leg", "let", "lie", "lot", "map", "mix", "net", "nor", "oil", "own", "pay",
	"pen", "red", "run", "sat", "sea", "sir", "six", "sky", "son", "sun", "ten", "top", "toy",
	"war", "wet", "win", "yes", "yet", "arm", "art", "bad", "bag", "bar", "bed", "bit", "box",
	"bus", "car", "cat", "cup", "dry", "ear", "egg", "eye", "fat", "fit", "fix", "gas", "god",
	"hit", "lip", "low", "mad", "mud", "nut", "pet", "pie", "pig", "pot", "raw", "rub", "sad",
	"sit", "tea", "tie", "tin", "van", "wax", "web", "add", "age", "aim", "bay", "bee", "bow",
	"buy", "cow", "cry", "dig", "dot", "due", "fan", "fee", "fog", "fur", "gap", "hay", "hop",
	"hug", "ink", "jam", "jar", "joy", "kid", "lab", "lay", "oak", "odd", "ore", "owl", "pad",
}

// Text returns exactly tokens words (none when tokens ≤ 0) drawn from a fixed vocabulary of
// short lower-case words and separated by single spaces. The text is a pure function of its
// inputs: the same (seed, agent, round, part) give the same text, and changing any one gives
// different text. part names the message within a round, e.g. "system", "task", "read".
// It allocates once.
func Text(seed int64, agent, round int, part string, tokens int) string {
	if tokens <= 0 {
		return ""
	}
	t := NewTextStream(seed, agent, round, part, tokens)
	var b strings.Builder
	b.Grow(tokens * 5) // at most 4 letters and a space per word
	for !t.Done() {
		b.WriteString(t.next())
	}
	return b.String()
}

// TextStream makes the words of Text piece by piece, so that a long text can be written as it
// is sent without being held whole. Its zero value is an empty text.
type TextStream struct {
	state, bits uint64
	i, n        int
}

// NewTextStream returns the stream of Text(seed, agent, round, part, tokens).
func NewTextStream(seed int64, agent, round int, part string, tokens int) TextStream {
	return TextStream{state: textSeed(seed, agent, round, part), n: max(tokens, 0)}
}

// Done reports whether every word has been made.
func (t *TextStream) Done() bool { return t.i >= t.n }

// next returns the next word, with the space before it after the first.
func (t *TextStream) next() string {
	i := t.i
	t.i++
	if i%8 == 0 {
		t.bits = splitmix64(&t.state)
	} else {
		t.bits >>= 8
	}
	if i > 0 {
		return spaced[byte(t.bits)]
	}
	return vocabulary[byte(t.bits)]
}

// Append appends the next words to dst until it holds at least limit bytes or the text ends.
// The words need no escaping in a JSON string.
func (t *TextStream) Append(dst []byte, limit int) []byte {
	for len(dst) < limit && !t.Done() {
		dst = append(dst, t.next()...)
	}
	return dst
}

// Len is the length in bytes of the words not yet made; it does not advance t.
func (t TextStream) Len() int {
	n := 0
	for !t.Done() {
		n += len(t.next())
	}
	return n
}

// spaced is the vocabulary, each word after a space.
var spaced = func() (s [256]string) {
	for i, w := range vocabulary {
		s[i] = " " + w
	}
	return s
}()

// WordsForTokens returns how many words of Text make tokens tokens, given the server's
// measured tokens per word (from its reported usage); a ratio ≤ 0 or not finite counts one
// token per word. The result is at least 1 when tokens > 0.
func WordsForTokens(tokens int, tokensPerWord float64) int {
	if tokens <= 0 {
		return 0
	}
	if tokensPerWord <= 0 || math.IsNaN(tokensPerWord) || math.IsInf(tokensPerWord, 0) {
		return tokens
	}
	return max(1, int(math.Round(float64(tokens)/tokensPerWord)))
}

// textSeed mixes the inputs into one PRNG state: FNV-1a over part, then splitmix rounds, so
// that neighbouring agents and rounds get unrelated streams.
func textSeed(seed int64, agent, round int, part string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(part); i++ {
		h ^= uint64(part[i])
		h *= 1099511628211
	}
	state := uint64(seed)
	for _, x := range [...]uint64{uint64(agent), uint64(round), h} {
		state = splitmix64(&state) ^ x
	}
	return state
}

// splitmix64 advances state and returns the next value of the SplitMix64 generator.
func splitmix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
