package workloads

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// RedactedValue is what Redacted writes in place of a secret's value.
const RedactedValue = "<redacted>"

// YAML renders the resolved workload as a workload file: every key, in schema order, with
// durations in Go syntax (90s, 60m) and distributions in their flow form. Loading the result
// gives back the same Workload.
func (w *Workload) YAML() ([]byte, error) {
	root, err := w.node()
	if err != nil {
		return nil, err
	}
	return encode(root)
}

// node is the workload as a YAML mapping of every key, durations shortened.
func (w *Workload) node() (*yaml.Node, error) {
	var root yaml.Node
	if err := root.Encode(w); err != nil {
		return nil, fmt.Errorf("encode workload %q: %w", w.Name, err)
	}
	shortenDurations(&root)
	return &root, nil
}

// Redacted renders the workload like YAML and appends the extra top-level keys the
// caller's configuration holds (an API key, a server URL with credentials), each written as
// "<redacted>" when set and "" when empty, in sorted order. It is the hook for config.yaml:
// whatever secrets a command adds never reach a file. An extra key that is also a workload
// key is an error.
func (w *Workload) Redacted(extra map[string]string) ([]byte, error) {
	root, err := w.node()
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		top, _, _ := strings.Cut(k, ".")
		if _, clash := schema.byKey[top]; clash || schema.sections[top] {
			return nil, fmt.Errorf("redacted key %q is a workload key", k)
		}
		shown := ""
		if extra[k] != "" {
			shown = RedactedValue
		}
		root.Content = append(root.Content, scalar(k), scalar(shown))
	}
	return encode(root)
}

func encode(n *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, fmt.Errorf("encode workload: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode workload: %w", err)
	}
	return buf.Bytes(), nil
}

// shortenDurations rewrites time.Duration's "1h0m0s" as "1h" throughout the tree.
func shortenDurations(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if d, err := time.ParseDuration(n.Value); err == nil && d.String() == n.Value {
			n.Value = formatDuration(d)
		}
	}
	for _, c := range n.Content {
		shortenDurations(c)
	}
}
