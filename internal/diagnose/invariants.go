package diagnose

import (
	"fmt"

	"github.com/agentsim/agentsim/events"
)

// invariants holds the conservation checks made on every sample. A sample and the events
// around it are taken a moment apart, so one mismatch is noise: a check counts as broken
// only when it fails in two samples in a row. Under load the moment stretches: an agent
// granted a permit or done with a request records it only once it runs again, which is as
// late as the harness's scheduling lag. So a breach also has to outlast the largest lag the
// samples measured (events.Sample.LagS) while it lasted, or before: a process that was once
// that late can be so again between two samples that measure less (10,000 agents beside two
// CPU hogs: a lag of 574 s, then "81 requests in flight by the events but the sample shows
// 2848" over a streak whose own samples measured less). One that does not is counted as
// explained by lag, not broken.
type invariants struct {
	inFlight   persistent // requests sent = ended + in flight, events vs samples
	pacerCount persistent // permits held by the events' ledger vs the pacer's in_use
	pacerSelf  persistent // the pacer's acquired = released + in_use
	wakeUp     persistent // agents wait while permits are free (slots pacer)
	stray      int        // terminal events for requests not in flight
	lagS       float64    // the largest lag_s of any sample so far, seconds
	firstStray string
}

// persistent is one check over the samples.
type persistent struct {
	streak    int
	sinceS    float64 // time of the streak's first sample, simulated seconds
	lagS      float64 // the largest scheduling lag the streak's samples measured
	broken    int     // samples in which it was broken (from the second in a row on)
	first     string  // the first breach, described
	explained int     // samples in which it failed for no longer than the lag
	maxLagS   float64 // the largest lag that explained a breach
}

// observe records the check's outcome at sample s, in a run whose samples measured a lag of up
// to runLagS so far; msg describes a breach.
func (p *persistent) observe(s events.Sample, runLagS float64, ok bool, msg func() string) {
	if ok {
		p.streak = 0
		return
	}
	if p.streak == 0 {
		p.sinceS, p.lagS = s.TS, 0
	}
	p.streak++
	p.lagS = max(p.lagS, s.LagS, runLagS)
	if p.streak < 2 {
		return
	}
	if s.TS-p.sinceS <= p.lagS {
		p.explained++
		p.maxLagS = max(p.maxLagS, p.lagS)
		return
	}
	p.broken++
	if p.first == "" {
		p.first = msg()
	}
}

func (inv *invariants) strayTerminal(msg string) {
	inv.stray++
	if inv.firstStray == "" {
		inv.firstStray = msg
	}
}

// checkSample checks the run's conservation laws against one sample.
func (a *Analyzer) checkSample(s events.Sample) {
	a.inv.lagS = max(a.inv.lagS, s.LagS)
	lag := a.inv.lagS
	// Each count and the events up to the sample differ by at most the changes under way as
	// it was taken, whose events were not yet recorded.
	open := len(a.open)
	a.inv.inFlight.observe(s, lag, max(open-s.InFlight, s.InFlight-open) <= int(s.InFlightUnrecorded), func() string {
		return fmt.Sprintf("at t=%s the events show %d requests in flight (%d sent − %d ended) but the sample shows %d%s",
			secs(s.TS), open, a.sent, a.ended, s.InFlight, underWay(s.InFlightUnrecorded, "requests opened or closed"))
	})
	p := s.Pacer
	if p == nil {
		return
	}
	held := len(a.ledger.held)
	a.inv.pacerCount.observe(s, lag, max(held-p.InUse, p.InUse-held) <= int(p.Unrecorded), func() string {
		return fmt.Sprintf("at t=%s the events show %d permits held (%d acquired − %d released) but the pacer reports %d in use%s",
			secs(s.TS), held, a.ledger.acquired, a.ledger.released, p.InUse, underWay(p.Unrecorded, "pacer operations"))
	})
	a.inv.pacerSelf.observe(s, lag, p.Acquired == p.Released+int64(p.InUse), func() string {
		return fmt.Sprintf("at t=%s the pacer reports %d acquired ≠ %d released + %d in use",
			secs(s.TS), p.Acquired, p.Released, p.InUse)
	})
	// A waiter granted a permit that has not run yet to take it is no lost wake-up: count its
	// permit as in use.
	limit, waiting, inUse := a.limit(), p.Waiting-p.Granted, p.InUse+p.Granted
	a.inv.wakeUp.observe(s, lag, !a.cfg.PacerKind.AdmitsWhenFree() || limit == 0 || waiting <= 0 || inUse >= limit, func() string {
		return fmt.Sprintf("at t=%s %d agents waited in the pacer while only %d of %d permits were in use (a lost wake-up)",
			secs(s.TS), waiting, inUse, limit)
	})
}

// invariantEvidence returns one line per broken invariant.
func (a *Analyzer) invariantEvidence() []string {
	var out []string
	for _, c := range []struct {
		p    *persistent
		what string
	}{
		{&a.inv.inFlight, "requests sent = finished + failed + cancelled + in flight"},
		{&a.inv.pacerCount, "pacer acquired = released + held"},
		{&a.inv.pacerSelf, "pacer acquired = released + in use"},
		{&a.inv.wakeUp, "no agent waits while a permit is free"},
	} {
		if c.p.broken > 0 {
			out = append(out, fmt.Sprintf("invariant broken (%s) in %d samples: first %s",
				c.what, c.p.broken, c.p.first))
		}
		if c.p.explained > 0 && c.p.broken == 0 {
			out = append(out, fmt.Sprintf("invariant (%s) failed in %d samples for no longer than the harness's scheduling lag (up to %s): explained by lag, not counted as broken",
				c.what, c.p.explained, secs(c.p.maxLagS)))
		}
	}
	if a.inv.stray > 0 {
		out = append(out, fmt.Sprintf("invariant broken (one terminal event per request) %d times: first a %s",
			a.inv.stray, a.inv.firstStray))
	}
	return out
}

// limit returns the pacer's number of permits: the sampled limit when the pacer reports one,
// else the configured slots of a fixed-size design, else 0 (unknown: rate and token budgets).
func (a *Analyzer) limit() int {
	if a.pacerLimit > 0 {
		return a.pacerLimit
	}
	return a.cfg.fixedLimit()
}

// underWay says how many changes of what were under way as a sample was taken, "" when none.
func underWay(n int64, what string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", beyond the %d %s under way", n, what)
}
