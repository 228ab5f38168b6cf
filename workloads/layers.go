package workloads

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// fileLayer converts a workload or --config file. source names it in messages.
func fileLayer(source string, data []byte) (layer, []Problem) {
	l := layer{values: map[string]any{}}
	m, problems := fileMapping(source, data)
	l.flatten(source, "", m, &problems)
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
		return nil, []Problem{{Source: source, Message: fmt.Sprintf(
			"%s is not allowed: want a mapping of keys at the top level, such as agents: 8", show(root))}}
	}
	return m, nil
}

// flatten walks one mapping of a file, converting each known key and reporting the others.
func (l *layer) flatten(source, prefix string, m map[string]any, problems *[]Problem) {
	for _, k := range sortedKeys(m) {
		key := prefix + k
		raw := m[k]
		if spec, ok := schema.byKey[key]; ok {
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
	v, err := spec.convert(raw)
	if err != nil {
		// A section of rules (thresholds) reports each bad rule on its own.
		errs := []error{err}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		}
		for _, e := range errs {
			*problems = append(*problems, Problem{Source: source, Key: spec.key, Message: e.Error()})
		}
		return
	}
	l.values[spec.key] = v
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
		key, ok := schema.byEnv[name]
		if !ok {
			// The value is left out: a mistyped variable may hold a secret.
			problems = append(problems, Problem{Source: name, Message: unknownEnv(name)})
			continue
		}
		l.set(name+"="+val, schema.byKey[key], val, &problems)
	}
	return l, problems
}

// overrideLayer converts flags and --set pairs.
func overrideLayer(overrides []Override) (layer, []Problem) {
	l := layer{values: map[string]any{}, overrides: true}
	var problems []Problem
	for _, o := range overrides {
		key := strings.ToLower(strings.TrimSpace(o.Key))
		spec, ok := schema.byKey[key]
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
