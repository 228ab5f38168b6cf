package traceimport

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentsim/agentsim/trace"
)

// ErrLatencyUnit marks a log whose bare latencies' unit cannot be inferred: the caller must
// give it (AccessLog's unit).
var ErrLatencyUnit = errors.New("latency unit")

// ErrLatencyUnitDisproved marks a unit given for a log whose own timestamps show another.
var ErrLatencyUnitDisproved = errors.New("latency unit disproved")

// Latency-unit inference. A router writes its latency either with its unit (Rust's Duration
// Debug form, "62.690782s") or as a bare integer whose unit changed between versions (µs in
// the model gateway). Reading µs as ns turns a one-minute request into a fast one, so the unit
// is never guessed: each bare latency is checked against the log's own clock.
//
// The evidence is the start line of the same request: the router logs "started processing
// request" when the request arrives and "finished processing request" when it answers, and the
// latency is the time between the two. A start and a finish line are paired
//
//   - by request_id, when both lines carry the same one (the span field the router fills in
//     when its request-id layer ran before the trace layer), else
//   - for each candidate unit, with an unpaired start line of the same method and uri whose
//     time is the finish time minus the latency in that unit, within the timestamps'
//     resolution (1 s for "19:45:16").
//
// A finish line fits a unit when such a start exists. The unit that fits most lines wins,
// provided it fits at least one line that the other units do not. When two units each have
// lines only they fit, the log mixes units (it spans an upgrade) and the import stops, naming
// the lines. A log with no start lines cannot tell ns from µs — its finish lines say when
// requests ended, never when they began — so the import refuses and asks for --latency-unit.

// fitting is one finish line with a bare latency and, per unit, the start line it pairs with
// under that unit (nil: none).
type fitting struct {
	f     *logLine
	exact bool // paired by request_id
	start [Seconds + 1]*logLine
}

func (x *fitting) fits(u Unit) bool { return x.start[u] != nil }

// startKey groups start lines that may pair with a finish line without a request id.
type startKey struct{ method, uri string }

// inferUnit infers the unit of the bare latencies of finishes from starts.
func inferUnit(starts, finishes []*logLine) (Unit, []string, error) {
	fs := pairLines(starts, finishes)
	var nfit [Seconds + 1]int
	for i := range fs {
		for _, u := range units {
			if fs[i].fits(u) {
				nfit[u]++
			}
		}
	}
	if len(starts) == 0 || nfit[Nanoseconds]+nfit[Microseconds]+nfit[Milliseconds]+nfit[Seconds] == 0 {
		return UnitUnknown, nil, noEvidence(starts, finishes)
	}
	if err := mixedUnits(fs); err != nil {
		return UnitUnknown, nil, err
	}
	w := units[0]
	for _, u := range units[1:] {
		if nfit[u] > nfit[w] {
			w = u
		}
	}
	for _, v := range units {
		if v != w && nfit[v] > 0 && !anyFits(fs, w, v) {
			return UnitUnknown, nil, ambiguous(fs, w, nfit)
		}
	}
	return w, evidence(fs, w, nfit[w]), nil
}

// pairLines pairs each finish line with start lines, by request_id or, per unit, by time.
func pairLines(starts, finishes []*logLine) []fitting {
	byID := map[string][]*logLine{}
	for _, s := range starts {
		if s.id != "" {
			byID[s.id] = append(byID[s.id], s)
		}
	}
	fs := make([]fitting, len(finishes))
	used := map[*logLine]bool{}
	for i, f := range finishes {
		fs[i].f = f
		if f.id == "" || len(byID[f.id]) == 0 {
			continue
		}
		s := byID[f.id][0]
		byID[f.id] = byID[f.id][1:]
		used[s] = true
		fs[i].exact = true
		gap := f.at.Sub(s.at).Seconds()
		for _, u := range units {
			if d := u.in(f.lat); abs(d-gap) <= tolerance(f, s, d) {
				fs[i].start[u] = s
			}
		}
	}
	pool := map[startKey][]*logLine{}
	for _, s := range starts {
		if !used[s] {
			k := startKey{s.method, s.uri}
			pool[k] = append(pool[k], s)
		}
	}
	for _, p := range pool {
		sort.SliceStable(p, func(i, j int) bool { return p[i].at.Before(p[j].at) })
	}
	for _, u := range units {
		taken := map[startKey]*untaken{}
		for i := range fs {
			if fs[i].exact {
				continue
			}
			f := fs[i].f
			k := startKey{f.method, f.uri}
			if taken[k] == nil {
				taken[k] = newUntaken(len(pool[k]))
			}
			fs[i].start[u] = takeStart(pool[k], taken[k], f, u.in(f.lat))
		}
	}
	return fs
}

// untaken finds the first start line not yet taken at or after an index, in amortised
// constant time (a disjoint-set forest whose roots are the untaken indices).
type untaken struct{ next []int }

func newUntaken(n int) *untaken {
	u := &untaken{next: make([]int, n+1)}
	for i := range u.next {
		u.next[i] = i
	}
	return u
}

// find returns the first untaken index ≥ i (n when none).
func (u *untaken) find(i int) int {
	root := i
	for u.next[root] != root {
		root = u.next[root]
	}
	for u.next[i] != root {
		u.next[i], i = root, u.next[i]
	}
	return root
}

func (u *untaken) take(i int) { u.next[i] = i + 1 }

// takeStart finds and takes the earliest untaken start line, logged before f, whose time is
// f's time minus d seconds, within the resolution of the timestamps.
func takeStart(p []*logLine, free *untaken, f *logLine, d float64) *logLine {
	if d > trace.MaxSeconds {
		return nil // further back than any trace (and beyond time.Duration)
	}
	want := f.at.Add(-time.Duration(d * 1e9))
	tol := time.Duration(tolerance(f, f, d) * 1e9)
	i := sort.Search(len(p), func(i int) bool { return !p[i].at.Before(want.Add(-tol)) })
	for i = free.find(i); i < len(p) && !p[i].at.After(want.Add(tol)); i = free.find(i + 1) {
		if p[i].n < f.n {
			free.take(i)
			return p[i]
		}
	}
	return nil
}

// tolerance is how far a latency of d seconds may be from the gap between the timestamps of
// a start and a finish line: each timestamp is cut to its resolution, and the router reads
// its clock for the line a moment after it measures the latency.
func tolerance(f, s *logLine, d float64) float64 {
	return max(f.res, s.res) + 0.01 + 0.01*d
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// anyFits reports whether some line fits w but not v.
func anyFits(fs []fitting, w, v Unit) bool {
	for i := range fs {
		if fs[i].fits(w) && !fs[i].fits(v) {
			return true
		}
	}
	return false
}

// mixedUnits reports lines that only one unit explains, when two units each have such lines.
// Lines paired by request_id are proof; lines paired by time may fit a wrong unit by
// coincidence, so those need three lines and a tenth of the decisive ones.
func mixedUnits(fs []fitting) error {
	only := map[Unit][]*fitting{}
	exact := map[Unit]bool{}
	total := 0
	for i := range fs {
		var u Unit
		n := 0
		for _, c := range units {
			if fs[i].fits(c) {
				u, n = c, n+1
			}
		}
		if n == 1 {
			only[u] = append(only[u], &fs[i])
			exact[u] = exact[u] || fs[i].exact
			total++
		}
	}
	var groups []Unit
	for _, u := range units {
		if len(only[u]) > 0 && (exact[u] || (len(only[u]) >= 3 && 10*len(only[u]) >= total)) {
			groups = append(groups, u)
		}
	}
	if len(groups) < 2 {
		return nil
	}
	var parts []string
	for _, u := range groups {
		x := only[u][0]
		match := fmt.Sprintf("%s matches the %s between start (%s) and finish (%s)",
			x.f.latRaw, formatSeconds(x.f.at.Sub(x.start[u].at).Seconds()), x.start[u].clock, x.f.clock)
		if len(only[u]) == 1 {
			parts = append(parts, fmt.Sprintf("line %d fits only %s (%s)", x.f.n, u, match))
		} else {
			parts = append(parts, fmt.Sprintf("%s fit only %s (line %d: %s)", lineList(only[u]), u, x.f.n, match))
		}
	}
	return fmt.Errorf("%w: the log mixes units: %s; split the log where the router changed, or give the unit", ErrLatencyUnit, strings.Join(parts, "; "))
}

// lineList names up to five lines: "lines 3, 5, 9, 12, 14 and 40 more".
func lineList(fs []*fitting) string {
	var ns []string
	for i, x := range fs {
		if i == 5 {
			return fmt.Sprintf("lines %s and %d more", strings.Join(ns, ", "), len(fs)-5)
		}
		ns = append(ns, strconv.Itoa(x.f.n))
	}
	if len(ns) == 1 {
		return "line " + ns[0]
	}
	return "lines " + strings.Join(ns, ", ")
}

// evidence picks the line that best shows w against the unit it is most often taken for:
// the longest request w explains and that unit does not.
func evidence(fs []fitting, w Unit, n int) []string {
	alt := w.confusedWith()
	var best *fitting
	for i := range fs {
		x := &fs[i]
		if !x.fits(w) || x.fits(alt) {
			continue
		}
		if best == nil || x.f.lat > best.f.lat {
			best = x
		}
	}
	if best == nil { // every line w fits, alt fits too: show the longest
		for i := range fs {
			if x := &fs[i]; x.fits(w) && (best == nil || x.f.lat > best.f.lat) {
				best = x
			}
		}
	}
	s := best.start[w]
	how := "by time, per unit"
	if best.exact {
		how = "by request_id"
	}
	return []string{
		fmt.Sprintf("latency unit: %s — %s matches the %s between start (%s) and finish (%s); as %s it would be %s",
			w, best.f.latRaw, formatSeconds(best.f.at.Sub(s.at).Seconds()), s.clock, best.f.clock, alt, formatSeconds(alt.in(best.f.lat))),
		fmt.Sprintf("latency unit: %d of %d finish lines with a bare latency fit %s (start and finish lines paired %s)", n, len(fs), w, how),
	}
}

// ambiguous says that no line tells w from the other units that fit as many lines.
func ambiguous(fs []fitting, w Unit, nfit [Seconds + 1]int) error {
	var longest *logLine
	for i := range fs {
		if fs[i].fits(w) && (longest == nil || fs[i].f.lat > longest.lat) {
			longest = fs[i].f
		}
	}
	var names, as []string
	for _, u := range units {
		if u == w || (nfit[u] > 0 && !anyFits(fs, w, u)) {
			names = append(names, u.String())
			as = append(as, fmt.Sprintf("%s as %s", formatSeconds(u.in(longest.lat)), u))
		}
	}
	return fmt.Errorf("%w: cannot tell %s apart: every paired line fits each (the longest, line %d: %s, is %s, all within the timestamps' resolution); give the unit",
		ErrLatencyUnit, andList(names), longest.n, longest.latRaw, andList(as))
}

// andList joins "a", "b" and "c" as "a, b and c".
func andList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// noEvidence explains why a log without pairable start lines cannot show its unit.
func noEvidence(starts, finishes []*logLine) error {
	longest := finishes[0]
	for _, f := range finishes {
		if f.lat > longest.lat {
			longest = f
		}
	}
	var as []string
	for _, u := range units {
		as = append(as, fmt.Sprintf("%s as %s", formatSeconds(u.in(longest.lat)), u))
	}
	why := "the log has no \"started processing request\" lines to pair with its finish lines"
	if len(starts) > 0 {
		why = "no start line pairs with a finish line under any unit"
	}
	return fmt.Errorf("%w: cannot tell from this log: %s, and a finish line alone does not show its unit (line %d: %s is %s); give the unit",
		ErrLatencyUnit, why, longest.n, longest.latRaw, strings.Join(as, ", "))
}
