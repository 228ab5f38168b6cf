package engine

import (
	"fmt"
	"time"
)

// Stage is where in SGLang's prefill/decode state machine a request was when the engine
// aborted it.
type Stage int

// The stages a disaggregated request can time out in.
const (
	// StageBootstrapping: the request waited longer than Profile.BootstrapTimeout for the
	// decode engine to reserve its KV.
	StageBootstrapping Stage = iota + 1
	// StageWaitingForInput: the request's KV did not reach the decode engine within
	// Profile.WaitingTimeout of its reservation.
	StageWaitingForInput
)

// Aborted is the engine's abort of an admitted generation; Gen.NextChunk returns it once the
// tokens produced before the abort are consumed. The HTTP front sends it as SGLang does: an
// error frame in a 200 stream, or a 500 body.
type Aborted struct {
	// Stage is where the request was.
	Stage Stage
	// Elapsed is how long it had been there, simulated time.
	Elapsed time.Duration
	// Room is the request's bootstrap room, its number in the engine.
	Room uint64
}

// Error is SGLang's message for the abort, e.g. "Decode transfer failed for request rank=0
// with exception KVTransferError(bootstrap_room=7): Request 7 timed out after 300.0s in
// KVPoll.WaitingForInput".
func (a *Aborted) Error() string {
	side, poll := "Decode transfer", "WaitingForInput"
	if a.Stage == StageBootstrapping {
		side, poll = "Prefill bootstrap", "Bootstrapping"
	}
	return fmt.Sprintf("%s failed for request rank=0 with exception KVTransferError(bootstrap_room=%d): Request %d timed out after %.1fs in KVPoll.%s",
		side, a.Room, a.Room, a.Elapsed.Seconds(), poll)
}
