package agents

import "sync/atomic"

// The pacer's counters and the Board's open streams are read at a sample, and the events
// agents record of them at other moments: an agent takes or returns a permit, or opens or
// closes a stream, and records it when it runs again, which under load is as late as the
// harness's scheduling lag (10,000 agents beside two CPU hogs: thousands of permits returned
// to the pacer, their release events not yet recorded). The Board counts each agent's such
// changes from before it makes one to after its event is recorded, so that a sample can say
// on how many it may find the two to disagree.

// changes counts changes begun and those whose event is recorded (or that ended without one:
// a wait the run stopped).
type changes struct{ began, recorded atomic.Int64 }

// Changes is a reading of the agents' changes: how many pacer acquisitions and releases, and
// how many stream opens and closes, had begun, or had been recorded, by the time it was read.
type Changes struct{ Acquires, Releases, Opens, Closes int64 }

// Recorded returns how many changes had their events recorded by now. Read it before the
// sample's instant.
func (b *Board) Recorded() Changes {
	return Changes{Acquires: b.acquires.recorded.Load(), Releases: b.releases.recorded.Load(),
		Opens: b.opens.recorded.Load(), Closes: b.closes.recorded.Load()}
}

// Begun returns how many changes had begun by now. Read it after the pacer's counters, the
// Board's snapshot and the events up to the sample's instant.
func (b *Board) Begun() Changes {
	return Changes{Acquires: b.acquires.began.Load(), Releases: b.releases.began.Load(),
		Opens: b.opens.began.Load(), Closes: b.closes.began.Load()}
}

// Unrecorded returns how many changes were under way between recorded (read first) and begun
// (read last), by kind: every change that the counters read in between may count and the
// events up to an instant in between may not, or the other way round.
func Unrecorded(recorded, begun Changes) Changes {
	return Changes{Acquires: begun.Acquires - recorded.Acquires, Releases: begun.Releases - recorded.Releases,
		Opens: begun.Opens - recorded.Opens, Closes: begun.Closes - recorded.Closes}
}
