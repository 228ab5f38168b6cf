package agents

import (
	"runtime"
	"testing"

	"github.com/agentsim/agentsim/workloads"
)

// BenchmarkAgentContexts measures the memory 1,000 agents need to hold 32k-token
// conversations (system, task, and eight read/assistant rounds), the bar being 1 GiB in all.
// It reports MiB for the 1,000 agents and bytes per agent. Generated text is not held (it is
// made again for each request: BenchmarkConversation), so what remains is the messages'
// structure.
func BenchmarkAgentContexts(b *testing.B) {
	const agents, contextTokens = 1000, 32768
	w := workloads.Defaults()
	for range b.N {
		env := &Env{Workload: &w, Calibration: NewCalibration()}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		all := make([]*Agent, agents)
		for i := range all {
			a := NewAgent(i, env)
			a.say("system", "system", 0, 2000)
			a.say("user", "task", 0, 8000)
			per := (contextTokens - 10000) / 16
			for round := 1; round <= 8; round++ {
				a.say("user", "read", round, per)
				a.say("assistant", "answer", round, per)
			}
			all[i] = a
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		used := float64(after.HeapInuse - before.HeapInuse)
		b.ReportMetric(used/(1<<20), "MiB/1000agents")
		b.ReportMetric(used/agents, "bytes/agent")
		runtime.KeepAlive(all)
	}
}

// BenchmarkConversation measures what making a 32k-token conversation's generated text again
// costs, per request sent: the price of not holding it (BenchmarkAgentContexts).
func BenchmarkConversation(b *testing.B) {
	w := workloads.Defaults()
	a := NewAgent(0, &Env{Workload: &w, Calibration: NewCalibration()})
	a.say("system", "system", 0, 2000)
	a.say("user", "task", 0, 8000)
	for round := 1; round <= 8; round++ {
		a.say("user", "read", round, (32768-10000)/16)
		a.say("assistant", "answer", round, (32768-10000)/16)
	}
	var bytes int64
	for _, m := range (*conversation)(a).Messages() {
		bytes += int64(len(m.Content))
	}
	b.SetBytes(bytes)
	for b.Loop() {
		_ = (*conversation)(a).Messages()
	}
}
