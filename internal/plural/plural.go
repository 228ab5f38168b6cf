// Package plural writes counts as English reads them: "1 request", "2 requests".
package plural

import "strconv"

// Of says n of noun: "1 cell", "2 cells". noun is the singular, made plural with an s.
func Of(n int, noun string) string {
	return strconv.Itoa(n) + " " + noun + S(n)
}

// S is the plural ending for n of a regular noun: "" for 1, "s" otherwise.
func S(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
