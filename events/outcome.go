package events

// RoundOutcome is how an agent round ended: the `outcome` field of a round_done event.
type RoundOutcome string

// The round outcomes.
const (
	// RoundOK: the round's request succeeded (after retries, if any).
	RoundOK RoundOutcome = "ok"
	// RoundFailed: the round's last attempt failed; the event's Class says how.
	RoundFailed RoundOutcome = "failed"
	// RoundCancelled: the round ended before it sent its request — the run stopped during its
	// tool time or pacer wait, or the agent gave up (the event's Reason says why:
	// max_context_tokens, pacer_refused; none when the run's stop event says it). Such a round
	// counts as not started.
	RoundCancelled RoundOutcome = "cancelled"
)

// RequestOutcome is how a request ended: what the pacer is told when its permit is released
// (pacer.Outcome), the `request_outcome` field of a release event, and the outcome label of
// agentsim_requests_total.
type RequestOutcome string

// The request outcomes. Each is recorded by one terminal event kind (RequestOutcome.Kind):
// done, timeout, error, cancelled.
const (
	// RequestSuccess: the response ended normally.
	RequestSuccess RequestOutcome = "success"
	// RequestTimeout: the harness gave up on the request (whole-request, TTFT or idle timeout).
	RequestTimeout RequestOutcome = "timeout"
	// RequestError: the server or the transport failed the request.
	RequestError RequestOutcome = "error"
	// RequestCancelled: the harness cancelled the request (the run is stopping); it carries
	// no congestion signal.
	RequestCancelled RequestOutcome = "cancelled"
)

// RequestOutcomes lists the request outcomes.
var RequestOutcomes = []RequestOutcome{RequestSuccess, RequestTimeout, RequestError, RequestCancelled}

// Kind is the kind of the terminal event that records a request ended with o: done, timeout,
// cancelled, or error for any other outcome.
func (o RequestOutcome) Kind() Kind {
	switch o {
	case RequestSuccess:
		return Done
	case RequestTimeout:
		return Timeout
	case RequestCancelled:
		return Cancelled
	}
	return Error
}

// EndReason says why rounds stopped being started: the `reason` of a stop event (the run's
// own stop) or of the warning with which an agent gave up before its round's request.
type EndReason string

// The end reasons.
const (
	// EndDuration: the workload's duration passed and new rounds stopped.
	EndDuration EndReason = "duration"
	// EndGrace: the grace period after the duration ran out; requests in flight were cancelled.
	EndGrace EndReason = "grace"
	// EndWatchdog: the watchdog ended a run that made no progress for hang_after.
	EndWatchdog EndReason = "watchdog"
	// EndInterrupted: the run was interrupted (Ctrl-C).
	EndInterrupted EndReason = "interrupted"
	// EndContextFull: the agent's next request would exceed context.max_context_tokens.
	EndContextFull EndReason = "max_context_tokens"
	// EndPacerRefused: the pacer refused the agent's request (larger than its budget).
	EndPacerRefused EndReason = "pacer_refused"
)

// FinishReason is why the server ended a completion: the finish_reason of its last chunk, the
// `finish_reason` field of a done event. Servers send others too (tool_calls, abort…); they are
// recorded as sent.
type FinishReason string

// The finish reasons the harness acts on.
const (
	// FinishStop: the model ended its answer, or reached a stop sequence.
	FinishStop FinishReason = "stop"
	// FinishLength: the output reached max_tokens or the end of the context window.
	FinishLength FinishReason = "length"
)
