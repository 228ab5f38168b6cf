package traceimport

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/trace"
	"github.com/agentsim/agentsim/workloads"
)

// runRequest is one request of a run while it is turned into a trace line.
type runRequest struct {
	agent   int
	sent    events.Event // request_sent
	end     *events.Event
	read    int // read tokens appended since the agent's previous request
	content int // reply tokens kept in the conversation (output − reasoning); 0 when it failed
	tools   []runTool
}

// Run imports an agentsim run directory: every request its agents sent (retries included)
// becomes a trace request. Each agent is a session ("agent-N"), its requests in the order they
// were sent; t_s is the send time since the run's start and after_s the gap from the end of
// the agent's previous request. Token counts come from the usage of done events; a failed
// request's prompt is the harness's estimate (tokens_estimated). Each request extends the
// agent's previous completed request, with new_tokens = its prompt − (that prompt + that
// reply's content), the read steps in between; model and reasoning_effort come from the run's
// config.yaml. The tool fields come from the run's tool set and its tool_call and
// tool_result events (runtools.go).
func Run(dir string) (*Trace, error) {
	run, err := rundir.Open(dir, rundir.Options{})
	if err != nil {
		return nil, err
	}
	w := run.Workload
	reqs := collectRun(run.Events)
	if len(reqs) == 0 {
		return nil, fmt.Errorf("%s: the run sent no request, so there is nothing to replay", filepath.Join(dir, rundir.Events))
	}
	t := &Trace{Header: trace.Header{Source: "run:" + dir, AfterSFrom: trace.AfterEnd}}
	toolsTokens, note := runToolsTokens(w)
	if note != "" {
		t.Notes = append(t.Notes, note)
	}
	last := map[int]*runRequest{} // the agent's previous request
	ok := map[int]*runRequest{}   // the agent's previous completed request and its seq
	okSeq := map[int]int{}
	seq := map[int]int{}
	var noEnd int
	for _, r := range reqs {
		tr := runTraceRequest(r, w)
		tr.Seq = seq[r.agent]
		r.fillTools(&tr, toolsTokens)
		if p := last[r.agent]; p != nil && p.end != nil {
			tr.AfterS = max(0, r.sent.TS-p.end.TS)
		}
		if e := ok[r.agent]; e != nil {
			s := okSeq[r.agent]
			tr.Extends = &s
			tr.NewTokens = min(tr.PromptTokens, max(0, tr.PromptTokens-e.end.PromptTokens-e.content))
			if tr.TokensEstimated {
				tr.NewTokens = min(tr.PromptTokens, r.read)
			}
		}
		if r.end == nil {
			noEnd++
		}
		if r.end != nil && r.end.Kind == events.Done {
			ok[r.agent], okSeq[r.agent] = r, tr.Seq
		}
		last[r.agent] = r
		seq[r.agent]++
		t.Requests = append(t.Requests, tr)
	}
	t.finish()
	t.Notes = append(t.Notes, fmt.Sprintf("run %s: %d requests of %d agents, model %s, reasoning_effort %s", dir, len(reqs), len(seq), w.Model, w.Request.ReasoningEffort))
	if noEnd > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d requests have no terminal event (the run was killed): their outcome is unknown", noEnd))
	}
	return t, nil
}

// collectRun pairs each request_sent with its terminal event and the read steps before it,
// in send order.
func collectRun(evs []events.Event) []*runRequest {
	byID := map[string]*runRequest{}
	reads := map[int]int{} // read tokens of each agent since its last request
	var out []*runRequest
	for i := range evs {
		e := &evs[i]
		switch {
		case e.Kind == events.ReadDone:
			reads[e.Agent] += e.ReadTokens
		case e.Kind == events.RequestSent:
			r := &runRequest{agent: e.Agent, sent: *e, read: reads[e.Agent]}
			if e.Attempt > 0 { // a retry resends the failed attempt's prompt
				if p := byID[retryOf(e)]; p != nil {
					r.read = p.read
				}
			}
			reads[e.Agent] = 0
			byID[e.Request] = r
			out = append(out, r)
		case e.Kind == events.ToolCall || e.Kind == events.ToolResult:
			toolEvent(byID, e.Kind, e.Request, e.ToolCallID, e.Tool, e.TS, e.Planned)
		case e.Kind.Terminal():
			if r := byID[e.Request]; r != nil && r.end == nil {
				r.end = e
				if e.Kind == events.Done {
					r.content = e.CompletionTokens - e.ReasoningTokens
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].sent.TS < out[j].sent.TS })
	return out
}

// retryOf names the attempt a retry repeats: a<agent>-r<round>-<attempt−1>.
func retryOf(e *events.Event) string {
	return fmt.Sprintf("a%d-r%d-%d", e.Agent, e.Round, e.Attempt-1)
}

// runTraceRequest is the trace line of one request, without its seq, after_s and extends.
func runTraceRequest(r *runRequest, w *workloads.Workload) trace.Request {
	tr := trace.Request{Session: fmt.Sprintf("agent-%d", r.agent), TS: r.sent.TS, MaxTokens: r.sent.MaxTokens, Model: w.Model,
		API: w.Request.API} // workloads.APIChat and APIResponses are trace.APIChat and APIResponses
	if w.Request.ReasoningEffort != "none" {
		tr.ReasoningEffort = w.Request.ReasoningEffort
	}
	e := r.end
	if e == nil || e.Kind != events.Done || e.PromptTokens == 0 {
		tr.PromptTokens, tr.TokensEstimated = r.sent.ContextTokens, true
	}
	if e == nil {
		return tr
	}
	if e.Kind == events.Done {
		tr.Status, tr.FinishReason = 200, string(e.FinishReason)
		tr.TTFTS = min(e.TTFTS, e.LatencyS)
	} else {
		tr.Status = e.Status
	}
	if e.PromptTokens > 0 {
		tr.PromptTokens = e.PromptTokens
	}
	tr.OutputTokens, tr.ReasoningTokens = e.CompletionTokens, min(e.ReasoningTokens, e.CompletionTokens)
	tr.CachedTokens = min(e.CachedTokens, tr.PromptTokens)
	tr.E2ES = e.LatencyS
	if tr.Status != 0 && (tr.Status < 100 || tr.Status > 599) {
		tr.Status = 0
	}
	return tr
}
