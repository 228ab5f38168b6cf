package gate_test

import (
	"fmt"
	"os"

	"github.com/agentsim/agentsim/internal/gate"
	"github.com/agentsim/agentsim/results"
)

// Example holds a new run to two rules against a baseline run, as agentsim diff and run
// --baseline do with the runs' results and per-request observations.
func Example() {
	rules, err := gate.ParseYAML([]byte(`thresholds:
  e2e.p90: "<= 1.10 * baseline"
  verdict: [healthy, slow]
`))
	if err != nil {
		panic(err)
	}
	run := func(e2e ...float64) *gate.Measurement {
		r := &results.Results{Verdict: results.Verdict{Kind: results.Healthy}}
		r.Latency.E2E = results.Summarize(append([]float64(nil), e2e...))
		return &gate.Measurement{Results: r, Observations: results.Observations{E2E: e2e}}
	}
	base := run(1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9)
	slower := run(2.0, 2.2, 2.4, 2.6, 2.8, 3.0, 3.2, 3.4, 3.6, 3.8)
	rep := gate.Evaluate(rules, base, slower)
	fmt.Println(len(rep.Failed()), "failed")
	_ = rep.WriteText(os.Stdout)
	// Output:
	// 1 failed
	// thresholds: 1 passed, 1 failed
	//   FAIL  e2e.p90 = 3.6 s, baseline 1.8 s: breaks "<= 1.10 * baseline" (limit 1.98 s); change +100 % (95 % CI +68 % … +140 %)
	//   PASS  verdict = healthy, baseline healthy: one of [healthy, slow]
}
