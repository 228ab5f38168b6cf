package workloads

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Bounds of the integer keys: wide enough for any real harness, narrow enough to catch a
// misplaced digit before a run allocates for it.
const (
	maxAgents = 10000
	maxRounds = 100000
	maxTokens = 10_000_000
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// Validate checks every key against what its field comment promises and returns a
// *ConfigError listing all problems, or nil.
func (w *Workload) Validate() error {
	var c checker
	if !nameRE.MatchString(w.Name) {
		c.add("name", w.Name, "letters, digits, '.', '_' or '-'")
	}
	c.intRange("agents", w.Agents, 1, maxAgents)
	c.intRange("rounds", w.Rounds, 1, maxRounds)
	c.atLeast("duration", w.Duration, 0)
	if strings.TrimSpace(w.Model) == "" {
		c.add("model", w.Model, "a model name")
	}
	c.atLeast("start_jitter", w.StartJitter, 0)
	c.context(&w.Context)
	c.request(&w.Request, w.Context.MaxContextTokens)
	c.section(w.Request.Timeouts.Validate())
	c.section(w.Retry.Validate())
	c.dist("tool_time", w.ToolTime.Validate())
	c.dist("think_time", w.ThinkTime.Validate())
	set, _ := BuiltinToolSet(w.Tools.Set)
	c.tools(&w.Tools, set)
	c.task(&w.Task)
	c.section(w.Pacer.Validate())
	c.positive("watchdog.stall_after", w.Watchdog.StallAfter)
	if w.Watchdog.StallAfter > 0 && w.Watchdog.HangAfter <= w.Watchdog.StallAfter {
		c.add("watchdog.hang_after", w.Watchdog.HangAfter,
			fmt.Sprintf("a duration longer than watchdog.stall_after (%s)", formatDuration(w.Watchdog.StallAfter)))
	}
	c.positive("watchdog.slow_after", w.Watchdog.SlowAfter)
	c.positive("sample_interval", w.SampleInterval)
	c.atLeast("grace", w.Grace, 0)
	if len(c.problems) == 0 {
		// Only keys that are each allowed can be judged together.
		c.firstRequest(w)
	}
	return configError(c.problems)
}

func (c *checker) context(ctx *Context) {
	c.intRange("context.system_tokens", ctx.SystemTokens, 0, maxTokens)
	c.intRange("context.initial_tokens", ctx.InitialTokens, 0, maxTokens)
	c.dist("context.read_tokens", ctx.ReadTokens.Validate())
	if !c.intRange("context.max_context_tokens", ctx.MaxContextTokens, 1, maxTokens) {
		return
	}
	if start := ctx.SystemTokens + ctx.InitialTokens; ctx.MaxContextTokens <= start {
		c.add("context.max_context_tokens", ctx.MaxContextTokens, fmt.Sprintf(
			"more than context.system_tokens + context.initial_tokens (%d)", start))
	}
}

func (c *checker) request(r *Request, maxContext int) {
	if !r.Stream {
		// The agents measure time to first reasoning and content token, chunk gaps and idle
		// timeouts: all of it needs a stream.
		c.add("request.stream", r.Stream, "true (agents always stream their requests)")
	}
	if !slices.Contains(APIs, r.API) {
		c.add("request.api", r.API, "one of "+strings.Join(APIs, ", "))
	}
	if !slices.Contains(ReasoningEfforts, r.ReasoningEffort) {
		c.add("request.reasoning_effort", r.ReasoningEffort, "one of "+strings.Join(ReasoningEfforts, ", "))
	}
	if c.intRange("request.max_tokens", r.MaxTokens, 1, maxTokens) && maxContext >= 1 && r.MaxTokens > maxContext {
		c.add("request.max_tokens", r.MaxTokens,
			fmt.Sprintf("at most context.max_context_tokens (%d)", maxContext))
	}
	c.dist("request.output_tokens", r.OutputTokens.Validate())
}

// firstRequest checks that the keys, each allowed on its own, let an agent send a request the
// server can take: a first prompt of at least one token, an output cap of at least one token
// when the sampled length is sent as max_tokens, and a first round that fits the context window
// (an agent whose context would overflow stops without sending).
func (c *checker) firstRequest(w *Workload) {
	ctx, req := &w.Context, &w.Request
	prompt := ctx.SystemTokens + ctx.InitialTokens + ctx.ReadTokens.least()
	if prompt < 1 {
		c.add("context.initial_tokens", ctx.InitialTokens, "at least 1 when context.system_tokens is 0 and "+
			"context.read_tokens may be 0: the first request would have no message, which servers refuse")
		return
	}
	if req.ForceOutputLength && req.OutputTokens.least() < 1 {
		c.add("request.output_tokens", req.OutputTokens, "a length that is never 0 with request.force_output_length "+
			"(a const or a uniform with min ≥ 1): it is sent as max_tokens, which servers refuse below 1")
		return
	}
	if need := prompt + req.Reserved(req.OutputTokens.least()); need > ctx.MaxContextTokens {
		c.add("context.max_context_tokens", ctx.MaxContextTokens, fmt.Sprintf("at least the smallest first round: "+
			"context.system_tokens + context.initial_tokens + the least context.read_tokens and request.output_tokens (%d)", need))
	}
}

// section adds each problem of a pacer-package section's Validate (errors joined with
// errors.Join, each starting with its key, e.g. "pacer.slots: 0 is not allowed: …").
func (c *checker) section(err error) {
	if err == nil {
		return
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		key, _, _ := strings.Cut(e.Error(), ":")
		c.problems = append(c.problems, Problem{Key: key, Message: e.Error()})
	}
}

// checker collects problems in the resolved configuration.
type checker struct{ problems []Problem }

func (c *checker) add(key string, value any, want string) {
	c.problems = append(c.problems, Problem{Key: key, Message: notAllowed(key, value, want).Error()})
}

// intRange reports whether lo ≤ v ≤ hi, adding a problem when not.
func (c *checker) intRange(key string, v, lo, hi int) bool {
	if v < lo || v > hi {
		c.add(key, v, fmt.Sprintf("an integer from %d to %d", lo, hi))
		return false
	}
	return true
}

func (c *checker) atLeast(key string, d, lo time.Duration) {
	if d < lo {
		c.add(key, d, "a duration of at least "+formatDuration(lo))
	}
}

func (c *checker) positive(key string, d time.Duration) {
	if d <= 0 {
		c.add(key, d, "a duration longer than 0s")
	}
}

// dist adds a distribution's problem, naming the part of a mixture it is in.
func (c *checker) dist(key string, err error) {
	if err == nil {
		return
	}
	var pe *PartError
	if errors.As(err, &pe) {
		key, err = fmt.Sprintf("%s.parts[%d]", key, pe.Index), pe.Err
	}
	c.problems = append(c.problems, Problem{Key: key, Message: key + ": " + err.Error()})
}
