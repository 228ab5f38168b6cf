package workloads

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentsim/agentsim/internal/suggest"
)

// A map section, such as tools.per_tool, holds named entries of a few keys each:
// tools.per_tool.bash.latency. Its entries are written nested in a file, whole as the
// section's value (--set tools.per_tool='{bash: {latency: 30s}}'), or one key at a time
// (--set tools.per_tool.bash.latency=30s, AGENTSIM_TOOLS_PER_TOOL_BASH_LATENCY=30s). Each
// layer sets the keys of an entry one by one, so entries merge across layers. Entry names are
// lower-cased, as every key is.

// mapSection is one map section of the schema.
type mapSection struct {
	key    string    // "tools.per_tool"
	fields []keySpec // each entry's keys, named relative to the entry: "latency"
}

// entryName is what an entry may be named: a tool's name as OpenAI allows it.
var entryName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// entryFields lists the keys of an entry of type t, a struct whose fields may be pointers
// (nil: not set).
func entryFields(t reflect.Type) []keySpec {
	var fields []keySpec
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		kind, leaf := leafKind(ft)
		if !leaf {
			panic(fmt.Sprintf("workloads: map entry field %s is not a leaf", f.Name))
		}
		fields = append(fields, keySpec{key: name, kind: kind})
	}
	return fields
}

// spec returns the schema entry of key: a fixed key, or a key of one entry of a map section,
// such as tools.per_tool.bash.latency.
func (s *schemaIndex) spec(key string) (keySpec, bool) {
	if k, ok := s.byKey[key]; ok {
		return k, true
	}
	m, name, field, ok := s.entryKey(key)
	if !ok || !entryName.MatchString(name) {
		return keySpec{}, false
	}
	for _, f := range m.fields {
		if f.key == field {
			return keySpec{key: key, kind: f.kind}, true
		}
	}
	return keySpec{}, false
}

// entryKey splits a key under a map section into the section, the entry's name and the rest.
func (s *schemaIndex) entryKey(key string) (m mapSection, name, rest string, ok bool) {
	for _, m := range s.maps {
		if after, found := strings.CutPrefix(key, m.key+"."); found {
			name, rest, _ = strings.Cut(after, ".")
			return m, name, rest, true
		}
	}
	return mapSection{}, "", "", false
}

// envKey returns the key an AGENTSIM_ variable sets: a fixed key's, or a key of one entry of a
// map section (AGENTSIM_TOOLS_PER_TOOL_READ_PAGE_LATENCY → tools.per_tool.read_page.latency).
func (s *schemaIndex) envKey(name string) (string, bool) {
	if k, ok := s.byEnv[name]; ok {
		return k, true
	}
	for _, m := range s.maps {
		rest, ok := strings.CutPrefix(name, EnvName(m.key)+"_")
		if !ok {
			continue
		}
		for _, f := range m.fields {
			if entry, ok := strings.CutSuffix(rest, "_"+strings.ToUpper(f.key)); ok && entry != "" {
				return m.key + "." + strings.ToLower(entry) + "." + f.key, true
			}
		}
	}
	return "", false
}

// unknownEntryKey explains why a key under a map section is not a key; false when key is not
// under one.
func (s *schemaIndex) unknownEntryKey(key string) (string, bool) {
	m, name, rest, ok := s.entryKey(key)
	if !ok {
		return "", false
	}
	first := m.key + "." + name + "." + m.fields[0].key
	switch {
	case !entryName.MatchString(name):
		return fmt.Sprintf(": %q is not allowed as a name in %s: want letters, digits, '_' or '-', at most 64", name, m.key), true
	case rest == "":
		return fmt.Sprintf(": it is an entry of %s; set one of its keys, such as %q", m.key, first), true
	}
	field, _, _ := strings.Cut(rest, ".")
	for _, f := range m.fields {
		if f.key == field && (f.kind == kindDist || f.kind == kindDurationDist) {
			at := m.key + "." + name + "." + f.key
			return fmt.Sprintf(": %s is a distribution; set it whole, e.g. %s='%s'", at, at, example(f)), true
		}
	}
	names := make([]string, len(m.fields))
	for i, f := range m.fields {
		names[i] = m.key + "." + name + "." + f.key
	}
	if near := suggest.Nearest(key, names); near != "" {
		return fmt.Sprintf("; did you mean %q?", near), true
	}
	return fmt.Sprintf(": an entry of %s takes %s", m.key, fieldList(m)), true
}

// parseEntries reads a map section's value — a mapping of names to mappings of their keys,
// or a string holding one as --set and the environment give it — as the raw value of each
// entry key it sets, by full key. Every problem is returned, joined.
func parseEntries(key string, raw any) (map[string]any, error) {
	m, _ := schema.mapSection(key)
	if s, ok := raw.(string); ok && strings.HasPrefix(strings.TrimSpace(s), "{") {
		var parsed map[string]any
		if yaml.Unmarshal([]byte(s), &parsed) == nil {
			raw = parsed
		}
	}
	entries, ok := asMap(raw)
	if !ok && raw != nil {
		return nil, notAllowed(key, raw, fmt.Sprintf("a mapping of names, each to its keys (%s), such as {bash: {%s: …}}",
			fieldList(m), m.fields[0].key))
	}
	out := map[string]any{}
	var errs []error
	for _, name := range sortedKeys(entries) {
		at := key + "." + name
		if !entryName.MatchString(name) {
			errs = append(errs, errors.New(unknownKey(at)))
			continue
		}
		keys, ok := asMap(entries[name])
		if !ok && entries[name] != nil {
			errs = append(errs, notAllowed(at, entries[name], fmt.Sprintf("a mapping of its keys (%s)", fieldList(m))))
			continue
		}
		for _, f := range sortedKeys(keys) {
			if _, ok := schema.spec(at + "." + f); !ok {
				errs = append(errs, errors.New(unknownKey(at+"."+f)))
				continue
			}
			out[at+"."+f] = keys[f]
		}
	}
	return out, errors.Join(errs...)
}

// mapSection returns the map section named key.
func (s *schemaIndex) mapSection(key string) (mapSection, bool) {
	for _, m := range s.maps {
		if m.key == key {
			return m, true
		}
	}
	return mapSection{}, false
}

// fieldList names an entry's keys: "latency and result_tokens".
func fieldList(m mapSection) string {
	names := make([]string, len(m.fields))
	for i, f := range m.fields {
		names[i] = f.key
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
