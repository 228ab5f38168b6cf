package diagnose

import "testing"

// BenchmarkStall measures one live watchdog reading of a 30-agent run (16 wedged streams,
// 14 waiters), as the harness takes on every sample.
func BenchmarkStall(b *testing.B) {
	w, cfg, at := wedgeStarvation()
	a := w.feed(cfg, at)
	for b.Loop() {
		a.Stall(at)
	}
}

// BenchmarkSample measures feeding one sample with 16 open streams and a pacer view.
func BenchmarkSample(b *testing.B) {
	w, cfg, at := wedgeStarvation()
	a := w.feed(cfg, at)
	s := w.sample(at)
	for b.Loop() {
		a.Sample(s)
	}
}
