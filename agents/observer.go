package agents

import "time"

// Observer receives a call's events as they happen, so the harness can log them (events.jsonl)
// and track each stream's last byte. All times are simulated. Methods are called from the
// goroutine running Call, in event order, and must return quickly: they sit on the read path
// of the stream.
type Observer interface {
	// Headers is called when the response headers arrive, whatever the status.
	Headers(t time.Time)
	// FirstReasoning is called once, when the first non-empty reasoning delta arrives.
	FirstReasoning(t time.Time)
	// FirstContent is called once, when the first non-empty content delta arrives.
	FirstContent(t time.Time)
	// FirstToolCall is called once, when the first tool-call delta arrives.
	FirstToolCall(t time.Time)
	// Chunk is called for every data frame, the [DONE] terminator included, before any
	// FirstReasoning, FirstContent or FirstToolCall call for the same frame.
	Chunk(t time.Time)
}

// NopObserver is an Observer that ignores every event.
type NopObserver struct{}

// Headers does nothing.
func (NopObserver) Headers(time.Time) {}

// FirstReasoning does nothing.
func (NopObserver) FirstReasoning(time.Time) {}

// FirstContent does nothing.
func (NopObserver) FirstContent(time.Time) {}

// FirstToolCall does nothing.
func (NopObserver) FirstToolCall(time.Time) {}

// Chunk does nothing.
func (NopObserver) Chunk(time.Time) {}

var _ Observer = NopObserver{}
