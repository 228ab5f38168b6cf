package engine

import "math/rand/v2"

// QueueLimit rejects a request as QueueFull (the HTTP front answers 503 "The request queue is
// full.") when MaxQueued requests are already waiting (for prefill or for a decode slot), as
// SGLang's --max-queued-requests does.
type QueueLimit struct {
	// MaxQueued is the most requests that may wait, an integer ≥ 0; default 64.
	MaxQueued int `mapstructure:"max_queued"`
}

var _ Fault = (*QueueLimit)(nil)

// Name implements Fault.
func (*QueueLimit) Name() string { return "queue-limit" }

// String implements Fault.
func (q *QueueLimit) String() string { return describe(q) }

// Validate implements Fault.
func (q *QueueLimit) Validate() error {
	var ps problems
	ps.atLeast("max_queued", q.MaxQueued, 0)
	return ps.err()
}

func (q *QueueLimit) configure(k *Knobs)   { k.QueueLimited, k.MaxQueued = true, q.MaxQueued }
func (*QueueLimit) plan(*Plan, *rand.Rand) {}
