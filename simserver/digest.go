package simserver

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
)

// textDigest is what the simulator keeps of a message's text: what the prompt's prefix blocks,
// its length and the tool model need (buildJob, drawSteps), not the text. Each part is
// digested on its own — FNV-1a of its bytes and its tokens (CountTokens) — so a part read in
// pieces (compactBody) digests as the same part read whole; the parts' digests are combined
// in order as a polynomial (hash = Σ mix(hᵢ)·digestBaseⁿ⁻¹⁻ⁱ), so that the digest of parts
// joined (an assistant turn of several Responses items) is the digests joined.
type textDigest struct {
	hash   uint64
	scale  uint64 // digestBase to the number of parts; 0 for none
	tokens int
}

// digestBase is the base of textDigest's polynomial: odd, so that no power of it is 0.
const digestBase = 0x9e3779b97f4a7c15

// textMessage is a message of role whose text is one part.
func textMessage(role, text string) chatMessage {
	m := chatMessage{Role: role}
	m.Text.add(text)
	return m
}

// add digests one part: text, or the placeholder compactBody left for a long text.
func (d *textDigest) add(text string) {
	h, n, ok := placeholderDigest(text)
	if !ok {
		h, n = fnvString(fnvOffset64, text), CountTokens(text)
	}
	d.addDigest(h, n)
}

// addDigest appends a part of digest h and n tokens.
func (d *textDigest) addDigest(h uint64, n int) {
	d.join(textDigest{hash: mix64(h), scale: digestBase, tokens: n})
}

// join appends the parts of m.
func (d *textDigest) join(m textDigest) {
	if m.scale == 0 {
		return
	}
	if d.scale == 0 {
		*d = m
		return
	}
	d.hash = d.hash*m.scale + m.hash
	d.scale *= m.scale
	d.tokens += m.tokens
}

// fnvUint64 is FNV-1a over the eight bytes of x, low first.
func fnvUint64(h, x uint64) uint64 {
	for i := range 8 {
		h = fnvByte(h, byte(x>>(8*i)))
	}
	return h
}

// placeholderMarker begins every placeholder compactBody writes for a long text: a private-use
// character and a nonce drawn when the process starts, so that no client can send one (a text
// that begins so by chance is read as a placeholder only if its nonce is this process's).
var placeholderMarker = func() string {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:]) // crypto/rand.Read never fails
	return "\ue000" + hex.EncodeToString(nonce[:]) + ":"
}()

// appendPlaceholder appends the placeholder of a text of digest h and n tokens, unquoted: the
// marker, h in hexadecimal, a colon and n.
func appendPlaceholder(dst []byte, h uint64, n int) []byte {
	dst = append(dst, placeholderMarker...)
	dst = strconv.AppendUint(dst, h, 16)
	dst = append(dst, ':')
	return strconv.AppendInt(dst, int64(n), 10)
}

// placeholderDigest reads a placeholder: the digest and tokens of the text it stands for.
func placeholderDigest(s string) (uint64, int, bool) {
	rest, ok := strings.CutPrefix(s, placeholderMarker)
	if !ok {
		return 0, 0, false
	}
	hs, ns, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, 0, false
	}
	h, err1 := strconv.ParseUint(hs, 16, 64)
	n, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil || n < 0 {
		return 0, 0, false
	}
	return h, n, true
}
