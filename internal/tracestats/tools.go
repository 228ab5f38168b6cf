package tracestats

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentsim/agentsim/trace"
)

// Tools summarises a trace's tool loop: the definitions requests offered, the calls their
// replies made, the tool time between a reply and the request carrying its results, and the
// steps of each task. A task is a run of a session's requests from one user message to a
// reply without tool calls: each request but its last has a tool_s (the next one carries its
// results), and its last has none (it answered, or the session went on without the results).
type Tools struct {
	// OfferingRequests offered tool definitions (tools_tokens > 0); DefinitionsTokens is their
	// size per such request.
	OfferingRequests  int  `json:"offering_requests"`
	DefinitionsTokens Dist `json:"definitions_tokens"`
	// Calls is the tool calls of every reply; CallingReplies the replies that made any;
	// ByName the calls of each function ("" for a call the trace does not name).
	Calls          int            `json:"calls"`
	CallingReplies int            `json:"calling_replies"`
	ByName         map[string]int `json:"by_name,omitempty"`
	// CallsPerStep is the calls of each reply that made any, and CallsPerStepMean their mean.
	CallsPerStep     Dist    `json:"calls_per_step"`
	CallsPerStepMean float64 `json:"calls_per_step_mean"`
	// ToolTimeS is tool_s over the replies that have one, in seconds, with its total.
	ToolTimeS TimeDist `json:"tool_time_s"`
	// StepsPerTask is the requests of each task that ended in the trace, StepsPerTaskMean
	// their mean; OpenTasks the tasks still waiting for a request when their session ended.
	StepsPerTask     Dist    `json:"steps_per_task"`
	StepsPerTaskMean float64 `json:"steps_per_task_mean"`
	OpenTasks        int     `json:"open_tasks,omitempty"`
}

// TimeDist is a distribution of durations in seconds, with its tail and its total.
// Quantiles are nearest-rank; all zero when N is 0.
type TimeDist struct {
	N      int     `json:"n"`
	P50    float64 `json:"p50"`
	P99    float64 `json:"p99"`
	TotalS float64 `json:"total_s"`
}

// toolAcc gathers Tools one request at a time; steps is kept per session in session.task.
type toolAcc struct {
	any                        bool // some request offered tools or made a call
	offering, calls, replies   int
	defs, perStep, toolS, task []float64
	byName                     map[string]int
}

// add counts r, whose session's open task has had s.task requests so far.
func (t *toolAcc) add(r *trace.Request, s *session) {
	if r.ToolsTokens > 0 {
		t.offering++
		t.defs = append(t.defs, float64(r.ToolsTokens))
	}
	if r.ToolsTokens > 0 || r.ToolCalls > 0 {
		t.any = true
	}
	if r.ToolCalls > 0 {
		t.calls += r.ToolCalls
		t.replies++
		t.perStep = append(t.perStep, float64(r.ToolCalls))
		if t.byName == nil {
			t.byName = map[string]int{}
		}
		for i := range r.ToolCalls {
			name := ""
			if i < len(r.ToolNames) {
				name = r.ToolNames[i]
			}
			t.byName[name]++
		}
	}
	s.task++
	if r.ToolS != nil {
		t.toolS = append(t.toolS, *r.ToolS)
		return
	}
	t.task = append(t.task, float64(s.task))
	s.task = 0
}

// summary returns Tools, or nil when no request offered tools or made a call; open counts
// the sessions that ended mid-task.
func (t *toolAcc) summary(open int) *Tools {
	if !t.any {
		return nil
	}
	s := &Tools{OfferingRequests: t.offering, Calls: t.calls, CallingReplies: t.replies, ByName: t.byName, OpenTasks: open}
	s.DefinitionsTokens = dist(t.defs)
	s.CallsPerStep, s.CallsPerStepMean = dist(t.perStep), mean(t.perStep)
	s.StepsPerTask, s.StepsPerTaskMean = dist(t.task), mean(t.task)
	s.ToolTimeS = timeDist(t.toolS)
	return s
}

// timeDist summarises v (which it sorts).
func timeDist(v []float64) TimeDist {
	if len(v) == 0 {
		return TimeDist{}
	}
	sort.Float64s(v)
	total := 0.0
	for _, x := range v {
		total += x
	}
	return TimeDist{N: len(v), P50: rank(v, 0.5), P99: rank(v, 0.99), TotalS: total}
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}

// renderTools writes the tools lines of the summary.
func renderTools(b *strings.Builder, t *Tools, requests int) {
	fmt.Fprintf(b, "tools: %d of %d requests offered tools (definitions %s); %d replies made %d tool calls",
		t.OfferingRequests, requests, plain(t.DefinitionsTokens, " tokens"), t.CallingReplies, t.Calls)
	if len(t.ByName) > 0 {
		fmt.Fprintf(b, " (%s)", byName(t.ByName))
	}
	b.WriteString("\n")
	if t.CallingReplies > 0 {
		fmt.Fprintf(b, "tool calls per step (replies with calls): mean %.2f; %s\n", t.CallsPerStepMean, plain(t.CallsPerStep, ""))
	}
	if d := t.ToolTimeS; d.N > 0 {
		fmt.Fprintf(b, "tool time (tool_s, from a reply's end to the request with its results): p50 %s  p99 %s  total %s over %d steps\n",
			secs(d.P50), secs(d.P99), secs(d.TotalS), d.N)
	} else if t.CallingReplies > 0 {
		b.WriteString("tool time: unknown (no reply's results were seen in a later request)\n")
	}
	if t.StepsPerTask.N > 0 {
		fmt.Fprintf(b, "steps per task (requests from a user message to a reply without tool calls): mean %.1f; %s over %d tasks",
			t.StepsPerTaskMean, plain(t.StepsPerTask, ""), t.StepsPerTask.N)
		if t.OpenTasks > 0 {
			fmt.Fprintf(b, " (%d more unfinished when their session ended)", t.OpenTasks)
		}
		b.WriteString("\n")
	}
}

// byName lists calls per function, the most called first, at most five then the rest.
func byName(m map[string]int) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if m[names[i]] != m[names[j]] {
			return m[names[i]] > m[names[j]]
		}
		return names[i] < names[j]
	})
	var parts []string
	rest := 0
	for i, n := range names {
		if i >= 5 {
			rest += m[n]
			continue
		}
		label := n
		if n == "" {
			label = "unnamed"
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", label, m[n]))
	}
	if rest > 0 {
		parts = append(parts, fmt.Sprintf("others ×%d", rest))
	}
	return strings.Join(parts, ", ")
}
