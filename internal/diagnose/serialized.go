package diagnose

import (
	"fmt"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// Thresholds of the server-serialized rule.
const (
	// serialMinInFlight is the mean number of requests in flight from which one-at-a-time
	// progress means serialisation rather than light load.
	serialMinInFlight = 4
	// activeWithinS is how recent a stream's last byte must be for it to count as progressing
	// at a sampling instant, in seconds.
	activeWithinS = 1.0
)

// serialView accumulates the harness's own view of parallel progress: at each sample with at
// least serialMinInFlight open streams, how many of them had received output (a chunk, not
// just headers) within activeWithinS.
type serialView struct {
	crowded   int     // samples with ≥ serialMinInFlight open streams
	low       int     // of those, samples where at most one stream progressed
	one       int     // of those, samples where exactly one did
	activeSum float64 // progressing streams, summed over the crowded samples
	openSum   float64 // open streams, summed over the crowded samples
}

func (sv *serialView) observe(s events.Sample) {
	open, active := len(s.Streams), 0
	if s.Open != nil && activeWithinS == events.MovingWithinS {
		open, active = s.InFlight, s.Open.Moving
	} else {
		for _, st := range s.Streams {
			if st.SinceLastByteS < activeWithinS && st.Chunks > 0 {
				active++
			}
		}
	}
	if open < serialMinInFlight {
		return
	}
	sv.crowded++
	sv.activeSum += float64(active)
	sv.openSum += float64(open)
	if active <= 1 {
		sv.low++
	}
	if active == 1 {
		sv.one++
	}
}

// harness view outcomes.
const (
	viewUnknown    = iota // no crowded sample
	viewSerialized        // at most one stream progressed in most crowded samples, mostly exactly one
	viewParallel          // several streams progressed in most crowded samples
	viewSilent            // in most crowded samples nothing progressed at all (a wedge, not a queue)
)

func (sv *serialView) outcome() int {
	switch {
	case sv.crowded == 0:
		return viewUnknown
	case 2*sv.low <= sv.crowded:
		return viewParallel
	case 2*sv.one >= sv.low:
		return viewSerialized
	}
	return viewSilent
}

// serialization is the server-serialized judgement and the two views behind it.
type serialization struct {
	yes      bool
	inFlight float64 // mean requests in flight
	server   string  // the server's view, one sentence
	harness  string  // the harness's view, one sentence
}

// serialization judges whether requests are many in flight but progress one at a time: the
// server's decode_running never above 1 when the gauge exists (unless the harness saw several
// streams progress at once: gauges can lie), the harness's view otherwise.
func (a *Analyzer) serialization(nowS float64, r *results.Results) serialization {
	s := serialization{inFlight: a.meanInFlight(nowS)}
	g := r.Server.DecodeRunning
	hv := a.serial.outcome()
	if g.N > 0 {
		s.server = fmt.Sprintf("server view: decode_running max = %s, mean %.2f over %d samples", num(g.Max), g.Mean, g.N)
	} else {
		s.server = "server view: no decode_running gauge"
	}
	sv := &a.serial
	if hv == viewUnknown {
		s.harness = fmt.Sprintf("harness view: no sample had ≥ %d open streams", serialMinInFlight)
	} else {
		s.harness = fmt.Sprintf("harness view: in %d of %d samples with ≥ %d open streams at most 1 stream received output in the last %s (mean %.1f progressing of %.1f open)",
			sv.low, sv.crowded, serialMinInFlight, secs(activeWithinS), sv.activeSum/float64(sv.crowded), sv.openSum/float64(sv.crowded))
	}
	if s.inFlight < serialMinInFlight || r.Requests.OK == 0 {
		return s
	}
	if g.N > 0 {
		s.yes = g.Max <= 1 && hv != viewParallel
	} else {
		s.yes = hv == viewSerialized
	}
	return s
}

// serializedRule is the server-serialized verdict.
func (a *Analyzer) serializedRule(v *view, r *results.Results) (results.Verdict, bool) {
	s := v.ser
	if !s.yes {
		return results.Verdict{}, false
	}
	ev := []string{
		fmt.Sprintf("mean %.1f requests in flight, yet only one progressed at a time; %d requests finished ok at %s aggregate",
			s.inFlight, r.Requests.OK, rate(r.Tokens.OutputPerSecond)),
		s.server, s.harness,
	}
	if len(v.silent) > 0 {
		ev = append(ev, fmt.Sprintf("%d queued requests have received no output for ≥ %s (longest %s): they wait for the one request the server runs",
			len(v.silent), secs(v.silent[len(v.silent)-1].silenceS(v.nowS)), secs(v.silent[0].silenceS(v.nowS))))
	}
	return results.Verdict{
		Kind: results.ServerSerialized,
		Summary: fmt.Sprintf("%.1f requests in flight on average but the server progresses one at a time (mean e2e latency %s)",
			s.inFlight, secs(r.Latency.E2E.Mean)),
		Evidence: ev,
	}, true
}

// explainsSilence reports whether serialisation explains every silent stream: each is still
// queued (no output token yet) behind the one request the server runs.
func (v *view) explainsSilence() bool {
	if !v.ser.yes {
		return false
	}
	for _, r := range v.stalled {
		if !r.queued() {
			return false
		}
	}
	return true
}
