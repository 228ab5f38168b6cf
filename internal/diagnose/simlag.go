package diagnose

import "github.com/agentsim/agentsim/events"

// simLag follows the embedded simulator's own lag through the samples (events.Sample.SimLagS,
// docs/verdicts.md). At a speedup the machine cannot keep up with, the simulator's own work
// puts it behind its model: a byte it delivers comes that much later than the model says,
// though the server it models sent it on time. A silence between two bytes is then longer
// than the model's by how much later its closing byte came than its opening one; a silence
// since the send (the harness's own timestamp) by all of the closing byte's lag. The lag a
// byte came with is not known per request: it is the lag of the sample interval it came in —
// the largest lateness of any delivery in that interval, or how far behind the simulator was
// at its end — so the credit errs generous, never by more than that lag.
type simLag struct {
	// nowS is the latest sample's sim_lag_s, atS that sample's time, simulated seconds.
	nowS, atS float64
	// progressS is nowS when the run last made progress (a byte, a request end).
	progressS float64
}

// sample takes the lag a sample measured over the interval it ends.
func (l *simLag) sample(s events.Sample) { l.nowS, l.atS = s.SimLagS, s.TS }

// credit returns how much of a silence the simulator's lag explains: the lag now less the lag
// fromS it began with, within [0, leftS] (leftS is what the harness's lag leaves of it).
func (l *simLag) credit(fromS, leftS float64) float64 {
	return min(max(0, l.nowS-fromS), max(0, leftS))
}

// open credits a silence that a byte at t closes, which began with the simulator's lag fromS.
// A byte after the latest sample came in the interval the next sample measures: it is
// credited at the lag known now and settled at the next sample's (silence.settle).
func (l *simLag) open(s *silence, fromS, t float64) {
	s.simFromS = fromS
	s.simS = l.credit(fromS, s.lengthS-s.behindS)
	s.simPending = t > l.atS
}
