// Package freshstack runs a function on a goroutine of its own and waits for it, so that the
// stack the function grows is not kept by the caller.
//
// A goroutine's stack grows to the deepest its calls went and stays that size until the
// garbage collector shrinks it, one halving per cycle. A goroutine that first does something
// deep (encoding or decoding a JSON body goes through reflection: kilobytes of stack) and then
// waits for a long time (a stream open for minutes) keeps the deep stack for the wait. With
// thousands of such goroutines — agents reading their streams, the simulator writing them —
// those stacks were the larger part of a stream's memory (docs/speed.md). Run does the deep
// part on a short-lived goroutine whose stack goes back to the runtime when it ends.
package freshstack

// Run calls f on a new goroutine and returns when f does. A panic in f is raised again in the
// caller's goroutine, with its value, so that recovery (net/http's ErrAbortHandler, say) works
// as if f had run in place.
func Run(f func()) {
	var (
		panicked bool
		value    any
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		panicked = true
		defer func() {
			if panicked {
				value = recover()
			}
		}()
		f()
		panicked = false
	}()
	<-done
	if panicked {
		panic(value)
	}
}
