// Package shown says how a message quotes a value a user gave: whole when it is short, by its
// start and length when it is long, so that no message echoes a file or a pasted blob whole.
package shown

import "fmt"

// Max is the most characters of a value a message quotes.
const Max = 80

// Elide returns s when it has at most Max characters, else its first characters followed by
// "… (N characters)".
func Elide(s string) string {
	r := []rune(s)
	if len(r) <= Max {
		return s
	}
	return fmt.Sprintf("%s… (%d characters)", string(r[:Max-20]), len(r))
}
