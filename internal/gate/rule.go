package gate

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentsim/agentsim/internal/suggest"
	"github.com/agentsim/agentsim/results"
)

// Key is the workload key (and the top-level key of a --thresholds file) holding thresholds.
const Key = "thresholds"

// Op compares a figure with its limit.
type Op string

// The comparison operators.
const (
	Less         Op = "<"
	LessEqual    Op = "<="
	Greater      Op = ">"
	GreaterEqual Op = ">="
)

// holds reports whether v op limit.
func (o Op) holds(v, limit float64) bool {
	switch o {
	case Less:
		return v < limit
	case LessEqual:
		return v <= limit
	case Greater:
		return v > limit
	}
	return v >= limit
}

// Rule is one threshold: a figure, an operator and a limit — absolute (Value, in the figure's
// unit: seconds for latencies) or relative to the baseline run (Factor × the baseline's
// value) — or, for the verdict, the kinds allowed.
type Rule struct {
	// Figure names the figure (see Figures, or VerdictFigure).
	Figure string
	// Text is the rule as written: "<= 1.10 * baseline", "< 30s".
	Text string
	// Op compares the figure with the limit: the figure Op the limit must hold.
	Op Op
	// Value is an absolute limit, in the figure's unit; used when Factor is 0.
	Value float64
	// Factor, when > 0, makes the limit Factor × the baseline run's value of the figure.
	Factor float64
	// Allowed lists the verdict kinds a verdict rule lets pass.
	Allowed []results.VerdictKind
}

// Relative reports whether the rule's limit comes from a baseline run.
func (r Rule) Relative() bool { return r.Factor > 0 }

// String is the rule as a person reads it: "e2e.p90 <= 1.10 * baseline", "verdict in
// [healthy, slow]".
func (r Rule) String() string {
	if r.Figure == VerdictFigure {
		return r.Figure + " in " + r.Text
	}
	return r.Figure + " " + r.Text
}

// Thresholds is a set of rules, in figure-table order (verdict last), as a workload's
// thresholds: section or a --thresholds file gives them. The zero value has no rules.
type Thresholds struct {
	rules []Rule
}

// Rules returns the rules.
func (t Thresholds) Rules() []Rule { return slices.Clone(t.rules) }

// Empty reports whether t has no rule.
func (t Thresholds) Empty() bool { return len(t.rules) == 0 }

// With returns t with the rules of over added; a figure over constrains keeps only over's
// rules.
func (t Thresholds) With(over Thresholds) Thresholds {
	var rules []Rule
	for _, r := range t.rules {
		if !slices.ContainsFunc(over.rules, func(o Rule) bool { return o.Figure == r.Figure }) {
			rules = append(rules, r)
		}
	}
	return Thresholds{rules: sortRules(append(rules, over.rules...))}
}

func sortRules(rules []Rule) []Rule {
	names := Names()
	slices.SortStableFunc(rules, func(a, b Rule) int {
		return slices.Index(names, a.Figure) - slices.Index(names, b.Figure)
	})
	return rules
}

// Parse converts the thresholds: section of a YAML file — a mapping of figure names to a rule,
// a list of rules, or for the verdict a list of kinds — or a string holding such a mapping in
// YAML flow form, as --set and the environment give it. Nil is no thresholds. It returns every
// problem, joined, each naming its key (thresholds.e2e.p90), the value and what is allowed.
func Parse(raw any) (Thresholds, error) {
	switch v := raw.(type) {
	case nil:
		return Thresholds{}, nil
	case Thresholds:
		return v, nil
	case string:
		if strings.TrimSpace(v) == "" {
			return Thresholds{}, nil
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(v), &m); err != nil || m == nil {
			return Thresholds{}, fmt.Errorf("%s: %q is not allowed: want a mapping of figures to rules, such as {e2e.p90: \"<= 1.10 * baseline\"}", Key, v)
		}
		raw = m
	}
	m, ok := mapping(raw)
	if !ok {
		return Thresholds{}, fmt.Errorf("%s: %s is not allowed: want a mapping of figures to rules, such as e2e.p90: \"<= 1.10 * baseline\"", Key, show(raw))
	}
	var t Thresholds
	var problems []error
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, figure := range keys {
		rules, err := parseFigure(figure, m[figure])
		if err != nil {
			problems = append(problems, err)
			continue
		}
		t.rules = append(t.rules, rules...)
	}
	if len(problems) > 0 {
		return Thresholds{}, errors.Join(problems...)
	}
	t.rules = sortRules(t.rules)
	return t, nil
}

// ParseYAML reads a --thresholds file: a YAML mapping whose one key is thresholds.
func ParseYAML(data []byte) (Thresholds, error) {
	var root map[string]any
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Thresholds{}, fmt.Errorf("not YAML: %w", err)
	}
	for k := range root {
		if k != Key {
			return Thresholds{}, fmt.Errorf("unknown key %q: want only %s: (a mapping of figures to rules, as in a workload)", k, Key)
		}
	}
	if root[Key] == nil {
		return Thresholds{}, fmt.Errorf("no %s: section: want %s: followed by rules such as e2e.p90: \"<= 1.10 * baseline\"", Key, Key)
	}
	return Parse(root[Key])
}

// mapping returns raw as a map with string keys, if it is a YAML mapping.
func mapping(raw any) (map[string]any, bool) {
	switch v := raw.(type) {
	case map[string]any:
		return v, true
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[fmt.Sprint(k)] = x
		}
		return m, true
	}
	return nil, false
}

// parseFigure converts the rules given for one figure.
func parseFigure(figure string, raw any) ([]Rule, error) {
	key := Key + "." + figure
	if figure == VerdictFigure {
		r, err := parseVerdict(key, raw)
		return []Rule{r}, err
	}
	f, ok := Lookup(figure)
	if !ok {
		return nil, fmt.Errorf("%s: unknown figure %q: %s", key, figure, wantFigure(figure))
	}
	var texts []any
	switch v := raw.(type) {
	case []any:
		texts = v
	default:
		texts = []any{v}
	}
	if len(texts) == 0 {
		return nil, fmt.Errorf("%s: [] is not allowed: want a rule such as %s, or a list of them", key, example(f.Unit))
	}
	rules := make([]Rule, 0, len(texts))
	for _, t := range texts {
		r, err := parseRule(key, f, t)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}

var ruleRE = regexp.MustCompile(`^\s*(<=|>=|<|>)\s*(.*?)\s*$`)
var factorRE = regexp.MustCompile(`^(?:([0-9.eE+-]+)\s*\*\s*baseline|baseline\s*\*\s*([0-9.eE+-]+)|(baseline))$`)

// parseRule converts one rule for figure f.
func parseRule(key string, f Figure, raw any) (Rule, error) {
	text, ok := raw.(string)
	m := ruleRE.FindStringSubmatch(text)
	if !ok || m == nil {
		return Rule{}, notAllowed(key, raw, f.Unit)
	}
	r := Rule{Figure: f.Name, Text: strings.TrimSpace(text), Op: Op(m[1])}
	if fm := factorRE.FindStringSubmatch(m[2]); fm != nil {
		r.Factor = 1
		if s := fm[1] + fm[2]; s != "" {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil || !(x > 0) || math.IsInf(x, 0) {
				return Rule{}, notAllowed(key, raw, f.Unit)
			}
			r.Factor = x
		}
		return r, nil
	}
	v, ok := parseValue(m[2], f.Unit)
	if !ok {
		return Rule{}, notAllowed(key, raw, f.Unit)
	}
	r.Value = v
	return r, nil
}

// parseValue reads an absolute limit in unit u.
func parseValue(s string, u Unit) (float64, bool) {
	s = strings.TrimSpace(s)
	if u == Seconds {
		d, err := time.ParseDuration(strings.ReplaceAll(s, " ", ""))
		return d.Seconds(), err == nil && d >= 0
	}
	scale := 1.0
	for _, suffix := range unitSuffixes[u] {
		if t, ok := strings.CutSuffix(s, suffix.text); ok {
			s, scale = strings.TrimSpace(t), suffix.scale
			break
		}
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return 0, false
	}
	return x * scale, true
}

// unitSuffixes are the unit words an absolute limit may carry, by unit.
var unitSuffixes = map[Unit][]struct {
	text  string
	scale float64
}{
	Ratio:           {{"%", 0.01}},
	TokensPerSecond: {{"tok/s", 1}},
	Tokens:          {{"tokens", 1}},
}

// notAllowed is the message of a rule that does not parse: key, value and what is allowed.
func notAllowed(key string, raw any, u Unit) error {
	return fmt.Errorf("%s: %s is not allowed: want <, <=, > or >= followed by %s, \"F * baseline\" (F > 0) or \"baseline\"; e.g. %s",
		key, show(raw), want[u], example(u))
}

// want says what absolute limit each unit allows.
var want = map[Unit]string{
	Seconds:         "a duration with its unit (30s, 250ms, 2m)",
	Ratio:           "a fraction (0.01) or a percentage (1%)",
	Count:           "a number",
	TokensPerSecond: "a rate in tokens per second (500 or 500 tok/s)",
	Tokens:          "a number of tokens",
}

func example(u Unit) string {
	switch u {
	case Seconds:
		return `"< 30s" or "<= 1.10 * baseline"`
	case Ratio:
		return `"< 0.01"`
	case TokensPerSecond:
		return `">= 0.95 * baseline"`
	}
	return `"<= baseline"`
}

// wantFigure says which figures exist, suggesting the nearest name.
func wantFigure(name string) string {
	var kinds, stats []string
	for _, k := range latencyKinds {
		kinds = append(kinds, k.name)
	}
	for _, s := range latencyStats {
		stats = append(stats, s.name)
	}
	var others []string
	for _, f := range counters {
		others = append(others, f.Name)
	}
	msg := fmt.Sprintf("want a latency figure KIND.STAT (KIND one of %s; STAT one of %s), one of %s, or %s (docs/gate.md)",
		strings.Join(kinds, ", "), strings.Join(stats, ", "), strings.Join(others, ", "), VerdictFigure)
	if near := suggest.Nearest(name, Names()); near != "" {
		msg = fmt.Sprintf("did you mean %q? %s", near, msg)
	}
	return msg
}

// parseVerdict converts the list of allowed verdict kinds.
func parseVerdict(key string, raw any) (Rule, error) {
	var items []any
	switch v := raw.(type) {
	case []any:
		items = v
	case string:
		for _, s := range strings.Split(strings.Trim(v, "[] "), ",") {
			items = append(items, strings.TrimSpace(s))
		}
	}
	kinds := make([]string, len(results.VerdictKinds))
	for i, k := range results.VerdictKinds {
		kinds[i] = string(k)
	}
	wantKinds := fmt.Sprintf("want a list of verdict kinds from %s, such as [healthy, slow]", strings.Join(kinds, ", "))
	if len(items) == 0 {
		return Rule{}, fmt.Errorf("%s: %s is not allowed: %s", key, show(raw), wantKinds)
	}
	r := Rule{Figure: VerdictFigure}
	var names []string
	for _, it := range items {
		s, ok := it.(string)
		if !ok || !slices.Contains(kinds, s) {
			return Rule{}, fmt.Errorf("%s: %s is not allowed: %s", key, show(it), wantKinds)
		}
		r.Allowed = append(r.Allowed, results.VerdictKind(s))
		names = append(names, s)
	}
	r.Text = "[" + strings.Join(names, ", ") + "]"
	return r, nil
}

// show renders a value as the user wrote it.
func show(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	if v == nil {
		return "null"
	}
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	n.Style = yaml.FlowStyle
	b, err := yaml.Marshal(&n)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(string(b))
}

// MarshalYAML writes the rules as a thresholds: section: each figure's rule as a string (a
// list when it has several), the verdict's kinds as a list.
func (t Thresholds) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i < len(t.rules); {
		r := t.rules[i]
		j := i
		for j < len(t.rules) && t.rules[j].Figure == r.Figure {
			j++
		}
		n.Content = append(n.Content, str(r.Figure))
		switch {
		case r.Figure == VerdictFigure:
			seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, k := range r.Allowed {
				seq.Content = append(seq.Content, str(string(k)))
			}
			n.Content = append(n.Content, seq)
		case j-i == 1:
			n.Content = append(n.Content, str(r.Text))
		default:
			seq := &yaml.Node{Kind: yaml.SequenceNode}
			for _, x := range t.rules[i:j] {
				seq.Content = append(seq.Content, str(x.Text))
			}
			n.Content = append(n.Content, seq)
		}
		i = j
	}
	if len(n.Content) == 0 {
		n.Style = yaml.FlowStyle
	}
	return n, nil
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
