package bench

import (
	"fmt"

	"github.com/agentsim/agentsim/workloads"
)

// workload is the test-th test of the run, n requests at once, as a workload the harness runs:
// n agents × 1 round, each sending one user message of PromptTokens words and exactly MaxTokens
// output tokens (max_tokens with ignore_eos), at once — no start jitter, no tool or think time,
// no retry (the default retry.max is 0), no pacer limit. The seed moves with the test, so that
// prompts differ per request and per test of a sweep and the server's prefix cache does not
// shorten their prefill.
func (o *Options) workload(model string, test, n int) (*workloads.Workload, error) {
	w := workloads.Defaults()
	w.Name = fmt.Sprintf("bench-n%d", n)
	w.Agents, w.Rounds = n, 1
	w.Seed = o.Seed + int64(test)
	w.Model = model
	w.Context = workloads.Context{InitialTokens: o.PromptTokens, ReadTokens: workloads.Const(0),
		MaxContextTokens: max(w.Context.MaxContextTokens, 2*(o.PromptTokens+o.MaxTokens))}
	w.Request.MaxTokens, w.Request.OutputTokens, w.Request.ForceOutputLength = o.MaxTokens, workloads.Const(o.MaxTokens), true
	w.Request.Timeouts = workloads.Timeouts{Request: o.Timeout}
	w.SampleInterval = o.SampleInterval
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("bench workload: %w", err)
	}
	return &w, nil
}
