package harness

import (
	"fmt"
	"math"
	"strings"

	"github.com/agentsim/agentsim/agents"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/workloads"
)

// FitToServer, as Options.FitContext, fits the workload to the context window the server
// lists for its model (max_model_len, else llama.cpp's per-slot meta.n_ctx).
const FitToServer = -1

// fitMargin is the share of the server's window a fitted workload plans to use: agentsim
// estimates prompt lengths from its own text, and a server's tokenizer may count up to a tenth
// more.
const fitMargin = 0.9

// contextWarning says, before a run, that the workload asks for more tokens than the server's
// window holds; "" when it fits or the window is unknown (0). from names the /v1/models field
// the window was read from.
func contextWarning(w *workloads.Workload, window int, from string) string {
	n := diagnose.NeedOf(w)
	if window <= 0 || n.Total() <= window {
		return ""
	}
	return fmt.Sprintf("context: the server's context window is %d tokens (%s), below what the workload asks: prompts up to ~%d tokens (%s) plus max_tokens %d = %d; requests past %d tokens will be refused — --fit-context scales the workload's context keys to fit",
		window, from, n.Prompt, n.How, n.MaxTokens, n.Total(), window)
}

// sharedPoolWarning says that a workload fitted to llama.cpp's meta.n_ctx, one slot's window,
// plans each request alone, while llama-server's slots may share one KV pool (its unified KV
// cache): agents whose contexts grow together can fill it, and a request is then cut
// mid-stream. Giving --fit-context the pool's share per agent plans for it.
func sharedPoolWarning(agents, window int) string {
	return fmt.Sprintf("warning: context: fitted to %d tokens, one llama.cpp slot's window (meta.n_ctx); if its slots share one KV pool "+
		"(llama-server's unified KV cache), %d agents with contexts up to that can fill it together and requests then fail mid-stream; "+
		"--fit-context N with N the pool's tokens divided by %d plans for the pool", window, agents, agents)
}

// scriptContextWarning is contextWarning for a replay: the recorded requests' own prompts and
// output lengths say what the run asks, not the workload's distributions, and nothing scales
// them. maxTokens is the workload's max_tokens, sent for a turn that recorded neither its
// output length nor its own.
func scriptContextWarning(scripts []*agents.Script, maxTokens, window int, from string) string {
	if window <= 0 {
		return ""
	}
	var total, over, prompt, asked int
	for _, s := range scripts {
		for _, t := range s.Turns {
			total++
			m := maxTokens
			switch {
			case t.OutputTokens > 0:
				m = t.OutputTokens
			case t.MaxTokens > 0:
				m = t.MaxTokens
			}
			if t.PromptTokens+m <= window {
				continue
			}
			over++
			if t.PromptTokens+m > prompt+asked {
				prompt, asked = t.PromptTokens, m
			}
		}
	}
	if over == 0 {
		return ""
	}
	return fmt.Sprintf("context: the server's context window is %d tokens (%s), below what %d of the %d recorded requests ask (the largest: a prompt of %d tokens plus max_tokens %d = %d); the server will refuse them",
		window, from, over, total, prompt, asked, prompt+asked)
}

// fitContext returns a copy of w whose requests fit in window tokens, prompt and max_tokens
// together, with a one-line account of what changed. Every context key and output length is
// scaled by one factor, so the workload keeps its shape; max_context_tokens then stops agents
// before a prompt and its max_tokens pass the window. A request.max_tokens that would take
// more than half the window is capped there and the prompts scaled to the rest (a prompt needs
// room too). A workload that fits already is returned unchanged with "". The error, a
// *FitError, says the window cannot hold even one request of the workload, and the smallest
// window that can.
func fitContext(w *workloads.Workload, window int) (*workloads.Workload, string, error) {
	fit, f, capped, err := fitTo(w, window)
	if err != nil {
		least := smallestWindow(w, window)
		hint := ""
		if least > 0 {
			hint = fmt.Sprintf(" — the smallest window it fits is %d tokens", least)
		}
		return nil, "", &FitError{Least: least, Err: fmt.Errorf("the server's window of %d tokens cannot hold even one request of this workload scaled by ×%.3g: %w%s",
			window, f, err, hint)}
	}
	if fit == w {
		return w, "", nil
	}
	var changed []string
	add := func(key string, from, to any) {
		if fmt.Sprint(from) != fmt.Sprint(to) {
			changed = append(changed, fmt.Sprintf("%s %v→%v", key, from, to))
		}
	}
	c, r := &fit.Context, &fit.Request
	add("context.system_tokens", w.Context.SystemTokens, c.SystemTokens)
	add("context.initial_tokens", w.Context.InitialTokens, c.InitialTokens)
	add("context.read_tokens", w.Context.ReadTokens, c.ReadTokens)
	add("context.max_context_tokens", w.Context.MaxContextTokens, c.MaxContextTokens)
	add("request.output_tokens", w.Request.OutputTokens, r.OutputTokens)
	add("request.max_tokens", w.Request.MaxTokens, r.MaxTokens)
	if capped {
		changed[len(changed)-1] += " (capped at half the planned window)"
	}
	return fit, fmt.Sprintf("context: fitted to the server's window of %d tokens (%.0f%% of it planned, ×%.3g): %s",
		window, 100*fitMargin, f, strings.Join(changed, ", ")), nil
}

// fitTo fits w to window tokens (see fitContext): the fitted copy, or w itself when it fits
// already; the factor applied; whether request.max_tokens was capped at half the planned
// window; and the fitted workload's validation error.
func fitTo(w *workloads.Workload, window int) (fit *workloads.Workload, f float64, capped bool, err error) {
	n := diagnose.NeedOf(w)
	budget := int(fitMargin * float64(window))
	// Agents stop before a prompt and its reserved output pass max_context_tokens. A forced
	// length sends that output as max_tokens; any other request sends max_tokens whole, so
	// its prompts must also leave room for the spread of the outputs they reserve.
	spread := 0
	if !w.Request.ForceOutputLength {
		spread = n.OutHigh - n.OutLow
	}
	if n.Total()+spread <= budget {
		return w, 1, false, nil
	}
	f = float64(budget) / float64(n.Total()+spread)
	maxTokens := max(1, scale(w.Request.MaxTokens, f))
	if half := budget / 2; !w.Request.ForceOutputLength && maxTokens > half && n.Prompt+spread > 0 {
		maxTokens, capped = max(1, half), true
		f = min(1, float64(budget-maxTokens)/float64(n.Prompt+spread))
	}
	cp := *w
	c, r := &cp.Context, &cp.Request
	c.SystemTokens, c.InitialTokens = scale(c.SystemTokens, f), scale(c.InitialTokens, f)
	c.ReadTokens, r.OutputTokens = scaleDist(c.ReadTokens, f), scaleDist(r.OutputTokens, f)
	if r.ForceOutputLength {
		// Not sent (the sampled length is); kept within max_context_tokens as validation asks.
		c.MaxContextTokens = min(scale(c.MaxContextTokens, f), budget)
		r.MaxTokens = min(max(1, scale(r.MaxTokens, f)), c.MaxContextTokens)
	} else {
		r.MaxTokens = maxTokens
		// An admitted prompt plus max_tokens stays within the budget even for the least output.
		c.MaxContextTokens = min(scale(c.MaxContextTokens, f), budget-r.MaxTokens+min(diagnose.Lower(r.OutputTokens), r.MaxTokens))
	}
	if err := cp.Validate(); err != nil {
		return nil, f, capped, err
	}
	return &cp, f, capped, nil
}

// smallestWindow is the smallest window above window, in tokens, that w fits (fitTo succeeds),
// or 0 when none up to what w asks unscaled does.
func smallestWindow(w *workloads.Workload, window int) int {
	fits := func(n int) bool { _, _, _, err := fitTo(w, n); return err == nil }
	n := diagnose.NeedOf(w)
	hi := int(math.Ceil(float64(n.Total()+n.OutHigh)/fitMargin)) + 1
	if !fits(hi) {
		return 0
	}
	lo := window // does not fit
	for hi-lo > 1 {
		if mid := lo + (hi-lo)/2; fits(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// scale multiplies a token count by f, rounding down.
func scale(v int, f float64) int { return int(math.Floor(float64(v) * f)) }

// scaleDist multiplies every token parameter of d by f.
func scaleDist(d workloads.Dist, f float64) workloads.Dist {
	d.Value, d.Min, d.Max, d.Avg, d.StdDev = scale(d.Value, f), scale(d.Min, f), scale(d.Max, f), scale(d.Avg, f), scale(d.StdDev, f)
	if d.Kind == workloads.DistExp || d.Kind == workloads.DistLognormal {
		d.Avg = max(d.Avg, 1) // their mean must stay positive
	}
	if d.Parts != nil { // a mixture: every part by the same factor, in a copy of its own
		parts := make([]workloads.Part, len(d.Parts))
		for i, p := range d.Parts {
			parts[i] = workloads.Part{Weight: p.Weight, Dist: scaleDist(p.Dist, f)}
		}
		d.Parts = parts
	}
	return d
}
