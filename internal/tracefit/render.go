package tracefit

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentsim/agentsim/workloads"
)

// quantiles are the quantiles the table compares.
var quantiles = []float64{0.1, 0.5, 0.9, 0.99}

// Render prints, per fitted quantity, the data's quantiles beside the chosen distribution's
// and every kind's Kolmogorov–Smirnov distance, then the notes.
func Render(w io.Writer, r *Result) error {
	var b strings.Builder
	for _, q := range r.Quantities {
		fmt.Fprintf(&b, "%s (%s, n=%d): %s\n", q.Key, q.Unit, len(q.Data), describe(q.Chosen, q.Unit))
		fmt.Fprintf(&b, "  %-10s", "")
		for _, p := range quantiles {
			fmt.Fprintf(&b, " %10s", fmt.Sprintf("p%g", p*100))
		}
		fmt.Fprintf(&b, "\n  %-10s", "data")
		for _, p := range quantiles {
			fmt.Fprintf(&b, " %10s", num(quantile(q.Data, p), q.Unit))
		}
		fmt.Fprintf(&b, "\n  %-10s", "fitted")
		for _, p := range quantiles {
			fmt.Fprintf(&b, " %10s", num(q.Chosen.Quantile(p), q.Unit))
		}
		b.WriteString("\n  KS distance:")
		for _, f := range q.Fits {
			mark := ""
			if f.Kind == q.Chosen.Kind {
				mark = "*"
			}
			fmt.Fprintf(&b, " %s%s %.3f", mark, f.Kind, f.KS)
		}
		b.WriteString("\n")
		if q.Note != "" {
			fmt.Fprintf(&b, "  %s\n", q.Note)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "%s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// describe names a fit and its parameters with units.
func describe(f Fit, unit string) string {
	switch f.Kind {
	case workloads.DistConst:
		return fmt.Sprintf("const %s", num(f.Value, unit))
	case workloads.DistUniform:
		return fmt.Sprintf("uniform %s … %s", num(f.Min, unit), num(f.Max, unit))
	case workloads.DistExp:
		return fmt.Sprintf("exp, mean %s", num(f.Mean, unit))
	case workloads.DistMixture:
		var parts []string
		for i, v := range f.Values {
			parts = append(parts, fmt.Sprintf("%s %.1f %%", num(v, unit), 100*f.Shares[i]))
		}
		return "the data's own: " + strings.Join(parts, ", ")
	}
	return fmt.Sprintf("%s, mean %s, stddev %s", f.Kind, num(f.Mean, unit), num(f.StdDev, unit))
}

// num renders a value with its unit: tokens as whole numbers, seconds to the millisecond.
func num(x float64, unit string) string {
	if unit == "s" {
		return fmt.Sprintf("%.3f s", x)
	}
	return fmt.Sprintf("%.0f", x)
}
