package simserver

import (
	"encoding/json"
	"fmt"
	"math/big"
)

// Bounds of one check: how deep the schemas it follows nest, against a $ref that loops without
// reading any of the value ({"$ref": "#"}), and how many it visits, against nested oneOf whose
// branches multiply.
const (
	maxCheckDepth  = 256
	maxCheckVisits = 100_000
)

// checkRun counts the schemas one check has visited.
type checkRun struct{ visits int }

// check reports why v does not satisfy the schema: the path of the failing schema and its
// keyword, or "" when it does. It is the simulator's own judge of the values it writes, so
// every argument it sends satisfies its tool's schema.
func (n *schemaNode) check(v any) string { return n.checkAt(v, 0, &checkRun{}) }

func (n *schemaNode) checkAt(v any, depth int, run *checkRun) string {
	run.visits++
	switch {
	case depth > maxCheckDepth:
		return n.path + ": $ref (the schema refers to itself without end)"
	case run.visits > maxCheckVisits:
		return n.path + ": the schema takes too long to check"
	}
	depth++
	switch {
	case n.never:
		return n.path + ": false"
	case n.types != 0 && !n.types.holds(v):
		return n.path + ": type"
	case n.hasEnum && !anyEqual(n.enum, v):
		return n.path + ": enum"
	case n.hasConst && !equalJSON(n.konst, v):
		return n.path + ": const"
	}
	var why string
	switch x := v.(type) {
	case json.Number:
		why = n.checkNumber(x)
	case string:
		why = n.checkString(x)
	case []any:
		why = n.checkArray(x, depth, run)
	case jsonObject:
		why = n.checkObject(x, depth, run)
	}
	if why != "" {
		return why
	}
	return n.checkLogic(v, depth, run)
}

// holds reports whether v is of one of the types.
func (t jsonTypes) holds(v any) bool {
	switch x := v.(type) {
	case nil:
		return t&typeNull != 0
	case bool:
		return t&typeBoolean != 0
	case string:
		return t&typeString != 0
	case []any:
		return t&typeArray != 0
	case jsonObject:
		return t&typeObject != 0
	case json.Number:
		if t&typeNumber != 0 {
			return true
		}
		r, ok := rat(x)
		return t&typeInteger != 0 && ok && r.IsInt()
	}
	return false
}

func anyEqual(vals []any, v any) bool {
	for _, w := range vals {
		if equalJSON(w, v) {
			return true
		}
	}
	return false
}

func (n *schemaNode) checkNumber(x json.Number) string {
	r, ok := rat(x)
	if !ok {
		return n.path + ": type"
	}
	if n.min != nil {
		if c := r.Cmp(n.min); c < 0 || (c == 0 && n.exclMin) {
			return n.path + ": minimum"
		}
	}
	if n.max != nil {
		if c := r.Cmp(n.max); c > 0 || (c == 0 && n.exclMax) {
			return n.path + ": maximum"
		}
	}
	if n.multipleOf != nil && !new(big.Rat).Quo(r, n.multipleOf).IsInt() {
		return n.path + ": multipleOf"
	}
	return ""
}

func (n *schemaNode) checkString(s string) string {
	l := runeCount(s)
	switch {
	case l < n.minLength:
		return n.path + ": minLength"
	case n.maxLength >= 0 && l > n.maxLength:
		return n.path + ": maxLength"
	case n.pattern != nil && !n.pattern.MatchString(s):
		return n.path + ": pattern"
	}
	return ""
}

func (n *schemaNode) checkArray(a []any, depth int, run *checkRun) string {
	switch {
	case len(a) < n.minItems:
		return n.path + ": minItems"
	case n.maxItems >= 0 && len(a) > n.maxItems:
		return n.path + ": maxItems"
	}
	for i, e := range a {
		s := n.items
		if i < len(n.prefix) {
			s = n.prefix[i]
		}
		if s != nil {
			if why := s.checkAt(e, depth, run); why != "" {
				return why
			}
		}
		if n.unique {
			for _, f := range a[:i] {
				if equalJSON(e, f) {
					return n.path + ": uniqueItems"
				}
			}
		}
	}
	if n.contains != nil {
		matched := 0
		for _, e := range a {
			if n.contains.checkAt(e, depth, run) == "" {
				matched++
			}
		}
		if matched < n.minContains || (n.maxContains >= 0 && matched > n.maxContains) {
			return n.path + ": contains"
		}
	}
	return ""
}

func (n *schemaNode) checkObject(o jsonObject, depth int, run *checkRun) string {
	switch {
	case len(o) < n.minProps:
		return n.path + ": minProperties"
	case n.maxProps >= 0 && len(o) > n.maxProps:
		return n.path + ": maxProperties"
	}
	for _, name := range n.required {
		if _, ok := o.get(name); !ok {
			return fmt.Sprintf("%s: required (%q)", n.path, name)
		}
	}
	for _, m := range o {
		if why := n.checkMember(m, depth, run); why != "" {
			return why
		}
	}
	for _, d := range n.dependentRequired {
		if _, ok := o.get(d.prop); !ok {
			continue
		}
		for _, name := range d.names {
			if _, ok := o.get(name); !ok {
				return n.path + ": dependentRequired"
			}
		}
	}
	for _, d := range n.dependentSchemas {
		if _, ok := o.get(d.prop); ok {
			if why := d.node.checkAt(o, depth, run); why != "" {
				return why
			}
		}
	}
	return ""
}

// checkMember checks one member against properties, patternProperties,
// additionalProperties and propertyNames.
func (n *schemaNode) checkMember(m jsonMember, depth int, run *checkRun) string {
	if n.propertyNames != nil {
		if why := n.propertyNames.checkAt(m.key, depth, run); why != "" {
			return why
		}
	}
	matched := false
	for _, pp := range n.patternProps {
		if pp.re.MatchString(m.key) {
			matched = true
			if why := pp.node.checkAt(m.val, depth, run); why != "" {
				return why
			}
		}
	}
	s := n.prop(m.key)
	if s == nil && !matched {
		s = n.additional
	}
	if s != nil {
		return s.checkAt(m.val, depth, run)
	}
	return ""
}

// checkLogic checks $ref, allOf, anyOf, oneOf, not and if/then/else.
func (n *schemaNode) checkLogic(v any, depth int, run *checkRun) string {
	if n.ref != nil {
		if why := n.ref.checkAt(v, depth, run); why != "" {
			return why
		}
	}
	for _, s := range n.allOf {
		if why := s.checkAt(v, depth, run); why != "" {
			return why
		}
	}
	if len(n.anyOf) > 0 && matching(n.anyOf, v, depth, run) == 0 {
		return n.path + ": anyOf"
	}
	if len(n.oneOf) > 0 && matching(n.oneOf, v, depth, run) != 1 {
		return n.path + ": oneOf"
	}
	if n.not != nil && n.not.checkAt(v, depth, run) == "" {
		return n.path + ": not"
	}
	if n.ifS != nil {
		branch := n.elseS
		if n.ifS.checkAt(v, depth, run) == "" {
			branch = n.thenS
		}
		if branch != nil {
			return branch.checkAt(v, depth, run)
		}
	}
	return ""
}

// matching counts the schemas v satisfies.
func matching(list []*schemaNode, v any, depth int, run *checkRun) int {
	c := 0
	for _, s := range list {
		if s.checkAt(v, depth, run) == "" {
			c++
		}
	}
	return c
}
