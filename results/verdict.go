package results

// Verdict is the diagnosis of a run: one kind, a one-line summary and the evidence for it,
// every number with its unit.
type Verdict struct {
	Kind     VerdictKind `json:"kind"`
	Summary  string      `json:"summary"`
	Evidence []string    `json:"evidence"`
	// Unreliable, when set, says why the verdict cannot be trusted: the run's own lag could
	// explain the silence or the latency it rests on (docs/verdicts.md §3). Such a run
	// exits 4, neither passing nor blaming the server.
	Unreliable string `json:"unreliable,omitempty"`
}

// VerdictKind names a verdict. The strings are the `verdict.kind` field of results.json; the
// rules that choose one are described in docs/verdicts.md §2.
type VerdictKind string

// The verdict kinds. When several apply, diagnosis picks the first in the order
// pacer-starvation, deadlock, harness-stopped, stalled-streams, server-serialized, errors,
// slow, healthy.
const (
	// Healthy: requests complete and tokens flow; no other verdict applies.
	Healthy VerdictKind = "healthy"
	// Slow: requests complete and tokens flow, but the mean end-to-end latency is at least
	// the watchdog's slow_after.
	Slow VerdictKind = "slow"
	// ServerSerialized: many requests are in flight but the server makes progress on one at
	// a time.
	ServerSerialized VerdictKind = "server-serialized"
	// StalledStreams: open streams went silent for at least stall_after, and neither the
	// pacer nor server serialisation explains it.
	StalledStreams VerdictKind = "stalled-streams"
	// PacerStarvation: agents wait in the pacer while every permit is held by stuck work
	// (silent requests or leaked permits), or while permits are free (a lost wake-up).
	PacerStarvation VerdictKind = "pacer-starvation"
	// Deadlock: every running agent is inside a silent request and no timeout can end one.
	Deadlock VerdictKind = "deadlock"
	// Errors: too large a share of the finished requests failed.
	Errors VerdictKind = "errors"
	// HarnessStopped: watching a real harness through the recording proxy, the harness has
	// sent nothing for at least stall_after while nothing of it is in flight: it is stuck
	// itself (its pacer or scheduler), or done.
	HarnessStopped VerdictKind = "harness-stopped"
)

// VerdictKinds lists every verdict kind, in the order diagnosis tries them.
var VerdictKinds = []VerdictKind{PacerStarvation, Deadlock, HarnessStopped, StalledStreams, ServerSerialized,
	Errors, Slow, Healthy}

// Stuck reports whether k is a verdict of work that stopped moving: pacer-starvation,
// deadlock, stalled-streams or harness-stopped.
func (k VerdictKind) Stuck() bool {
	return k == PacerStarvation || k == Deadlock || k == StalledStreams || k == HarnessStopped
}

// Progressing reports whether k is a verdict of a run that kept making progress: healthy or
// slow, the verdicts that exit 0.
func (k VerdictKind) Progressing() bool { return k == Healthy || k == Slow }
