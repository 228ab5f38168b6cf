package agents

import "sync/atomic"

// The pacer's counters and the events agents record of them are read at different moments:
// an agent takes or returns a permit and records it when it runs again, which under load is as
// late as the harness's scheduling lag (10,000 agents beside two CPU hogs: thousands of
// permits returned to the pacer, their release events not yet recorded). The Board counts
// each agent's pacer operations from before it starts one to after its event is recorded, so
// that a sample can say how many it may find the pacer and the events to disagree on.

// pacerOps counts pacer operations begun and those whose event is recorded (or that ended
// without one: a wait the run stopped).
type pacerOps struct{ began, recorded atomic.Int64 }

// PacerOps is a reading of the agents' pacer operations: how many acquisitions and releases
// had begun, or had been recorded, by the time it was read.
type PacerOps struct{ Acquires, Releases int64 }

// PacerRecorded returns how many pacer operations had their events recorded by now. Read it
// before the sample's instant.
func (b *Board) PacerRecorded() PacerOps {
	return PacerOps{Acquires: b.acquires.recorded.Load(), Releases: b.releases.recorded.Load()}
}

// PacerBegun returns how many pacer operations had begun by now. Read it after the pacer's
// counters and the events up to the sample's instant.
func (b *Board) PacerBegun() PacerOps {
	return PacerOps{Acquires: b.acquires.began.Load(), Releases: b.releases.began.Load()}
}

// Unrecorded returns how many pacer operations were under way between recorded (read first)
// and begun (read last), by kind: every operation that the pacer's counters, read in between,
// may count and the events up to an instant in between may not, or the other way round.
func Unrecorded(recorded, begun PacerOps) PacerOps {
	return PacerOps{Acquires: begun.Acquires - recorded.Acquires, Releases: begun.Releases - recorded.Releases}
}
