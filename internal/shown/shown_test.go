package shown

import (
	"strings"
	"testing"
)

func TestElide(t *testing.T) {
	long := strings.Repeat("é", 200)
	for _, c := range []struct{ in, want string }{
		// Short values are quoted whole.
		{"16,16", "16,16"},
		{strings.Repeat("x", Max), strings.Repeat("x", Max)},
		// Long ones by their start, cut on a character, and their length.
		{long, strings.Repeat("é", Max-20) + "… (200 characters)"},
	} {
		if got := Elide(c.in); got != c.want {
			t.Errorf("Elide(%.20q…) = %q; want %q", c.in, got, c.want)
		}
	}
}
