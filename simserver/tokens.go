package simserver

// The simulated tokenizer and the generated text are made for each other: every generated
// token is one word of at most four lowercase letters followed by one space, and the tokenizer
// counts such a word as exactly one token. So a client that appends the simulator's output to
// its next prompt sends exactly as many prompt tokens as it was sent completion tokens, and
// contexts grow the way they do against a real model.

// bytesPerToken is how many bytes of a word make one token.
const bytesPerToken = 4

// CountTokens returns the number of tokens in text: each maximal run of non-space bytes counts
// ceil(len/4) tokens, so any word of at most 4 bytes is one token and whitespace is free.
func CountTokens(text string) int {
	n, run := 0, 0
	for i := 0; i < len(text); i++ {
		if isSpace(text[i]) {
			n += (run + bytesPerToken - 1) / bytesPerToken
			run = 0
			continue
		}
		run++
	}
	return n + (run+bytesPerToken-1)/bytesPerToken
}

// isSpace reports whether b separates words: ASCII space, tab, newline, vertical tab, form
// feed or carriage return.
func isSpace(b byte) bool {
	return b == ' ' || (b >= '\t' && b <= '\r')
}

// vocabulary holds the words generated text is made of: at most 4 lowercase ASCII letters
// each, so they count one token apiece and need no JSON escaping.
var vocabulary = [...]string{
	"the", "of", "and", "to", "in", "is", "it", "that", "for", "on", "as", "with", "was", "be",
	"by", "this", "are", "or", "from", "at", "an", "but", "not", "have", "has", "had", "were",
	"can", "all", "if", "will", "one", "two", "more", "when", "so", "no", "out", "up", "into",
	"than", "them", "then", "some", "what", "each", "time", "only", "over", "such", "also",
	"most", "any", "new", "use", "used", "way", "may", "like", "just", "made", "make", "many",
	"much", "must", "very", "well", "work", "call", "file", "line", "test", "code", "data",
	"read", "run", "step", "next", "last", "list", "plan", "task", "tool", "page", "node",
	"key", "map", "set", "get", "put", "add", "sum", "max", "min", "loop", "case", "type",
	"name", "path", "text", "word", "note", "goal", "fix", "bug", "diff", "load", "save",
	"open", "done", "wait", "send", "sent", "ok", "yes", "now", "here", "we", "you",
	"they", "our", "its", "how", "why", "who", "see", "look", "find", "keep", "seen",
}

// appendWords appends the generated text of tokens [from, from+n) of the request with the
// given key: one vocabulary word and one space per token. The word of each token depends only
// on (key, index), so reasoning and content, streamed or not, spell the same text.
func appendWords(dst []byte, key uint64, from, n int) []byte {
	for i := from; i < from+n; i++ {
		w := vocabulary[mix64(key^uint64(i)*0x9e3779b97f4a7c15)%uint64(len(vocabulary))]
		dst = append(dst, w...)
		dst = append(dst, ' ')
	}
	return dst
}

// mix64 is the splitmix64 finaliser: a cheap, well-spread hash of x.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
