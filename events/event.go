// Package events defines what a run records and reads back: the events of events.jsonl (one
// JSON object per event, appended as it happens), the samples of samples.jsonl, and the
// vocabularies they use (event kinds, agent states, outcomes). One Writer appends and one
// Read parses both files; a run flushes them at least once a second.
package events

// Kind names an event. The strings are the `event` field of events.jsonl.
type Kind string

// The event kinds, in the order an agent round produces them.
const (
	RunStart       Kind = "run_start"
	AgentStart     Kind = "agent_start"
	RoundStart     Kind = "round_start"
	ReadDone       Kind = "read_done"
	PacerWait      Kind = "pacer_wait"
	PacerAcquired  Kind = "pacer_acquired"
	RequestSent    Kind = "request_sent"
	Headers        Kind = "headers"
	FirstReasoning Kind = "first_reasoning"
	FirstContent   Kind = "first_content"
	// FirstToolCall: the first delta of the reply's tool calls arrived (a reply that calls
	// tools may stream no content at all).
	FirstToolCall Kind = "first_tool_call"
	Done          Kind = "done"
	Error         Kind = "error"
	Timeout       Kind = "timeout"
	Cancelled     Kind = "cancelled"
	Retry         Kind = "retry"
	Release       Kind = "release"
	// ToolCall: the agent starts a tool call of the reply (Tool, ToolCallID; Planned when the
	// agent makes it itself because the model calls none). ToolResult: the call ended after
	// LatencyS seconds with ResultTokens tokens of result.
	ToolCall   Kind = "tool_call"
	ToolResult Kind = "tool_result"
	RoundDone  Kind = "round_done"
	AgentDone  Kind = "agent_done"
	Warning    Kind = "warning"
	Stop       Kind = "stop" // the run stops new rounds or cancels requests; Message says why
	RunEnd     Kind = "run_end"
)

// Terminal reports whether k ends a request: every request_sent is followed by exactly one
// terminal event with the same request id.
func (k Kind) Terminal() bool {
	return k == Done || k == Error || k == Timeout || k == Cancelled
}

// RequestOutcome is the outcome a terminal event of kind k records (the inverse of
// RequestOutcome.Kind); "" when k is not terminal.
func (k Kind) RequestOutcome() RequestOutcome {
	for _, o := range RequestOutcomes {
		if o.Kind() == k {
			return o
		}
	}
	return ""
}

// Event is one line of events.jsonl. Times are simulated seconds since the run started (TS)
// and the wall clock (Wall, RFC 3339); every duration field carries its unit in its name.
type Event struct {
	TS      float64 `json:"t_s"`
	Wall    string  `json:"wall"`
	Kind    Kind    `json:"event"`
	Agent   int     `json:"agent"`
	Round   int     `json:"round"`
	Request string  `json:"request,omitempty"`
	Attempt int     `json:"attempt,omitempty"`

	// Context and read step.
	ReadTokens    int `json:"read_tokens,omitempty"`
	ContextTokens int `json:"context_tokens,omitempty"`
	MaxTokens     int `json:"max_tokens,omitempty"`

	// Pacer.
	PacerWaitS float64 `json:"pacer_wait_s,omitempty"`
	Permit     uint64  `json:"permit,omitempty"`
	// RequestOutcome (release) is how the request behind the permit ended; Leaked (release)
	// is set when the permit was deliberately kept (leak_on_timeout).
	RequestOutcome RequestOutcome `json:"request_outcome,omitempty"`
	Leaked         bool           `json:"leaked,omitempty"`
	// Planned (tool_call, tool_result) marks a call the agent makes itself after a reply
	// without tool calls, a step task.steps planned; otherwise the model called it.
	Planned bool `json:"planned,omitempty"`
	// Outcome (round_done) is how the round ended; Class says how a failed one failed.
	Outcome RoundOutcome `json:"outcome,omitempty"`
	// TaskSteps (round_done) is set on the round that ended a task, a reply without a tool
	// call: the model calls the task took, this one included.
	TaskSteps int `json:"task_steps,omitempty"`
	// Reason (stop, and the warning with which an agent gives up) says why rounds stop
	// being started.
	Reason EndReason `json:"reason,omitempty"`

	// How a request ended (terminal events).
	Status           int          `json:"status,omitempty"`
	Class            Class        `json:"class,omitempty"`
	Message          string       `json:"message,omitempty"`
	FinishReason     FinishReason `json:"finish_reason,omitempty"`
	LatencyS         float64      `json:"latency_s,omitempty"`
	TTFTS            float64      `json:"ttft_s,omitempty"`
	TTFTContentS     float64      `json:"ttft_content_s,omitempty"`
	ITLS             float64      `json:"itl_s,omitempty"` // mean gap between chunks after the first
	MaxGapS          float64      `json:"max_gap_s,omitempty"`
	SinceLastByteS   float64      `json:"since_last_byte_s,omitempty"`
	Chunks           int          `json:"chunks,omitempty"`
	TokenChunks      int          `json:"token_chunks,omitempty"` // of Chunks, those carrying a reasoning or content token
	PromptTokens     int          `json:"prompt_tokens,omitempty"`
	CompletionTokens int          `json:"completion_tokens,omitempty"`
	ReasoningTokens  int          `json:"reasoning_tokens,omitempty"`
	CachedTokens     int          `json:"cached_tokens,omitempty"`
	ContentTokens    int          `json:"content_tokens,omitempty"`
	RetryAfterS      float64      `json:"retry_after_s,omitempty"`
	BackoffS         float64      `json:"backoff_s,omitempty"`

	// Tool and ToolCallID (tool_call, tool_result) are the function called and the call's
	// id (none for a planned call); ResultTokens (tool_result) the size of its result, in
	// tokens. A tool_result's LatencyS is the call's own latency.
	Tool         string `json:"tool,omitempty"`
	ToolCallID   string `json:"tool_call_id,omitempty"`
	ResultTokens int    `json:"result_tokens,omitempty"`

	// PID (agent_start of `agentsim exec`) is the harness process's id; Command its command
	// line, arguments substituted. ExitCode (agent_done of exec) is how the process ended: its
	// exit status, or −1 when a signal ended it (Message then names the signal and holds the
	// last line of its stderr).
	PID      int    `json:"pid,omitempty"`
	Command  string `json:"command,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	// UserAgent (request_sent seen by a recording proxy) is the request's User-Agent header,
	// which names the harness's client library and so its timeouts (docs/timeouts.md).
	UserAgent string `json:"user_agent,omitempty"`

	// ScheduleLagS (request_sent of an open-loop replay) is how late the request was sent
	// after its scheduled time: pacer wait and the load generator's own delay.
	ScheduleLagS float64 `json:"schedule_lag_s,omitempty"`

	// SimLagS (stop) is the embedded simulator's lag when the harness began stopping, as a
	// sample's sim_lag_s measures it over the time since the latest sample: a sampler that
	// fell behind leaves the verdict judged at the stop without it otherwise. On a request's
	// headers, first_reasoning, first_content and terminal events it is that request's own
	// lag in the embedded simulator when the harness recorded the event (see
	// Sample.SimLagPerRequest); absent when 0.
	SimLagS float64 `json:"sim_lag_s,omitempty"`
}
