package workloads

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/agentsim/agentsim/internal/gate"
	"github.com/agentsim/agentsim/internal/suggest"
)

// valueKind is the type of one key's value, which decides how raw input converts to it.
type valueKind int

const (
	kindInt valueKind = iota
	kindInt64
	kindFloat
	kindBool
	kindString
	kindDuration
	kindDist
	kindDurationDist
	kindThresholds
	kindMap // a map section: named entries, each a few keys (see entries.go)
)

// keySpec is one key of the workload schema.
type keySpec struct {
	key  string    // dotted, lower case: "pacer.slots"
	kind valueKind // how to convert raw input
	def  any       // the built-in default, typed
}

// schemaIndex is every key of a workload file, derived once from Workload's mapstructure tags and
// Defaults, so that adding a field to Workload adds its key, default and env variable.
type schemaIndex struct {
	keys     []keySpec
	byKey    map[string]keySpec
	byEnv    map[string]string // AGENTSIM_PACER_SLOTS → pacer.slots
	sections map[string]bool   // context, request, …
	maps     []mapSection      // tools.per_tool, whose entries' keys are not in keys
}

var schema = buildSchema(Defaults())

// EnvPrefix starts every environment variable Load reads: AGENTSIM_ + the key upper-cased with
// "." replaced by "_", e.g. AGENTSIM_REQUEST_IDLE_TIMEOUT for request.idle_timeout.
const EnvPrefix = "AGENTSIM_"

// EnvName returns the environment variable that sets key: a workload key ("pacer.slots" →
// AGENTSIM_PACER_SLOTS) or a command's own setting, named like its flag ("api-key" →
// AGENTSIM_API_KEY).
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// KeyType names the type of key's value as command-line help shows it — "int", "float",
// "bool", "string", "duration", "dist", "duration-dist", "thresholds" or "map" — or returns ""
// when key is no workload key. A key of an entry of a map section, such as
// tools.per_tool.bash.latency, has its own type.
func KeyType(key string) string {
	spec, ok := schema.spec(key)
	if !ok {
		return ""
	}
	return [...]string{kindInt: "int", kindInt64: "int", kindFloat: "float", kindBool: "bool", kindString: "string",
		kindDuration: "duration", kindDist: "dist", kindDurationDist: "duration-dist",
		kindThresholds: "thresholds", kindMap: "map"}[spec.kind]
}

// Keys returns every key a workload file, --config file, AGENTSIM_ variable or --set may set,
// in schema order. A map section, such as tools.per_tool, is one key: the keys of its entries
// (tools.per_tool.bash.latency) are named by the entries.
func Keys() []string {
	keys := make([]string, len(schema.keys))
	for i, s := range schema.keys {
		keys[i] = s.key
	}
	return keys
}

func buildSchema(def Workload) schemaIndex {
	s := schemaIndex{byKey: map[string]keySpec{}, byEnv: map[string]string{}, sections: map[string]bool{}}
	s.walk("", reflect.ValueOf(def))
	for _, k := range s.keys {
		s.byKey[k.key] = k
		s.byEnv[EnvName(k.key)] = k.key
	}
	return s
}

func (s *schemaIndex) walk(prefix string, v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		fv := v.Field(i)
		if opts == "squash" {
			s.walk(prefix, fv)
			continue
		}
		key := prefix + name
		if f.Type.Kind() == reflect.Map {
			s.keys = append(s.keys, keySpec{key: key, kind: kindMap, def: fv.Interface()})
			s.maps = append(s.maps, mapSection{key: key, fields: entryFields(f.Type.Elem())})
			continue
		}
		kind, leaf := leafKind(f.Type)
		if !leaf {
			s.sections[key] = true
			s.walk(key+".", fv)
			continue
		}
		s.keys = append(s.keys, keySpec{key: key, kind: kind, def: fv.Interface()})
	}
}

func leafKind(t reflect.Type) (valueKind, bool) {
	switch t {
	case reflect.TypeFor[time.Duration]():
		return kindDuration, true
	case distType:
		return kindDist, true
	case durationDistType:
		return kindDurationDist, true
	case thresholdsType:
		return kindThresholds, true
	}
	switch t.Kind() {
	case reflect.Int:
		return kindInt, true
	case reflect.Int64:
		return kindInt64, true
	case reflect.Float64:
		return kindFloat, true
	case reflect.Bool:
		return kindBool, true
	case reflect.String:
		return kindString, true
	case reflect.Struct:
		return 0, false
	}
	panic(fmt.Sprintf("workloads: no key kind for field type %s", t))
}

// integerWant is what a key taking an integer allows, said of raw: a number too large is
// told the range, anything else that it is not an integer.
func integerWant(raw any) string {
	if beyondInt64(raw) {
		return wantInt64
	}
	return wantInteger
}

// convert turns raw input for key (a YAML value, or a string from the environment or --set)
// into the key's Go type, or says what is allowed. A map section's value is no one value: the
// layer sets its entries' keys (see parseEntries).
func (k keySpec) convert(raw any) (any, error) {
	switch k.kind {
	case kindInt:
		if n, ok := toInt(raw); ok && n == int64(int(n)) {
			return int(n), nil
		}
		return nil, notAllowed(k.key, raw, integerWant(raw))
	case kindInt64:
		if n, ok := toInt(raw); ok {
			return n, nil
		}
		return nil, notAllowed(k.key, raw, integerWant(raw))
	case kindFloat:
		if f, ok := toFloat(raw); ok {
			return f, nil
		}
		return nil, notAllowed(k.key, raw, wantNumber)
	case kindBool:
		if b, ok := toBool(raw); ok {
			return b, nil
		}
		return nil, notAllowed(k.key, raw, wantBool)
	case kindString:
		switch raw.(type) {
		case string, int, int64, uint64, float64, bool:
			return fmt.Sprint(raw), nil
		}
		return nil, notAllowed(k.key, raw, wantString)
	case kindDuration:
		if d, ok := toDuration(raw); ok {
			return d, nil
		}
		return nil, notAllowed(k.key, raw, wantDuration)
	case kindDist:
		return parseDist(k.key, raw)
	case kindThresholds:
		return gate.Parse(raw)
	default:
		return parseDurationDist(k.key, raw)
	}
}

// unknownKey explains why key is not a key, with a suggestion when one is near.
func unknownKey(key string) string {
	msg := fmt.Sprintf("unknown key %q", key)
	if schema.sections[key] {
		return msg + fmt.Sprintf(": it is a section; set one of its keys, such as %q", firstKeyUnder(key))
	}
	if why, ok := schema.unknownEntryKey(key); ok {
		return msg + why
	}
	for _, k := range schema.keys {
		if (k.kind == kindDist || k.kind == kindDurationDist) && strings.HasPrefix(key, k.key+".") {
			return msg + fmt.Sprintf(": %s is a distribution; set it whole, e.g. %s='%s'", k.key, k.key, example(k))
		}
		if k.kind == kindThresholds && strings.HasPrefix(key, k.key+".") {
			return msg + fmt.Sprintf(": set %s whole, e.g. %s='{e2e.p90: \"<= 1.10 * baseline\"}', or give them in a thresholds file", k.key, k.key)
		}
	}
	if near := suggest.Nearest(key, Keys()); near != "" {
		return msg + fmt.Sprintf("; did you mean %q?", near)
	}
	return msg
}

// unknownEnv explains why an AGENTSIM_ variable names no key.
func unknownEnv(name string) string {
	msg := fmt.Sprintf("unknown key: no workload key is named %s", name)
	names := make([]string, 0, len(schema.byEnv))
	for n := range schema.byEnv {
		names = append(names, n)
	}
	if near := suggest.Nearest(name, names); near != "" {
		return msg + fmt.Sprintf("; did you mean %s (%s)?", near, schema.byEnv[near])
	}
	return msg
}

func firstKeyUnder(section string) string {
	for _, k := range schema.keys {
		if strings.HasPrefix(k.key, section+".") {
			return k.key
		}
	}
	return section
}

func example(k keySpec) string {
	if k.kind == kindDist {
		return Dist{Kind: DistUniform, Min: 1000, Max: 2000}.String()
	}
	return DurationDist{Kind: DistExp, Avg: 2 * time.Second}.String()
}
