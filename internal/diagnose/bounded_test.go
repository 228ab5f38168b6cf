package diagnose

import (
	"cmp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/events"
)

// bounded returns s as the harness writes it at scale (Sample.Bound): every open stream
// counted in Open, the listed longest silences named, extended to every silent one up to
// maxListed; with other bounds than events.ListedStreams and events.MaxListedStreams, to
// test what fewer names do.
func bounded(s events.Sample, stallS float64, listed, maxListed int) events.Sample {
	if listed == events.ListedStreams && maxListed == events.MaxListedStreams {
		s.Streams = slices.Clone(s.Streams)
		s.Bound(stallS)
		return s
	}
	o := &events.OpenStreams{StallAfterS: stallS}
	streams := slices.Clone(s.Streams)
	last := -1.0
	for _, st := range streams {
		o.Chunks += int64(st.Chunks)
		if st.SinceLastByteS >= stallS {
			o.Silent++
		}
		if st.Chunks > 0 && st.SinceLastByteS < events.MovingWithinS {
			o.Moving++
		}
		if st.SinceLastByteS < st.SentAgoS {
			o.WithBytes++
			if last < 0 || st.SinceLastByteS < last {
				last = st.SinceLastByteS
			}
		}
	}
	o.LastByteAgoS = max(last, 0)
	slices.SortFunc(streams, func(x, y events.Stream) int {
		return cmp.Or(cmp.Compare(y.SinceLastByteS, x.SinceLastByteS), x.Agent-y.Agent, strings.Compare(x.Request, y.Request))
	})
	n := min(len(streams), max(listed, min(o.Silent, maxListed)))
	if n < len(streams) {
		o.UnlistedMaxSilenceS = streams[n].SinceLastByteS
	}
	if o.Silent < len(streams) {
		o.NotSilentMaxS = streams[o.Silent].SinceLastByteS
	}
	s.Streams, s.Open = streams[:n], o
	if n == 0 {
		s.Streams = nil
	}
	return s
}

// judgedBounded judges w at at as judged does, from samples bounded to name listed streams
// (up to maxListed silent ones).
func judgedBounded(w *world, cfg Config, at float64, listed, maxListed int) (string, string, []string) {
	if at == 0 {
		at = lastTime(w)
	}
	a := New(cfg)
	var evs []events.Event
	for _, e := range w.sorted() {
		if e.TS <= at {
			evs = append(evs, e)
		}
	}
	var samples []events.Sample
	for _, s := range w.samples(at) {
		samples = append(samples, bounded(s, a.stallS, listed, maxListed))
	}
	Replay(a, evs, samples)
	v := a.Verdict(at)
	return string(v.Kind), v.Summary, v.Evidence
}

// boundedScenarios are the verdict scenarios, each with the time to judge it at (0: its last
// event).
func boundedScenarios() map[string]func() (*world, Config, float64) {
	at0 := func(f func() (*world, Config)) func() (*world, Config, float64) {
		return func() (*world, Config, float64) { w, c := f(); return w, c, 0 }
	}
	return map[string]func() (*world, Config, float64){
		"wedge starvation":   wedgeStarvation,
		"all wedged":         func() (*world, Config, float64) { return allWedged(false) },
		"all wedged, armed":  func() (*world, Config, float64) { return allWedged(true) },
		"wedge idle timeout": wedgeIdleTimeout,
		"retried errors":     retriedErrors,
		"leak on timeout":    leakOnTimeout,
		"leak and wedge":     leakAndWedge,
		"serialized":         func() (*world, Config, float64) { return serialized(8, 400, true) },
		"serialized, no gauge": func() (*world, Config, float64) {
			return serialized(8, 400, false)
		},
		"one stalled":   oneStalled,
		"partly wedged": partlyWedged,
		"lost wake-up":  lostWakeUp,
		"parallel": at0(func() (*world, Config) {
			return parallel(16, 3, 30, 600)
		}),
		"with errors": at0(withErrors),
		"smoke":       at0(smoke),
	}
}

// TestBoundedSamplesSameVerdicts: samples that name only the longest silences (and count the
// rest) give every scenario the verdict, summary and evidence that samples listing every
// stream give.
func TestBoundedSamplesSameVerdicts(t *testing.T) {
	for name, f := range boundedScenarios() {
		t.Run(name, func(t *testing.T) {
			w, cfg, at := f()
			kind, summary, evidence := judged(w, cfg, at)
			w, cfg, at = f()
			bKind, bSummary, bEvidence := judgedBounded(w, cfg, at, events.ListedStreams, events.MaxListedStreams)
			assert.Equal(t, string(kind), bKind)
			assert.Equal(t, summary, bSummary)
			assert.Equal(t, evidence, bEvidence)
		})
	}
}

// TestMoreSilentThanNamed: when more streams are silent than a sample names, the verdict
// stays and its counts are the sample's, not the names'.
func TestMoreSilentThanNamed(t *testing.T) {
	for name, f := range boundedScenarios() {
		t.Run(name, func(t *testing.T) {
			w, cfg, at := f()
			kind, summary, _ := judged(w, cfg, at)
			w, cfg, at = f()
			bKind, bSummary, _ := judgedBounded(w, cfg, at, 2, 4)
			assert.Equal(t, string(kind), bKind)
			if strings.HasPrefix(summary, "every running agent") || strings.Contains(summary, "open streams received no byte") {
				assert.Equal(t, summary, bSummary)
			}
		})
	}
}
