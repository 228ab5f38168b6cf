package diagnose

import "github.com/agentsim/agentsim/events"

// simLag follows the embedded simulator's own lag through the samples (events.Sample.SimLagS,
// docs/verdicts.md). At a speedup the machine cannot keep up with, the simulator's own work
// puts it behind its model: a byte it delivers comes that much later than the model says,
// though the server it models sent it on time. A silence between two bytes is then longer
// than the model's by how much later its closing byte came than its opening one; a silence
// since the send (the harness's own timestamp) by all of the closing byte's lag.
//
// The lag a byte came with is not known per request, only per sample interval: the largest
// lateness of any delivery in it, or how far behind the simulator was at its end. And the
// harness may read a byte after the simulator delivered it, in the interval before the one it
// reads it in. So the credit errs generous, never by more than the lag the simulator measured
// then: the byte closing a silence is taken to have come with the larger lag of the two
// samples around it (an open silence: of the latest two), the byte opening one with the
// smaller.
//
// When the simulator measures each request's own lag (events.Sample.SimLagPerRequest), a
// silence is credited the same way with its own request's lag instead (ownLag): the larger of
// its latest two readings (a sample naming its stream, its byte and terminal events) when the
// silence ended, or now for an open one, less its reading when the silence began (0 at the
// send). The lag above is the simulator's largest, on any request; a request the model gives
// no token (wedged) reads 0 and gets no credit however late the others are.
type simLag struct {
	// perRequest is set once a sample says each request's own lag is measured.
	perRequest bool
	// nowS and prevS are the sim_lag_s of the latest sample (or stop) and of the one before;
	// atS is the latest one's time. Simulated seconds.
	nowS, prevS, atS float64
	// progressS is the lag of the run's latest progress (a byte, a request end), as an
	// opening byte's; progressPending is set while the measure of it is still to come.
	progressS       float64
	progressPending bool
	// settled is the number of past stalls whose closing byte's lag has been measured.
	settled int
}

// sample takes the lag a sample measured over the interval it ends.
func (l *simLag) sample(s events.Sample) { l.observe(s.TS, s.SimLagS) }

// observe takes the lag lagS measured at tS over the time since the previous measure: a
// sample's, or a stop event's (events.Event.SimLagS).
func (l *simLag) observe(tS, lagS float64) { l.prevS, l.nowS, l.atS = l.nowS, lagS, tS }

// lagS is the lag a byte read now that closes a silence is taken to have come with: the
// larger of the latest two samples'.
func (l *simLag) lagS() float64 { return max(l.prevS, l.nowS) }

// opening returns the lag a byte at t that opens a silence is taken to have come with: the
// smaller of the two samples around it; when t is after the latest sample, that sample's for
// now and pending, to be lowered by the next (Analyzer.settleSim).
func (l *simLag) opening(t float64) (lagS float64, pending bool) {
	if t > l.atS {
		return l.nowS, true
	}
	return min(l.prevS, l.nowS), false
}

// settle lowers the lag of the run's latest progress, when pending, to the latest measure.
func (l *simLag) settle() {
	if l.progressPending {
		l.progressS, l.progressPending = min(l.progressS, l.nowS), false
	}
}

// credit returns how much of a silence the simulator's lag explains: the lag now less the lag
// fromS it began with, within [0, leftS] (leftS is what the harness's lag leaves of it).
func (l *simLag) credit(fromS, leftS float64) float64 {
	return min(max(0, l.lagS()-fromS), max(0, leftS))
}

// open credits a silence that a byte at t closes, which began with the simulator's lag fromS.
// A byte after the latest sample may have come in the interval the next sample measures: it
// is credited at the lag known now and again, if more, at the next measure (Analyzer.settleSim).
func (l *simLag) open(s *silence, fromS, t float64) {
	s.simFromS = fromS
	s.simS = l.credit(fromS, s.lengthS-s.behindS)
	s.simPending = t > l.atS
}

// ownLag is what the simulator measured of one request's own lag: its latest two readings,
// simulated seconds (see simLag).
type ownLag struct{ prevS, nowS float64 }

// read takes a new reading.
func (o *ownLag) read(lagS float64) { o.prevS, o.nowS = o.nowS, lagS }

// s is the lag a byte read now is taken to have come with: the larger of the latest two.
func (o ownLag) s() float64 { return max(o.prevS, o.nowS) }

// credit returns how much of a silence its request's own lag explains: the lag now less the
// lag fromS it began with, within [0, leftS].
func (o ownLag) credit(fromS, leftS float64) float64 {
	return min(max(0, o.s()-fromS), max(0, leftS))
}
