package workloads

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentsim/agentsim/internal/plural"
)

// fileLayer converts a workload or --config file. source names it in messages; dir is the
// directory of the file, which a relative tools.set path is relative to ("" for the current
// directory).
func fileLayer(source, dir string, data []byte) (layer, []Problem) {
	l := layer{values: map[string]any{}}
	m, problems := fileMapping(source, data)
	l.flatten(source, "", m, &problems)
	l.resolveToolSet(dir)
	return l, problems
}

// recordedLayer converts a run's config.yaml: a workload file followed by the command
// settings Redacted wrote, which it skips.
func recordedLayer(data []byte) (layer, []Problem) {
	l := layer{values: map[string]any{}}
	m, problems := fileMapping("", data)
	for k, v := range m {
		if recordedSetting(k, v) {
			delete(m, k)
		}
	}
	l.flatten("", "", m, &problems)
	return l, problems
}

// recordedSetting reports whether a top-level key of config.yaml is one Recorded appended:
// the reproduce section, or a command setting (no workload key) valued as Recorded shows one —
// "", "<redacted>" or a URL.
func recordedSetting(k string, v any) bool {
	if _, key := schema.byKey[k]; key || schema.sections[k] {
		return false
	}
	if k == ReproduceKey {
		_, ok := asMap(v)
		return ok
	}
	s, ok := v.(string)
	return ok && (s == "" || s == RedactedValue || strings.Contains(s, "://"))
}

// fileMapping parses a file's YAML into its top-level mapping; nil for an empty file, or with
// the problem when it is not a mapping.
func fileMapping(source string, data []byte) (map[string]any, []Problem) {
	var root any
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, []Problem{{Source: source, Message: "not YAML: " + yamlError(err)}}
	}
	if root == nil {
		return nil, nil // an empty file sets nothing
	}
	m, ok := asMap(root)
	if !ok {
		// The content is not echoed: a file given by mistake (a .env, a key file) may hold
		// a secret, and its kind and size are enough to recognise it.
		return nil, []Problem{{Source: source, Message: fmt.Sprintf(
			"the file is %s (%s), not a mapping: want a mapping of keys at the top level, such as agents: 8",
			yamlKind(root), plural.Of(len(data), "byte"))}}
	}
	return m, nil
}

// yamlKind names what a file's top level holds, without its content.
func yamlKind(v any) string {
	switch x := v.(type) {
	case []any:
		return "a YAML list of " + plural.Of(len(x), "item")
	case string:
		return "text (a YAML string)"
	case bool:
		return "a YAML boolean"
	case int, int64, uint64, float64:
		return "a YAML number"
	}
	return "a YAML scalar"
}

// flatten walks one mapping of a file, converting each known key and reporting the others.
func (l *layer) flatten(source, prefix string, m map[string]any, problems *[]Problem) {
	for _, k := range sortedKeys(m) {
		key := prefix + k
		raw := m[k]
		if spec, ok := schema.spec(key); ok {
			l.set(source, spec, raw, problems)
			continue
		}
		if !schema.sections[key] {
			*problems = append(*problems, Problem{Source: source, Key: key, Message: unknownKey(key)})
			continue
		}
		sub, ok := asMap(raw)
		if !ok && raw != nil {
			*problems = append(*problems, Problem{Source: source, Key: key,
				Message: notAllowed(key, raw, fmt.Sprintf("a mapping of %s.* keys", key)).Error()})
			continue
		}
		l.flatten(source, key+".", sub, problems)
	}
}

func (l *layer) set(source string, spec keySpec, raw any, problems *[]Problem) {
	if spec.kind == kindMap {
		// The entries' keys are set one by one, so that entries merge across layers.
		leaves, err := parseEntries(spec.key, raw)
		report(source, spec.key, err, problems)
		for _, key := range sortedKeys(leaves) {
			leaf, _ := schema.spec(key)
			l.set(source, leaf, leaves[key], problems)
		}
		return
	}
	v, err := spec.convert(raw)
	if err != nil {
		report(source, spec.key, err, problems)
		return
	}
	l.values[spec.key] = v
}

// report adds err's problems with key; an error joining several (the rules of thresholds, the
// entries of a map section) is one problem each.
func report(source, key string, err error, problems *[]Problem) {
	if err == nil {
		return
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		*problems = append(*problems, Problem{Source: source, Key: key, Message: e.Error()})
	}
}

// envLayer converts the AGENTSIM_ variables of env, the environment layer of the chain;
// ignore names variables to skip.
func envLayer(env, ignore []string) (layer, []Problem) {
	l := layer{values: map[string]any{}}
	var problems []Problem
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || slices.Contains(ignore, name) {
			continue
		}
		key, ok := schema.envKey(name)
		spec, known := schema.spec(key)
		if !ok || !known {
			// The value is left out: a mistyped variable may hold a secret.
			problems = append(problems, Problem{Source: name, Message: unknownEnv(name)})
			continue
		}
		l.set(name+"="+val, spec, val, &problems)
	}
	l.resolveToolSet("")
	return l, problems
}

// overrideLayer converts flags and --set pairs.
func overrideLayer(overrides []Override) (layer, []Problem) {
	l := layer{values: map[string]any{}, overrides: true}
	var problems []Problem
	for _, o := range overrides {
		key := strings.ToLower(strings.TrimSpace(o.Key))
		spec, ok := schema.spec(key)
		if !ok {
			shown := o
			if looksSecret(key) {
				shown.Value = RedactedValue
			}
			problems = append(problems, Problem{Source: shown.String(), Key: key, Message: unknownKey(key)})
			continue
		}
		l.set(o.String(), spec, o.Value, &problems)
	}
	l.resolveToolSet("")
	return l, problems
}

// yamlError is err's text without the package prefix, on one line.
func yamlError(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return strings.Join(te.Errors, "; ")
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// looksSecret reports whether an unknown key's name suggests its value is a credential, so
// that messages do not echo it. No workload key holds a secret.
func looksSecret(key string) bool {
	for _, word := range []string{"key", "secret", "password", "passwd", "auth", "credential", "bearer"} {
		if strings.Contains(key, word) {
			return true
		}
	}
	return false
}
