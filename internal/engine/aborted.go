package engine

import (
	"fmt"
	"time"
)

// Stage is where a request was when the engine aborted it: a stage of SGLang's
// prefill/decode state machine, or running when the KV pool overflowed.
type Stage int

// The stages a disaggregated request can time out in.
const (
	// StageBootstrapping: the request waited longer than Profile.BootstrapTimeout for the
	// decode engine to reserve its KV.
	StageBootstrapping Stage = iota + 1
	// StageWaitingForInput: the request's KV did not reach the decode engine within
	// Profile.WaitingTimeout of its reservation.
	StageWaitingForInput
	// StageKVFull: the request was running when the KV pool overflowed under
	// Profile.KVFull KVFullFail.
	StageKVFull
)

// ContextExceeded is llama.cpp's server's message for the requests it fails when the KV cache
// has no room for a step (server-context.cpp, update_slots).
const ContextExceeded = "Context size has been exceeded."

// Aborted is the engine's abort of an admitted generation; Gen.NextChunk returns it once the
// tokens produced before the abort are consumed. The HTTP front sends a timeout as SGLang does
// (an error frame in a 200 stream, or a 500 body) and StageKVFull as llama.cpp does.
type Aborted struct {
	// Stage is where the request was.
	Stage Stage
	// Elapsed is how long it had been there, simulated time.
	Elapsed time.Duration
	// Room is the request's bootstrap room, its number in the engine.
	Room uint64
}

// Error is the server's message for the abort: ContextExceeded for StageKVFull, otherwise
// SGLang's, e.g. "Decode transfer failed for request rank=0
// with exception KVTransferError(bootstrap_room=7): Request 7 timed out after 300.0s in
// KVPoll.WaitingForInput".
func (a *Aborted) Error() string {
	if a.Stage == StageKVFull {
		return ContextExceeded
	}
	side, poll := "Decode transfer", "WaitingForInput"
	if a.Stage == StageBootstrapping {
		side, poll = "Prefill bootstrap", "Bootstrapping"
	}
	return fmt.Sprintf("%s failed for request rank=0 with exception KVTransferError(bootstrap_room=%d): Request %d timed out after %.1fs in KVPoll.%s",
		side, a.Room, a.Room, a.Elapsed.Seconds(), poll)
}
