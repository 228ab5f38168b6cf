package plural

import "testing"

func TestOf(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 cells"}, {1, "1 cell"}, {2, "2 cells"}, {-1, "-1 cells"}} {
		if got := Of(c.n, "cell"); got != c.want {
			t.Errorf("Of(%d, %q) = %q; want %q", c.n, "cell", got, c.want)
		}
	}
}
