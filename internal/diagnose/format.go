package diagnose

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/results"
)

// secs formats a duration in simulated seconds with its unit, as every report does
// (results.Seconds).
func secs(s float64) string { return results.Seconds(s) }

// span formats a range of durations, "590–612 s", or one duration when both ends round alike.
func span(lo, hi float64) string {
	if secs(lo) == secs(hi) {
		return secs(hi)
	}
	return strings.TrimSuffix(secs(lo), " s") + "–" + secs(hi)
}

// num formats a count or gauge value: no decimals when it is whole, one otherwise.
func num(x float64) string {
	if x == math.Trunc(x) {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

// rate formats tokens per second.
func rate(x float64) string {
	if x >= 10 {
		return fmt.Sprintf("%.0f tok/s", x)
	}
	return fmt.Sprintf("%.1f tok/s", x)
}

// pct formats a fraction as a percentage.
func pct(f float64) string { return fmt.Sprintf("%.1f %%", 100*f) }

// agentList names up to maxNamed agents: "agents 3, 7, 9 and 11 more".
func agentList(ids []int) string {
	return "agent" + plural.S(len(ids)) + " " + listed(len(ids), func(i int) string { return strconv.Itoa(ids[i]) })
}

// maxNamed is how many agents, requests or permits one evidence line names.
const maxNamed = 8

// listed joins the first maxNamed of n names and says how many more there are.
func listed(n int, name func(int) string) string {
	parts := make([]string, 0, min(n, maxNamed))
	for i := 0; i < n && i < maxNamed; i++ {
		parts = append(parts, name(i))
	}
	s := strings.Join(parts, ", ")
	if n > maxNamed {
		s += fmt.Sprintf(" and %d more", n-maxNamed)
	}
	return s
}
