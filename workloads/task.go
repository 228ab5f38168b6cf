package workloads

import (
	"fmt"
	"math/rand/v2"
)

// Task is the `task:` section: how an agent with tools (tools.set other than none) divides its
// rounds into tasks — user requests, each a loop of model calls that ends with an answer
// without a tool call — when the model does not decide it by calling tools. A round stays one
// model call; the agent's rounds run through its tasks, one after another in the same
// conversation, until rounds or duration end the run (docs/agentic.md).
type Task struct {
	// Steps is how many model calls a task takes, its final answer included, when the model
	// calls no tool; samples below 1 count as 1 (see SampleSteps). Default after TraceLab: a
	// mean of 8.8 calls per user request, a median of 2 and a long tail (p90 21, p99 87).
	Steps Dist `mapstructure:"steps" yaml:"steps"`
	// CallsPerStep is how many tool calls the agent makes after each model call of a task but
	// its last, when the model calls none: the calls run, each for its tool's latency, and
	// their results go to the conversation in one user message. Samples below 1 count as 1
	// (see SampleCalls). Default after TraceLab: a mean of 1.2, a median of 1, p90 2, p99 4.
	CallsPerStep Dist `mapstructure:"calls_per_step" yaml:"calls_per_step"`
	// MessageTokens is the size of the user message that starts each task after the first, in
	// tokens; the first task is context.initial_tokens.
	MessageTokens Dist `mapstructure:"message_tokens" yaml:"message_tokens"`
}

// SampleSteps draws the number of model calls of one task: a sample of Steps, at least 1.
func (t *Task) SampleSteps(r *rand.Rand) int { return max(1, t.Steps.Sample(r)) }

// SampleCalls draws the number of tool calls after one model call that is not a task's last:
// a sample of CallsPerStep, at least 1.
func (t *Task) SampleCalls(r *rand.Rand) int { return max(1, t.CallsPerStep.Sample(r)) }

// DefaultTaskSteps returns task.steps' default, after TraceLab's model calls per user request
// (docs/agentic.md): 21 % of tasks take one call, 20 % two, and the rest a lognormal of mean
// 14 — together a mean of 8.9, a median of 2, p90 21 and p99 87.
func DefaultTaskSteps() Dist {
	return Dist{Kind: DistMixture, Parts: []Part{
		{Weight: 0.21, Dist: Const(1)},
		{Weight: 0.2, Dist: Const(2)},
		{Weight: 0.59, Dist: Dist{Kind: DistLognormal, Avg: 14, StdDev: 25}},
	}}
}

// DefaultCallsPerStep returns task.calls_per_step's default, after TraceLab's tool calls per step:
// a mean of 1.2, a median of 1, p90 2 and p99 4.
func DefaultCallsPerStep() Dist {
	return Dist{Kind: DistMixture, Parts: []Part{
		{Weight: 0.88, Dist: Const(1)},
		{Weight: 0.07, Dist: Const(2)},
		{Weight: 0.03, Dist: Const(3)},
		{Weight: 0.015, Dist: Const(4)},
		{Weight: 0.005, Dist: Const(5)},
	}}
}

// DefaultMessageTokens is task.message_tokens' default: TraceLab's fresh tokens per user
// request, 31.8 M over 37.9 k user-initiated steps (docs/agentic.md).
const DefaultMessageTokens = 840

// task checks the task section.
func (c *checker) task(t *Task) {
	c.atLeastOne("task.steps", t.Steps)
	c.atLeastOne("task.calls_per_step", t.CallsPerStep)
	c.dist("task.message_tokens", t.MessageTokens.Validate())
}

// atLeastOne checks a count distribution: valid, and with a mean of at least 1.
func (c *checker) atLeastOne(key string, d Dist) {
	if err := d.Validate(); err != nil {
		c.dist(key, err)
		return
	}
	if d.Mean() < 1 {
		c.add(key, d, fmt.Sprintf("a distribution whose mean is at least 1 (it is %.3g; samples below 1 count as 1)", d.Mean()))
	}
}
