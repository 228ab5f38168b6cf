package traceimport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Unit is the unit of a latency written as a bare number.
type Unit int

// The latency units, smallest first. UnitUnknown asks for inference.
const (
	UnitUnknown Unit = iota
	Nanoseconds
	Microseconds
	Milliseconds
	Seconds
)

// PerSecond returns how many u make one second (1e6 for µs). Dividing a count by it is
// exact where multiplying by Seconds is not (44920118 µs is 44.920118 s, not 44.920117999…).
func (u Unit) PerSecond() float64 {
	switch u {
	case Nanoseconds:
		return 1e9
	case Microseconds:
		return 1e6
	case Milliseconds:
		return 1e3
	case Seconds:
		return 1
	}
	return math.NaN()
}

// in returns v units u in seconds.
func (u Unit) in(v float64) float64 { return v / u.PerSecond() }

// units lists the known units, smallest first.
var units = []Unit{Nanoseconds, Microseconds, Milliseconds, Seconds}

// Seconds returns the length of one u in seconds.
func (u Unit) Seconds() float64 {
	switch u {
	case Nanoseconds:
		return 1e-9
	case Microseconds:
		return 1e-6
	case Milliseconds:
		return 1e-3
	case Seconds:
		return 1
	}
	return math.NaN()
}

func (u Unit) String() string {
	switch u {
	case Nanoseconds:
		return "ns"
	case Microseconds:
		return "µs"
	case Milliseconds:
		return "ms"
	case Seconds:
		return "s"
	}
	return "unknown"
}

// ParseUnit parses a --latency-unit value: ns, us (or µs), ms or s.
func ParseUnit(s string) (Unit, error) {
	switch s {
	case "ns":
		return Nanoseconds, nil
	case "us", "µs":
		return Microseconds, nil
	case "ms":
		return Milliseconds, nil
	case "s":
		return Seconds, nil
	}
	return UnitUnknown, fmt.Errorf("latency unit %q: must be ns, us, ms or s", s)
}

// confusedWith is the unit a reader is most likely to take u for: the next smaller one (a µs
// count read as ns), or µs for ns.
func (u Unit) confusedWith() Unit {
	if u == Nanoseconds {
		return Microseconds
	}
	return u - 1
}

// parseLatency reads a latency value: Rust's Duration Debug form with its unit ("1.234567ms",
// "62.690782s", "500µs", "12ns") or a bare number (unit UnitUnknown).
func parseLatency(s string) (float64, Unit, bool) {
	for _, suf := range []struct {
		s string
		u Unit
	}{{"ns", Nanoseconds}, {"µs", Microseconds}, {"us", Microseconds}, {"ms", Milliseconds}, {"s", Seconds}} {
		if num, ok := strings.CutSuffix(s, suf.s); ok {
			v, err := strconv.ParseFloat(num, 64)
			return v, suf.u, err == nil && v >= 0 && !math.IsInf(v, 0)
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, UnitUnknown, err == nil && v >= 0 && !math.IsInf(v, 0)
}

// formatSeconds prints a duration in seconds as a person would say it: "63 s", "4.2 s",
// "0.06 s", "17.4 h".
func formatSeconds(v float64) string {
	switch {
	case v >= 2*86400*365:
		return fmt.Sprintf("%.0f years", v/(86400*365))
	case v >= 2*86400:
		return fmt.Sprintf("%.0f days", v/86400)
	case v >= 3600:
		return fmt.Sprintf("%.1f h", v/3600)
	case v >= 10:
		return fmt.Sprintf("%.0f s", v)
	case v >= 1:
		return fmt.Sprintf("%.1f s", v)
	case v >= 0.01:
		return fmt.Sprintf("%.2f s", v)
	case v == 0:
		return "0 s"
	}
	return fmt.Sprintf("%.2g s", v)
}
