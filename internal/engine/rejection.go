package engine

import (
	"fmt"
	"time"
)

// Reason is why the engine refuses a request before its generation starts. The HTTP front
// maps each reason to a status and an error body; the engine itself speaks no HTTP.
type Reason int

// The reasons for a rejection.
const (
	// TooLong: the prompt leaves no room for output within the profile's MaxContextTokens.
	TooLong Reason = iota + 1
	// RateLimited: the errors fault (kind 429) refuses the request; the client may retry after
	// Rejection.RetryAfter.
	RateLimited
	// Overloaded: the errors fault (kind 503) refuses the request.
	Overloaded
	// QueueFull: the queue-limit fault found Rejection.MaxQueued requests already waiting.
	QueueFull
	// Unavailable: the scheduler has died (the retract-crash fault); every request fails.
	Unavailable
)

// String names the reason, e.g. "queue-full".
func (r Reason) String() string {
	switch r {
	case TooLong:
		return "too-long"
	case RateLimited:
		return "rate-limited"
	case Overloaded:
		return "overloaded"
	case QueueFull:
		return "queue-full"
	case Unavailable:
		return "unavailable"
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// Rejection is a request the engine refuses before its generation starts. Submit returns it as
// an error; errors.As finds it.
type Rejection struct {
	// Reason is why the request was refused.
	Reason Reason
	// RetryAfter, for RateLimited, is how long the client should wait before retrying, in
	// simulated time; 0 otherwise.
	RetryAfter time.Duration
	// PromptTokens and MaxContextTokens, for TooLong, are the prompt's length and the
	// profile's context length, in tokens.
	PromptTokens, MaxContextTokens int
	// MaxQueued, for QueueFull, is the queue limit, in requests.
	MaxQueued int
}

// Error describes the rejection in the engine's terms.
func (r *Rejection) Error() string {
	switch r.Reason {
	case TooLong:
		return fmt.Sprintf("rejected (%s): a prompt of %d tokens leaves no room for output in a context of %d tokens",
			r.Reason, r.PromptTokens, r.MaxContextTokens)
	case RateLimited:
		return fmt.Sprintf("rejected (%s): retry after %s", r.Reason, r.RetryAfter)
	case QueueFull:
		return fmt.Sprintf("rejected (%s): %d requests are already waiting", r.Reason, r.MaxQueued)
	}
	return fmt.Sprintf("rejected (%s)", r.Reason)
}
