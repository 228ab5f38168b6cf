package simserver

import (
	"fmt"
	"regexp/syntax"
	"strings"
	"unicode"
)

// merge combines two flattened schemas into one whose values should satisfy both: the
// tighter bound of each kind, the common types and enum values, the properties of both
// (a property in both must satisfy both). It guides writing; check has the last word.
func merge(a, b *schemaNode) *schemaNode {
	m := *a
	m.never = a.never || b.never
	m.types = commonTypes(a.types, b.types)
	if a.types != 0 && b.types != 0 && m.types == 0 {
		m.never = true
	}
	if b.hasEnum {
		m.enum, m.hasEnum = b.enum, true
		if a.hasEnum {
			m.enum = nil
			for _, v := range a.enum {
				if anyEqual(b.enum, v) {
					m.enum = append(m.enum, v)
				}
			}
			m.never = m.never || len(m.enum) == 0
		}
	}
	if b.hasConst {
		m.konst, m.hasConst = b.konst, true
	}
	if b.min != nil && (a.min == nil || b.min.Cmp(a.min) > 0 || (b.min.Cmp(a.min) == 0 && b.exclMin)) {
		m.min, m.exclMin = b.min, b.exclMin
	}
	if b.max != nil && (a.max == nil || b.max.Cmp(a.max) < 0 || (b.max.Cmp(a.max) == 0 && b.exclMax)) {
		m.max, m.exclMax = b.max, b.exclMax
	}
	if m.multipleOf == nil {
		m.multipleOf = b.multipleOf
	}
	m.minLength, m.maxLength = max(a.minLength, b.minLength), minLimit(a.maxLength, b.maxLength)
	if m.pattern == nil {
		m.pattern, m.patternSyntax = b.pattern, b.patternSyntax
	}
	if m.format == "" {
		m.format = b.format
	}
	m.prefix = make([]*schemaNode, max(len(a.prefix), len(b.prefix)))
	for i := range m.prefix {
		m.prefix[i] = both(at(a.prefix, i), at(b.prefix, i))
	}
	m.items, m.contains = both(a.items, b.items), both(a.contains, b.contains)
	m.minItems, m.maxItems, m.unique = max(a.minItems, b.minItems), minLimit(a.maxItems, b.maxItems), a.unique || b.unique
	m.props = mergeProps(a.props, b.props)
	m.required = append(append([]string(nil), a.required...), b.required...)
	m.additional = both(a.additional, b.additional)
	m.patternProps = append(append([]patternProp(nil), a.patternProps...), b.patternProps...)
	m.minProps, m.maxProps = max(a.minProps, b.minProps), minLimit(a.maxProps, b.maxProps)
	m.dependentRequired = append(append([]dependent(nil), a.dependentRequired...), b.dependentRequired...)
	return &m
}

// commonTypes is the types both sets allow (0: any), an integer being a number.
func commonTypes(a, b jsonTypes) jsonTypes {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	widen := func(t jsonTypes) jsonTypes {
		if t&typeNumber != 0 {
			t |= typeInteger
		}
		return t
	}
	t := widen(a) & widen(b)
	if a&typeNumber == 0 || b&typeNumber == 0 {
		t &^= typeNumber
	}
	return t
}

// minLimit is the smaller of two upper limits, < 0 meaning none.
func minLimit(a, b int) int {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}

func at(list []*schemaNode, i int) *schemaNode {
	if i < len(list) {
		return list[i]
	}
	return nil
}

// both is a schema whose values satisfy a and b; nil stands for any value.
func both(a, b *schemaNode) *schemaNode {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	n := newNode(a.path)
	n.allOf = []*schemaNode{a, b}
	return n
}

// mergeProps is the properties of both lists in order, a name in both satisfying both.
func mergeProps(a, b []schemaProp) []schemaProp {
	out := append([]schemaProp(nil), a...)
	for _, p := range b {
		found := false
		for i := range out {
			if out[i].name == p.name {
				out[i].node, found = both(out[i].node, p.node), true
			}
		}
		if !found {
			out = append(out, p)
		}
	}
	return out
}

// array writes minItems items, a couple more unless minimal, within maxItems; each from
// prefixItems or items, the first minContains also from contains, distinct when uniqueItems
// says so.
func (g *argGen) array(f *schemaNode, key string, depth int) (any, bool) {
	n := f.minItems
	if !g.minimal {
		n = max(n+g.r.IntN(3), min(len(f.prefix), 2))
	}
	if f.contains != nil {
		n = max(n, f.minContains)
	}
	if f.maxItems >= 0 {
		n = min(n, f.maxItems)
	}
	if n > g.budget {
		return nil, false
	}
	out := make([]any, 0, n)
	for i := range n {
		s := f.items
		if i < len(f.prefix) {
			s = f.prefix[i]
		}
		if f.contains != nil && i < f.minContains {
			s = both(f.contains, s)
		}
		v, ok := g.item(s, key, depth, out, f.unique)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// item writes one array item, unlike those before it when unique.
func (g *argGen) item(s *schemaNode, key string, depth int, before []any, unique bool) (any, bool) {
	if s == nil {
		s = newNode("")
	}
	for range 8 {
		v, ok := g.value(s, key, depth+1)
		if !ok {
			return nil, false
		}
		if !unique || !anyEqual(before, v) {
			return v, true
		}
	}
	return nil, false
}

// object writes the required properties, some of the optional ones unless minimal (fewer
// the deeper), what dependentRequired asks of those, and more up to minProperties: declared
// ones first, then vocabulary words.
func (g *argGen) object(f *schemaNode, depth int) (any, bool) {
	o := jsonObject{}
	add := func(name string) bool {
		if _, ok := o.get(name); ok {
			return true
		}
		s := f.propSchema(name)
		if s == nil {
			s = newNode(f.path + ".properties." + name)
		}
		v, ok := g.value(s, name, depth+1)
		if ok {
			o = append(o, jsonMember{name, v})
		}
		return ok
	}
	for _, p := range f.props {
		if req := isRequired(f, p.name); (req || g.optional(depth)) && !add(p.name) && req {
			return nil, false
		}
	}
	for _, name := range f.required {
		if !add(name) {
			return nil, false
		}
	}
	for _, d := range f.dependentRequired {
		if _, ok := o.get(d.prop); ok {
			for _, name := range d.names {
				if !add(name) {
					return nil, false
				}
			}
		}
	}
	for i := 0; len(o) < f.minProps && i < len(f.props)+len(vocabulary); i++ {
		if i < len(f.props) {
			add(f.props[i].name)
		} else {
			add(vocabulary[i-len(f.props)])
		}
	}
	return o, len(o) >= f.minProps
}

func isRequired(f *schemaNode, name string) bool {
	for _, r := range f.required {
		if r == name {
			return true
		}
	}
	return false
}

// optional decides whether to write an optional property: half of them at the top, fewer
// deeper, none below four levels.
func (g *argGen) optional(depth int) bool {
	switch {
	case g.minimal || depth > 4:
		return false
	case depth == 0:
		return g.r.IntN(2) == 0
	}
	return g.r.IntN(10) < 3
}

// str writes a string: one matching the pattern, in the format's shape, path- or URL-shaped
// when the key names a path or a link, else vocabulary words; then padded or cut to the
// length bounds.
func (g *argGen) str(f *schemaNode, key string) string {
	var s string
	switch kind := keyKind(key); {
	case f.patternSyntax != nil:
		var b strings.Builder
		g.regex(&b, f.patternSyntax, 0)
		s = b.String()
	case f.format != "":
		s = g.formatted(f.format, key)
	case kind == "dir":
		s = g.joinWords(1+g.r.IntN(2), "/")
	case kind == "path":
		s = g.joinWords(1+g.r.IntN(2), "/") + "/" + g.word() + fileExts[g.r.IntN(len(fileExts))]
	case kind == "url":
		s = "https://example.invalid/" + g.joinWords(1+g.r.IntN(2), "/")
	case kind == "text":
		s = g.joinWords(3+g.r.IntN(6), " ")
	default:
		s = g.joinWords(1+g.r.IntN(4), " ")
	}
	if n := runeCount(s); n < f.minLength {
		b := []byte(s)
		for n < f.minLength { // the words are ASCII: each byte is a rune
			w := g.word()
			b = append(append(b, ' '), w...)
			n += 1 + len(w)
		}
		s = string(b)
	}
	if f.maxLength >= 0 && runeCount(s) > f.maxLength {
		s = string([]rune(s)[:f.maxLength])
		if t := strings.TrimRight(s, " "); runeCount(t) >= f.minLength {
			s = t
		}
	}
	return s
}

// fileExts are the extensions of path-shaped values.
var fileExts = []string{".go", ".md", ".txt", ".json", ".py", ".ts"}

// word is one vocabulary word.
func (g *argGen) word() string { return vocabulary[g.r.IntN(len(vocabulary))] }

// joinWords is n vocabulary words joined by sep.
func (g *argGen) joinWords(n int, sep string) string {
	words := make([]string, n)
	for i := range words {
		words[i] = g.word()
	}
	return strings.Join(words, sep)
}

// keyKind says what a property's name asks its string to look like: "path", "dir", "url",
// "text" (a description, a prompt) or "" (a few words).
func keyKind(key string) string {
	kind := ""
	for _, w := range keyWords(key) {
		switch w {
		case "dir", "dirs", "directory", "directories", "folder", "folders", "cwd", "workdir", "pwd":
			return "dir"
		case "path", "paths", "file", "files", "filename", "filenames", "filepath", "filepaths":
			kind = "path"
		case "url", "urls", "uri", "uris", "link", "links", "href", "endpoint":
			return "url"
		case "description", "prompt", "text", "content", "message", "question", "instruction", "instructions", "summary", "reason":
			if kind == "" {
				kind = "text"
			}
		}
	}
	return kind
}

// keyWords splits a property name into lower-case words at underscores, hyphens, dots,
// spaces and camelCase humps: "filePath" and "file_path" are both [file path].
func keyWords(key string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range key {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			continue
		case unicode.IsUpper(r) && i > 0 && len(cur) > 0 && !unicode.IsUpper(cur[len(cur)-1]):
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// formatted writes a value in a format's shape; unknown formats get words.
func (g *argGen) formatted(format, key string) string {
	d := func(n int) int { return g.r.IntN(n) }
	switch format {
	case "date-time":
		return fmt.Sprintf("2025-%02d-%02dT%02d:%02d:%02dZ", 1+d(12), 1+d(28), d(24), d(60), d(60))
	case "date":
		return fmt.Sprintf("2025-%02d-%02d", 1+d(12), 1+d(28))
	case "time":
		return fmt.Sprintf("%02d:%02d:%02dZ", d(24), d(60), d(60))
	case "duration":
		return fmt.Sprintf("PT%dM", 1+d(59))
	case "email", "idn-email":
		return g.word() + "@example.invalid"
	case "hostname", "idn-hostname":
		return g.word() + ".example.invalid"
	case "ipv4":
		return fmt.Sprintf("192.0.2.%d", 1+d(254))
	case "ipv6":
		return fmt.Sprintf("2001:db8::%x", 1+d(0xfffe))
	case "uri", "url", "iri":
		return "https://example.invalid/" + g.joinWords(2, "/")
	case "uri-reference", "iri-reference", "uri-template":
		return g.joinWords(2, "/")
	case "uuid":
		return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", g.r.Uint32(), d(1<<16), d(1<<12), 0x8000|d(1<<14), g.r.Uint64()&(1<<48-1))
	case "json-pointer":
		return "/" + g.word()
	case "relative-json-pointer":
		return "0/" + g.word()
	}
	return g.joinWords(1+g.r.IntN(3), " ")
}

// regex writes a string the parsed (simplified) pattern matches: a few repetitions of each
// repeat, one branch of each alternation, printable ASCII from each class when it has any.
func (g *argGen) regex(b *strings.Builder, re *syntax.Regexp, depth int) {
	if depth > maxGenDepth || b.Len() > maxGenString {
		return
	}
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		b.WriteRune(g.classRune(re.Rune))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte("abcdefghij"[g.r.IntN(10)])
	case syntax.OpCapture:
		g.regex(b, re.Sub[0], depth+1)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			g.regex(b, s, depth+1)
		}
	case syntax.OpAlternate:
		g.regex(b, re.Sub[g.r.IntN(len(re.Sub))], depth+1)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := repeatBounds(re)
		for range lo + g.r.IntN(hi-lo+1) {
			g.regex(b, re.Sub[0], depth+1)
		}
	}
}

// repeatBounds is how many times to write a repeat's operand: its minimum up to two more,
// within its maximum.
func repeatBounds(re *syntax.Regexp) (lo, hi int) {
	switch re.Op {
	case syntax.OpStar:
		return 0, 2
	case syntax.OpPlus:
		return 1, 3
	case syntax.OpQuest:
		return 0, 1
	}
	lo, hi = re.Min, re.Min+2
	if re.Max >= 0 {
		hi = min(hi, re.Max)
	}
	return lo, hi
}

// classRune picks a rune of a character class (pairs of bounds), printable ASCII when the
// class has any.
func (g *argGen) classRune(ranges []rune) rune {
	var fit [][2]rune
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := max(ranges[i], 0x21), min(ranges[i+1], 0x7e)
		if lo <= hi {
			fit = append(fit, [2]rune{lo, hi})
		}
	}
	if len(fit) == 0 {
		if len(ranges) == 0 {
			return 'a'
		}
		return ranges[0]
	}
	r := fit[g.r.IntN(len(fit))]
	return r[0] + rune(g.r.IntN(int(r[1]-r[0]+1)))
}
