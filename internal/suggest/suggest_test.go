package suggest

import "testing"

func TestNearest(t *testing.T) {
	cands := []string{"pacer.slots", "pacer.kind", "agents", "rounds"}
	for _, c := range []struct{ in, want string }{
		{"pacer.slot", "pacer.slots"}, // one letter missing
		{"agnets", "agents"},          // two letters swapped: distance 2
		{"rouns", "rounds"},
		{"duration", ""}, // nothing close
		{"pacer.kinds", "pacer.kind"},
		{"", ""}, // empty input is never a typo of a name
	} {
		if got := Nearest(c.in, cands); got != c.want {
			t.Errorf("Nearest(%q, %v) = %q; want %q", c.in, cands, got, c.want)
		}
	}
	// Of two candidates equally close, the first in sort order wins, whatever the list order.
	if got := Nearest("ab", []string{"ac", "aa"}); got != "aa" {
		t.Errorf(`Nearest("ab", [ac aa]) = %q; want "aa"`, got)
	}
}
