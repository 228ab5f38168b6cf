// Package bubbled counts the goroutines of a testing/synctest bubble. runtime.NumGoroutine
// counts every goroutine of the process, so a test that compares two counts also counts the
// goroutines of other tests ending or starting in between (a connection's reader, a timer's
// callback); a goroutine's header in runtime.Stack names its bubble, which no other test's
// goroutines share.
package bubbled

import (
	"bytes"
	"regexp"
	"runtime"
)

// bubbleOf reads a goroutine header's bubble, as runtime.Stack writes it:
// "goroutine 24 [chan receive, synctest bubble 1]:".
var bubbleOf = regexp.MustCompile(`synctest bubble (\d+)\]`)

// Goroutines returns the stacks of the goroutines in the calling goroutine's synctest bubble,
// its own first; nil when it runs in none.
func Goroutines() [][]byte {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	stacks := bytes.Split(buf, []byte("\n\n"))
	own := bubbleOf.FindSubmatch(firstLine(stacks[0]))
	if own == nil {
		return nil
	}
	var in [][]byte
	for _, s := range stacks {
		if m := bubbleOf.FindSubmatch(firstLine(s)); m != nil && bytes.Equal(m[1], own[1]) {
			in = append(in, s)
		}
	}
	return in
}

// Count returns how many goroutines the calling goroutine's synctest bubble holds, its own
// included; 0 when it runs in none.
func Count() int { return len(Goroutines()) }

func firstLine(s []byte) []byte {
	if i := bytes.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
