package simserver

import (
	"net/http"

	"github.com/agentsim/agentsim/internal/inproc"
)

// statusClientClosed is logged for a request whose client went away (or whose server stopped)
// before any response was sent: nginx's "client closed request".
const statusClientClosed = 499

// respWriter records the status a handler sent, for the access log, and flushes without
// allocating.
type respWriter struct {
	http.ResponseWriter
	flusher interface{ FlushError() error }
	status  int // 0 until the head is written

	// A response that outlives its handler (continueWith) does what the handler's functions
	// deferred with atEnd when it ends: ends holds them, in the order they were deferred.
	continued bool
	ends      []func()
}

// atEnd runs f, deferred by a handler, at the end of the response: at once, or, once the
// handler has handed the rest of the response to a step, when that ends.
func (w *respWriter) atEnd(f func()) {
	if w.continued {
		w.ends = append(w.ends, f)
		return
	}
	f()
}

// continueWith hands the rest of the response to step when the server is served in-process
// (inproc.Continue): the handler returns without waiting for the response to end, and step
// runs, one part of the response at a time, on the client's goroutine as it waits for the
// head and reads the body. It returns
// false, and nothing changes, for a response written to a connection. A handler that gets true
// returns at once: what it defers with atEnd from then on waits for step's end.
func (w *respWriter) continueWith(step func() bool) bool {
	w.continued = inproc.Continue(w.ResponseWriter, func() (more bool) {
		defer func() {
			if !more { // the end, or a panic that cuts the response
				w.runEnds()
			}
		}()
		return step()
	})
	return w.continued
}

// runEnds runs what atEnd queued, in order, each as a deferred call would: one that panics
// does not keep the others from running.
func (w *respWriter) runEnds() {
	ends := w.ends
	w.ends = nil
	for i := len(ends) - 1; i >= 0; i-- {
		defer ends[i]()
	}
}

// endOnPanic, deferred first by the handler, runs what atEnd queued when the handler panics
// after continueWith: the response is then cut and its step never runs.
func (w *respWriter) endOnPanic() {
	if !w.continued {
		return
	}
	if v := recover(); v != nil {
		w.runEnds()
		panic(v)
	}
}

func newRespWriter(w http.ResponseWriter) *respWriter {
	rw := &respWriter{ResponseWriter: w}
	if f, ok := w.(interface{ FlushError() error }); ok {
		rw.flusher = f
	} else if f, ok := w.(http.Flusher); ok {
		rw.flusher = flushAdapter{f}
	}
	return rw
}

// WriteHeader implements http.ResponseWriter.
func (w *respWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (w *respWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// FlushError sends what has been written to the client.
func (w *respWriter) FlushError() error {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.flusher == nil {
		return nil
	}
	return w.flusher.FlushError()
}

// Flush implements http.Flusher.
func (w *respWriter) Flush() { _ = w.FlushError() }

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *respWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// loggedStatus is the status for the access log: what was sent, or 499 when nothing was.
func (w *respWriter) loggedStatus() int {
	if w.status == 0 {
		return statusClientClosed
	}
	return w.status
}

type flushAdapter struct{ http.Flusher }

func (f flushAdapter) FlushError() error { f.Flush(); return nil }
