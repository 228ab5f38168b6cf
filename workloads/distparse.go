package workloads

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"go.yaml.in/yaml/v3"

	"github.com/agentsim/agentsim/internal/gate"
	"github.com/agentsim/agentsim/internal/shown"
)

// What each scalar kind allows, as the "want …" part of a message.
const (
	wantInteger  = "an integer"
	wantNumber   = "a number"
	wantBool     = "true or false"
	wantString   = "a string"
	wantDuration = "a duration such as 200ms, 90s or 5m"
)

var (
	distType         = reflect.TypeFor[Dist]()
	durationDistType = reflect.TypeFor[DurationDist]()
	thresholdsType   = reflect.TypeFor[gate.Thresholds]()
)

// DecodeHook returns the mapstructure decode hook Load gives viper's UnmarshalExact: durations
// in Go syntax, and Dist and DurationDist from a bare value, a map, or a string holding either.
func DecodeHook() mapstructure.DecodeHookFunc {
	return mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(),
		func(_ reflect.Type, to reflect.Type, data any) (any, error) {
			switch to {
			case distType:
				return parseDist("value", data)
			case durationDistType:
				return parseDurationDist("value", data)
			case thresholdsType:
				return gate.Parse(data)
			}
			return data, nil
		},
	)
}

// parseDist converts the YAML form of a token distribution (or a Dist) found at key.
func parseDist(key string, raw any) (Dist, error) {
	if d, ok := raw.(Dist); ok {
		return d, nil
	}
	p, err := parseParams(key, raw, tokenNumber, wantInteger)
	if err != nil {
		return Dist{}, err
	}
	return p.dist(), nil
}

// dist is p as a token distribution.
func (p params) dist() Dist {
	i := func(x float64) int { return int(x) }
	d := Dist{Kind: p.kind, Value: i(p.value), Min: i(p.min), Max: i(p.max), Avg: i(p.mean), StdDev: i(p.sd)}
	for j, part := range p.parts {
		d.Parts = append(d.Parts, Part{Weight: p.weights[j], Dist: part.dist()})
	}
	return d
}

// parseDurationDist converts the YAML form of a duration distribution (or a DurationDist)
// found at key.
func parseDurationDist(key string, raw any) (DurationDist, error) {
	if d, ok := raw.(DurationDist); ok {
		return d, nil
	}
	p, err := parseParams(key, raw, durationNumber, wantDuration)
	if err != nil {
		return DurationDist{}, err
	}
	return p.durationDist(), nil
}

// durationDist is p as a duration distribution.
func (p params) durationDist() DurationDist {
	t := func(x float64) time.Duration { return time.Duration(x) }
	d := DurationDist{Kind: p.kind, Value: t(p.value), Min: t(p.min), Max: t(p.max), Avg: t(p.mean), StdDev: t(p.sd)}
	for j, part := range p.parts {
		d.Parts = append(d.Parts, DurationPart{Weight: p.weights[j], DurationDist: part.durationDist()})
	}
	return d
}

// parseParams reads a bare value (const), a map, or a string holding a YAML flow map, as
// --set and the environment give it. num converts one parameter; want says what it allows.
func parseParams(key string, raw any, num func(any) (float64, bool), want string) (params, error) {
	if s, ok := raw.(string); ok && strings.HasPrefix(strings.TrimSpace(s), "{") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			return params{}, notAllowed(key, raw, "a map such as {dist: uniform, min: 1, max: 2}")
		}
		raw = m
	}
	m, ok := asMap(raw)
	if !ok {
		x, ok := num(raw)
		if !ok {
			return params{}, notAllowed(key, raw, want+", or a map such as {dist: exp, mean: …}")
		}
		return params{kind: DistConst, value: x}, nil
	}
	kindRaw, ok := m["dist"]
	if !ok {
		return params{}, fmt.Errorf("%s.dist: missing: want one of %s", key, strings.Join(DistKinds, ", "))
	}
	kind, _ := kindRaw.(string)
	fields, ok := kindFields[kind]
	if !ok {
		return params{}, notAllowed(key+".dist", kindRaw, "one of "+strings.Join(DistKinds, ", "))
	}
	takes := fmt.Sprintf("a %s dist takes %s", kind, strings.Join(fields, " and "))
	for _, f := range sortedKeys(m) {
		if f != "dist" && !slices.Contains(fields, f) {
			return params{}, fmt.Errorf("unknown key %q: %s", key+"."+f, takes)
		}
	}
	for _, f := range fields {
		if _, present := m[f]; !present {
			return params{}, fmt.Errorf("%s.%s: missing: %s", key, f, takes)
		}
	}
	if kind == DistMixture {
		return parseMixture(key, m["parts"], num, want)
	}
	p := params{kind: kind}
	dst := map[string]*float64{"value": &p.value, "min": &p.min, "max": &p.max, "mean": &p.mean, "stddev": &p.sd}
	for _, f := range fields {
		v := m[f]
		x, ok := num(v)
		if !ok {
			return params{}, notAllowed(key+"."+f, v, want)
		}
		*dst[f] = x
	}
	return p, nil
}

// parseMixture reads a mixture's parts: a list of maps, each a weight beside the keys of a
// distribution of another kind.
func parseMixture(key string, raw any, num func(any) (float64, bool), want string) (params, error) {
	list, ok := raw.([]any)
	if !ok {
		return params{}, notAllowed(key+".parts", raw, "a list of parts such as [{weight: 0.9, dist: const, value: 1}, …]")
	}
	p := params{kind: DistMixture}
	for i, item := range list {
		at := fmt.Sprintf("%s.parts[%d]", key, i)
		m, ok := asMap(item)
		if !ok {
			return params{}, notAllowed(at, item, "a map of a weight and a distribution, such as {weight: 0.9, dist: const, value: 1}")
		}
		w, present := m["weight"]
		if !present {
			return params{}, fmt.Errorf("%s.weight: missing: each part of a mixture takes a weight beside its dist", at)
		}
		weight, ok := toFloat(w)
		if !ok {
			return params{}, notAllowed(at+".weight", w, wantNumber)
		}
		delete(m, "weight")
		part, err := parseParams(at, m, num, want)
		if err != nil {
			return params{}, err
		}
		p.weights = append(p.weights, weight)
		p.parts = append(p.parts, part)
	}
	return p, nil
}

// tokenNumber reads an integer: a YAML integer, an integral float, or a decimal string.
func tokenNumber(raw any) (float64, bool) {
	n, ok := toInt(raw)
	return float64(n), ok
}

// durationNumber reads a duration in Go syntax; the only bare number allowed is 0, so that
// "30" is never taken for 30 ns.
func durationNumber(raw any) (float64, bool) {
	d, ok := toDuration(raw)
	return float64(d), ok
}

// wantInt64 is what a whole number too large for any key is told: it is a number, out of
// range, not a malformed one.
var wantInt64 = fmt.Sprintf("an integer from %d to %d", math.MinInt64, math.MaxInt64)

// beyondInt64 reports whether raw is a whole number, as toInt reads one, too large for an
// int64: 99999999999999999999.
func beyondInt64(raw any) bool {
	switch v := raw.(type) {
	case uint64:
		return v > math.MaxInt64
	case float64:
		return v == math.Trunc(v) && math.Abs(v) >= 1<<63
	case string:
		_, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return errors.Is(err, strconv.ErrRange)
	}
	return false
}

func toInt(raw any) (int64, bool) {
	switch v := raw.(type) {
	case int:
		return int64(v), true
	case int64:
		return v, true
	case uint64:
		return int64(v), v <= math.MaxInt64
	case float64:
		return int64(v), v == math.Trunc(v) && math.Abs(v) < 1<<53
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return n, err == nil
	}
	return 0, false
}

func toFloat(raw any) (float64, bool) {
	switch v := raw.(type) {
	case float64:
		return v, !math.IsNaN(v) && !math.IsInf(v, 0)
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	n, ok := toInt(raw)
	return float64(n), ok
}

func toBool(raw any) (bool, bool) {
	switch v := raw.(type) {
	case bool:
		return v, true
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		return b, err == nil
	}
	return false, false
}

func toDuration(raw any) (time.Duration, bool) {
	switch v := raw.(type) {
	case time.Duration:
		return v, true
	case string:
		d, err := time.ParseDuration(strings.TrimSpace(v))
		return d, err == nil
	}
	n, ok := toInt(raw)
	return 0, ok && n == 0
}

// asMap returns raw as a map with lower-case string keys, if it is a YAML mapping.
func asMap(raw any) (map[string]any, bool) {
	switch v := raw.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[strings.ToLower(k)] = x
		}
		return m, true
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[strings.ToLower(fmt.Sprint(k))] = x
		}
		return m, true
	}
	return nil, false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// notAllowed builds the message every bad value gets: "<key>: <value> is not allowed: want
// <allowed>".
func notAllowed(key string, value any, want string) error {
	return fmt.Errorf("%s: %s is not allowed: want %s", key, show(value), want)
}

// show renders a value as the user wrote it, cut to its first characters when it is long
// (shown.Elide).
func show(v any) string { return shown.Elide(render(v)) }

// render renders a value as the user wrote it.
func render(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	case time.Duration:
		return formatDuration(x)
	case map[string]any, map[any]any, []any:
		var n yaml.Node
		if err := n.Encode(x); err != nil {
			return fmt.Sprint(x)
		}
		n.Style = yaml.FlowStyle
		b, err := yaml.Marshal(&n)
		if err != nil {
			return fmt.Sprint(x)
		}
		return strings.TrimSpace(string(b))
	}
	return fmt.Sprint(v)
}

// MarshalYAML writes a const as a bare integer and any other kind as a flow map.
func (d Dist) MarshalYAML() (any, error) {
	return d.params().yamlNode(func(x float64) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(int64(x), 10)}
	}), nil
}

// MarshalYAML writes a const as a bare duration and any other kind as a flow map.
func (d DurationDist) MarshalYAML() (any, error) {
	return d.params().yamlNode(func(x float64) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: formatDuration(time.Duration(x))}
	}), nil
}

// UnmarshalYAML reads any YAML form Load accepts.
func (d *Dist) UnmarshalYAML(n *yaml.Node) error {
	var raw any
	if err := n.Decode(&raw); err != nil {
		return err
	}
	v, err := parseDist("value", raw)
	*d = v
	return err
}

// UnmarshalYAML reads any YAML form Load accepts.
func (d *DurationDist) UnmarshalYAML(n *yaml.Node) error {
	var raw any
	if err := n.Decode(&raw); err != nil {
		return err
	}
	v, err := parseDurationDist("value", raw)
	*d = v
	return err
}

func (p params) yamlNode(num func(float64) *yaml.Node) *yaml.Node {
	fields, ok := kindFields[p.kind]
	if !ok || p.kind == DistConst {
		return num(p.value)
	}
	n := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	n.Content = append(n.Content, scalar("dist"), scalar(p.kind))
	if p.kind == DistMixture {
		parts := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for i, part := range p.parts {
			parts.Content = append(parts.Content, part.partNode(p.weights[i], num))
		}
		n.Content = append(n.Content, scalar("parts"), parts)
		return n
	}
	p.appendFields(n, fields, num)
	return n
}

// partNode is p as one part of a mixture: its weight, then its dist and parameters.
func (p params) partNode(weight float64, num func(float64) *yaml.Node) *yaml.Node {
	kind := p.kind
	if kind == "" {
		kind = DistConst
	}
	n := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	n.Content = append(n.Content, scalar("weight"),
		&yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatFloat(weight, 'g', -1, 64)},
		scalar("dist"), scalar(kind))
	p.appendFields(n, kindFields[kind], num)
	return n
}

// appendFields appends the given parameters of p to the mapping n.
func (p params) appendFields(n *yaml.Node, fields []string, num func(float64) *yaml.Node) {
	src := map[string]float64{"value": p.value, "min": p.min, "max": p.max, "mean": p.mean, "stddev": p.sd}
	for _, f := range fields {
		n.Content = append(n.Content, scalar(f), num(src[f]))
	}
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
