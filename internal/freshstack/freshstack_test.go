package freshstack

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRunWaits checks that Run returns after f, with f's effects visible.
func TestRunWaits(t *testing.T) {
	x := 0
	Run(func() { x = 42 })
	assert.Equal(t, 42, x)
}

// TestRunCarriesPanics checks that a panic in f is raised again in the caller, with its value,
// including a panic with nil.
func TestRunCarriesPanics(t *testing.T) {
	assert.PanicsWithValue(t, http.ErrAbortHandler, func() { Run(func() { panic(http.ErrAbortHandler) }) })
	assert.Panics(t, func() { Run(func() { panic(nil) }) })
}

// deep recurses n levels with a frame of about 1 KiB each.
func deep(n int) byte {
	var buf [1024]byte
	buf[n%1024] = byte(n)
	if n == 0 {
		return buf[0]
	}
	return deep(n-1) + buf[(n*7)%1024]
}

// BenchmarkRun measures what a hop costs: a goroutine start, a 16 KiB stack grown, and a
// channel handoff.
func BenchmarkRun(b *testing.B) {
	for b.Loop() {
		Run(func() { _ = deep(16) })
	}
}
