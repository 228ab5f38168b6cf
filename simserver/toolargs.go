package simserver

import (
	"encoding/json"
	"math/big"
	"math/rand/v2"
)

// argGen writes JSON values for schemas from a seeded source: the simulated model's tool-call
// arguments. It reads the keywords that say what a value is (type, enum, const, bounds,
// lengths, pattern, format, items, properties, required) and takes one branch of anyOf and
// oneOf; what it writes is then judged by check, so a keyword it does not heed (not, if,
// dependentSchemas, …) costs a retry, never an invalid argument.
type argGen struct {
	r *rand.Rand
	// minimal writes only what the schema requires: no optional property, the fewest items.
	minimal bool
	// budget is how many more values it may write, against schemas that ask for endless ones.
	budget int
}

// Bounds of one value's writing.
const (
	maxGenValues = 2000     // values in one argument object
	maxGenDepth  = 32       // objects and arrays nested, and $ref followed
	maxGenString = 64 << 10 // bytes of one string
)

// newNode returns an empty schema (any value) at path.
func newNode(path string) *schemaNode {
	return &schemaNode{path: path, maxLength: -1, maxItems: -1, maxProps: -1, maxContains: -1, minContains: 1}
}

// value writes a value for n; key is the property the value belongs to ("" for none), which
// shapes strings (a path for "file_path"). false means it found none this time.
func (g *argGen) value(n *schemaNode, key string, depth int) (any, bool) {
	if g.budget--; g.budget < 0 || depth > maxGenDepth {
		return nil, false
	}
	f, ok := g.flat(n, depth)
	if !ok || f.never {
		return nil, false
	}
	if f.hasConst {
		return f.konst, true
	}
	if f.hasEnum {
		return g.pickEnum(f)
	}
	switch g.pickType(f) {
	case typeNull:
		return nil, true
	case typeBoolean:
		return g.r.IntN(2) == 0, true
	case typeInteger:
		return g.integer(f)
	case typeNumber:
		return g.number(f)
	case typeArray:
		return g.array(f, key, depth)
	case typeObject:
		return g.object(f, depth)
	}
	return g.str(f, key), true
}

// flat resolves n's $ref, allOf and one branch of each anyOf and oneOf into one schema with
// none of them, their constraints merged.
func (g *argGen) flat(n *schemaNode, depth int) (*schemaNode, bool) {
	if g.budget--; g.budget < 0 || depth > maxGenDepth {
		return nil, false
	}
	out := *n
	out.ref, out.allOf, out.anyOf, out.oneOf = nil, nil, nil, nil
	parts := n.allOf
	if n.ref != nil {
		parts = append([]*schemaNode{n.ref}, parts...)
	}
	for _, group := range [][]*schemaNode{n.anyOf, n.oneOf} {
		if len(group) > 0 {
			parts = append(parts, g.branch(group))
		}
	}
	res := &out
	for _, p := range parts {
		f, ok := g.flat(p, depth+1)
		if !ok {
			return nil, false
		}
		res = merge(res, f)
	}
	return res, true
}

// branch picks one schema of anyOf or oneOf, a null-only one only when all are.
func (g *argGen) branch(group []*schemaNode) *schemaNode {
	var some []*schemaNode
	for _, s := range group {
		if s.types != typeNull && !s.never {
			some = append(some, s)
		}
	}
	if len(some) == 0 {
		some = group
	}
	return some[g.r.IntN(len(some))]
}

// pickEnum picks one of the enum's values of an allowed type.
func (g *argGen) pickEnum(f *schemaNode) (any, bool) {
	var fit []any
	for _, v := range f.enum {
		if f.types == 0 || f.types.holds(v) {
			fit = append(fit, v)
		}
	}
	if len(fit) == 0 {
		return nil, false
	}
	return fit[g.r.IntN(len(fit))], true
}

// pickType picks the type of the value: one the schema allows (null only when it allows no
// other), or the one its keywords imply when it names none.
func (g *argGen) pickType(f *schemaNode) jsonTypes {
	t := f.types
	if t == 0 {
		t = impliedType(f)
	}
	if t&typeNumber != 0 && t&typeInteger != 0 {
		t &^= typeNumber
	}
	var choices []jsonTypes
	for b := typeBoolean; b <= typeInteger; b <<= 1 {
		if t&b != 0 {
			choices = append(choices, b)
		}
	}
	if len(choices) == 0 {
		return typeNull
	}
	return choices[g.r.IntN(len(choices))]
}

// impliedType is the type a schema without type describes by its keywords; string when they
// say nothing.
func impliedType(f *schemaNode) jsonTypes {
	switch {
	case len(f.props) > 0 || len(f.required) > 0 || f.minProps > 0 || f.additional != nil:
		return typeObject
	case f.items != nil || len(f.prefix) > 0 || f.minItems > 0 || f.contains != nil:
		return typeArray
	case f.min != nil || f.max != nil || f.multipleOf != nil:
		return typeNumber
	}
	return typeString
}

// integer writes an integer within the bounds (1 to 100 when there are none), a multiple of
// multipleOf when it is set. When no integer lies within them it writes the lower one, which
// check then names.
func (g *argGen) integer(f *schemaNode) (any, bool) {
	lo, hi, ok := intRange(f)
	if !ok {
		return json.Number(lo.String()), true
	}
	if f.multipleOf != nil {
		return g.multiple(f, lo, hi, true)
	}
	span := new(big.Int).Sub(hi, lo)
	if span.Cmp(big.NewInt(99)) > 0 {
		span.SetInt64(99)
	}
	v := new(big.Int).Add(lo, big.NewInt(g.r.Int64N(span.Int64()+1)))
	return json.Number(v.String()), true
}

// intRange is the integers the bounds allow, within a span of 100 when one side is open.
func intRange(f *schemaNode) (lo, hi *big.Int, ok bool) {
	if f.min != nil {
		lo = ceil(f.min)
		if f.exclMin && f.min.IsInt() {
			lo.Add(lo, big.NewInt(1))
		}
	}
	if f.max != nil {
		hi = floor(f.max)
		if f.exclMax && f.max.IsInt() {
			hi.Sub(hi, big.NewInt(1))
		}
	}
	switch {
	case lo == nil && hi == nil:
		lo, hi = big.NewInt(1), big.NewInt(100)
	case hi == nil:
		hi = new(big.Int).Add(lo, big.NewInt(99))
	case lo == nil && hi.Sign() >= 1:
		lo = big.NewInt(1)
	case lo == nil:
		lo = new(big.Int).Sub(hi, big.NewInt(99))
	}
	return lo, hi, lo.Cmp(hi) <= 0
}

// floor and ceil round a rational to an integer.
func floor(r *big.Rat) *big.Int {
	q, _ := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	return q // Euclidean division by a positive denominator is the floor
}

func ceil(r *big.Rat) *big.Int {
	q := floor(r)
	if !r.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// multiple writes k·multipleOf for an integer k within [lo, hi] (as rationals), an integer
// one when integer says so.
func (g *argGen) multiple(f *schemaNode, lo, hi *big.Int, integer bool) (any, bool) {
	m := f.multipleOf
	kLo := ceil(new(big.Rat).Quo(new(big.Rat).SetInt(lo), m))
	kHi := floor(new(big.Rat).Quo(new(big.Rat).SetInt(hi), m))
	if kLo.Cmp(kHi) > 0 {
		return nil, false
	}
	span := new(big.Int).Sub(kHi, kLo)
	if span.Cmp(big.NewInt(20)) > 0 {
		span.SetInt64(20)
	}
	start := g.r.Int64N(span.Int64() + 1)
	for i := range span.Int64() + 1 {
		k := new(big.Int).Add(kLo, big.NewInt((start+i)%(span.Int64()+1)))
		v := new(big.Rat).Mul(new(big.Rat).SetInt(k), m)
		if !integer || v.IsInt() {
			return json.Number(ratDecimal(v)), true
		}
	}
	return nil, false
}

// number writes a number within the bounds: mostly an integer when one fits, else a
// decimal some eighths of the way between them.
func (g *argGen) number(f *schemaNode) (any, bool) {
	lo, hi, intsFit := intRange(f)
	if f.multipleOf != nil {
		if !intsFit {
			return nil, false
		}
		return g.multiple(f, lo, hi, false)
	}
	if intsFit && g.r.IntN(10) < 8 {
		return g.integer(f)
	}
	a, b := new(big.Rat).SetInt(lo), new(big.Rat).SetInt(hi)
	if f.min != nil {
		a = f.min
	}
	if f.max != nil {
		b = f.max
	}
	if f.max == nil && f.min != nil {
		b = new(big.Rat).Add(a, big.NewRat(100, 1))
	}
	t := big.NewRat(int64(1+g.r.IntN(7)), 8)
	v := new(big.Rat).Add(a, new(big.Rat).Mul(t, new(big.Rat).Sub(b, a)))
	return json.Number(ratDecimal(v)), true
}

// ratDecimal writes a rational as a JSON number: exact when its decimal expansion ends within
// 20 digits, else rounded to 12.
func ratDecimal(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	for d := 1; d <= 20; d++ {
		s := r.FloatString(d)
		if back, ok := new(big.Rat).SetString(s); ok && back.Cmp(r) == 0 {
			return s
		}
	}
	return r.FloatString(12)
}
