package workloads

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentsim/agentsim/internal/redact"
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
// caller's configuration holds (an API key, the server URL), in sorted order: a URL (a value
// with "://") with its credentials masked by redact.URL, so that a server's URL
// stays readable; any other value as "<redacted>" when set and "" when empty. It
// is the hook for config.yaml: whatever secrets a command adds never reach a file. An extra
// key that is also a workload key is an error.
func (w *Workload) Redacted(extra map[string]string) ([]byte, error) {
	return w.Recorded(extra, nil)
}

// ReproduceKey is the top-level key of config.yaml under which a run records how to make it
// again (see Recorded).
const ReproduceKey = "reproduce"

// Recorded renders a run's config.yaml: the workload and its extra settings as Redacted does,
// then, unless reproduce is nil, a ReproduceKey section holding reproduce encoded as YAML —
// the program version, the command line, seeds, the simulator's settings, already free of
// secrets. LoadRecorded reads the result back, skipping both.
func (w *Workload) Recorded(extra map[string]string, reproduce any) ([]byte, error) {
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
		if err := checkRecordedKey(k); err != nil {
			return nil, err
		}
		root.Content = append(root.Content, scalar(k), scalar(redactedSetting(extra[k])))
	}
	if reproduce != nil {
		var n yaml.Node
		if err := n.Encode(reproduce); err != nil {
			return nil, fmt.Errorf("encode %s: %w", ReproduceKey, err)
		}
		root.Content = append(root.Content, scalar(ReproduceKey), &n)
	}
	return encode(root)
}

// checkRecordedKey refuses a command setting that would shadow a workload key or the
// reproduce section.
func checkRecordedKey(k string) error {
	top, _, _ := strings.Cut(k, ".")
	if _, clash := schema.byKey[top]; clash || schema.sections[top] || top == ReproduceKey {
		return fmt.Errorf("redacted key %q is a workload key", k)
	}
	return nil
}

// redactedSetting is how config.yaml shows a command setting: a URL without credentials, any
// other value as RedactedValue, nothing as "".
func redactedSetting(v string) string {
	switch {
	case v == "":
		return ""
	case strings.Contains(v, "://"):
		return redact.URL(v)
	}
	return RedactedValue
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
