package simserver

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRespWriterEnds checks what a handler defers with atEnd: run at once until the response
// is continued, queued afterwards and run in order by runEnds — all of them, even when one
// panics — and run by endOnPanic when the handler panics after continuing.
func TestRespWriterEnds(t *testing.T) {
	w := newRespWriter(httptest.NewRecorder())
	var ran []int
	w.atEnd(func() { ran = append(ran, 0) })
	assert.Equal(t, []int{0}, ran, "not continued: at once")

	w.continued = true
	w.atEnd(func() { ran = append(ran, 1) })
	w.atEnd(func() { panic("end 2 broke") })
	w.atEnd(func() { ran = append(ran, 3) })
	assert.Equal(t, []int{0}, ran, "continued: queued")
	assert.PanicsWithValue(t, "end 2 broke", w.runEnds)
	assert.Equal(t, []int{0, 1, 3}, ran, "in order, the one after the panic too")
	assert.Empty(t, w.ends)

	w.atEnd(func() { ran = append(ran, 4) })
	assert.PanicsWithValue(t, "handler broke", func() {
		defer w.endOnPanic()
		panic("handler broke")
	})
	assert.Equal(t, []int{0, 1, 3, 4}, ran, "a handler that panics after continuing runs what it queued")
}
