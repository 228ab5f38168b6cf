package simserver

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// QueueLimit rejects a request with 503 "The request queue is full." when MaxQueued requests
// are already waiting (for prefill or for a decode slot), as SGLang's
// --max-queued-requests does.
type QueueLimit struct{ MaxQueued int }

var _ Fault = (*QueueLimit)(nil)

// Name implements Fault.
func (*QueueLimit) Name() string { return "queue-limit" }

// String implements Fault.
func (q *QueueLimit) String() string { return fmt.Sprintf("queue-limit{max_queued=%d}", q.MaxQueued) }

// Set implements Fault.
func (q *QueueLimit) Set(key, value string) error {
	if key != "max_queued" {
		return unknownParam(q.Name(), key, "max_queued")
	}
	v, err := strconv.Atoi(value)
	if err != nil {
		return fmt.Errorf("max_queued: %q is not allowed: want an integer ≥ 0", value)
	}
	q.MaxQueued = v
	return nil
}

// Validate implements Fault.
func (q *QueueLimit) Validate() error {
	if q.MaxQueued < 0 {
		return fmt.Errorf("max_queued: %d is not allowed: want an integer ≥ 0", q.MaxQueued)
	}
	return nil
}

func (q *QueueLimit) configure(k *Knobs)   { k.QueueLimited, k.MaxQueued = true, q.MaxQueued }
func (*QueueLimit) plan(*Plan, *rand.Rand) {}
