package gate

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Status is how one rule came out.
type Status string

// The statuses of a rule.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Skip: a baseline rule evaluated without a baseline run.
	Skip Status = "skip"
)

// Result is one rule evaluated.
type Result struct {
	// Rule is the rule evaluated, Status how it came out.
	Rule   Rule
	Status Status
	// Figure is the rule's figure (zero for the verdict rule).
	Figure Figure
	// New is the new run's value, Base the baseline's (NaN without a baseline), Limit what
	// New was held to (NaN for the verdict rule), all in the figure's Unit. NewVerdict and
	// BaseVerdict are the verdict kinds, for the verdict rule.
	New, Base, Limit        float64
	NewVerdict, BaseVerdict string
	// Change is the figure's change from the baseline, when there is one.
	Change *Change
	// Why says in one line what was compared and how it came out.
	Why string
}

// Report is every rule of a Thresholds evaluated, in rule order.
type Report struct {
	// Results has one element per rule.
	Results []Result
}

// Failed returns the results that failed.
func (r Report) Failed() []Result {
	var out []Result
	for _, x := range r.Results {
		if x.Status == Fail {
			out = append(out, x)
		}
	}
	return out
}

// Evaluate holds new (and, for relative rules, base; nil when there is no baseline run) to
// every rule of t. A relative rule on a resampled figure (a latency quantile or mean) fails
// only when its bootstrap confidence interval lies wholly beyond the limit, so that noise
// between two runs of one configuration does not fail it; every other rule compares the
// measured value with the limit (docs/gate.md).
func Evaluate(t Thresholds, base, new *Measurement) Report {
	var cmp *Comparison
	if base != nil {
		cmp = NewComparison(base, new)
	}
	return EvaluateWith(t, cmp, new)
}

// EvaluateWith is Evaluate sharing the resamples of cmp (nil: no baseline run) with its other
// users, such as diff's table.
func EvaluateWith(t Thresholds, cmp *Comparison, new *Measurement) Report {
	var rep Report
	for _, r := range t.rules {
		rep.Results = append(rep.Results, evaluate(r, cmp, new))
	}
	return rep
}

func evaluate(r Rule, cmp *Comparison, new *Measurement) Result {
	var base *Measurement
	if cmp != nil {
		base, new = cmp.Base, cmp.New
	}
	if r.Figure == VerdictFigure {
		return evaluateVerdict(r, base, new)
	}
	f, _ := Lookup(r.Figure)
	res := Result{Rule: r, Figure: f, New: f.Value(new.Results), Base: math.NaN(), Limit: r.Value}
	if cmp != nil {
		c := cmp.Change(f)
		res.Change, res.Base = &c, c.Base
	}
	if r.Relative() {
		if base == nil {
			res.Status = Skip
			res.Limit = math.NaN()
			res.Why = fmt.Sprintf("%s = %s; no baseline run to hold it to (give one with --baseline DIR or agentsim diff)", r.Figure, f.Unit.Format(res.New))
			return res
		}
		res.Limit = r.Factor * res.Base
	}
	res.Status, res.Why = judge(r, f, res)
	return res
}

// judge decides a numeric rule and says why.
func judge(r Rule, f Figure, res Result) (Status, string) {
	u := f.Unit
	values := fmt.Sprintf("%s = %s", r.Figure, u.Format(res.New))
	if !math.IsNaN(res.Base) {
		values += fmt.Sprintf(", baseline %s", u.Format(res.Base))
	}
	limit := ""
	if r.Relative() {
		limit = fmt.Sprintf(" (limit %s)", u.Format(res.Limit))
	}
	change := ""
	if res.Change != nil {
		change = "; change " + res.Change.String()
		if !res.Change.Significant() {
			change = "; " + res.Change.String() // "no change", "no significant change (…)"
		}
	}
	if r.Op.holds(res.New, res.Limit) {
		return Pass, fmt.Sprintf("%s: within %q%s%s", values, r.Text, limit, change)
	}
	if r.Relative() && res.Change != nil && res.Change.HasCI && !beyond(r, res.Change) {
		return Pass, fmt.Sprintf("%s: beyond %q%s, but within noise: the %g %% confidence interval of the change reaches the limit%s",
			values, r.Text, limit, Confidence*100, change)
	}
	return Fail, fmt.Sprintf("%s: breaks %q%s%s", values, r.Text, limit, change)
}

// beyond reports whether the whole confidence interval of c breaks the relative rule r: the
// rule holds for no value of New ÷ Base inside it.
func beyond(r Rule, c *Change) bool {
	lo, hi := 1+c.Low, 1+c.High // ratios New ÷ Base
	return !r.Op.holds(lo, r.Factor) && !r.Op.holds(hi, r.Factor)
}

func evaluateVerdict(r Rule, base, new *Measurement) Result {
	res := Result{Rule: r, New: math.NaN(), Base: math.NaN(), Limit: math.NaN(), NewVerdict: string(new.Results.Verdict.Kind)}
	values := "verdict = " + res.NewVerdict
	if base != nil {
		res.BaseVerdict = string(base.Results.Verdict.Kind)
		values += ", baseline " + res.BaseVerdict
	}
	if slices.Contains(r.Allowed, new.Results.Verdict.Kind) {
		res.Status, res.Why = Pass, fmt.Sprintf("%s: one of %s", values, r.Text)
	} else {
		res.Status, res.Why = Fail, fmt.Sprintf("%s: not one of %s", values, r.Text)
	}
	return res
}

// Summary is one line for the end of a run or a diff: "thresholds: 5 passed, 1 failed, 1
// skipped".
func (r Report) Summary() string {
	n := map[Status]int{}
	for _, x := range r.Results {
		n[x.Status]++
	}
	parts := []string{fmt.Sprintf("%d passed", n[Pass]), fmt.Sprintf("%d failed", n[Fail])}
	if n[Skip] > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped", n[Skip]))
	}
	return "thresholds: " + strings.Join(parts, ", ")
}
