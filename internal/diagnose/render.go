package diagnose

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/agentsim/agentsim/results"
)

// Render writes v for a terminal: the verdict kind and its summary on one line, then one
// bullet per piece of evidence.
func Render(w io.Writer, v results.Verdict) error {
	if _, err := fmt.Fprintf(w, "verdict: %s — %s\n", v.Kind, v.Summary); err != nil {
		return err
	}
	for _, e := range v.Evidence {
		if _, err := fmt.Fprintf(w, "  • %s\n", e); err != nil {
			return err
		}
	}
	return nil
}

// RenderJSON writes v as indented JSON (the verdict object of results.json), for --json.
func RenderJSON(w io.Writer, v results.Verdict) error {
	if v.Evidence == nil {
		v.Evidence = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// RenderWarnings writes the run's warnings for a terminal, one a line after its verdict,
// "warning: …": every one of AllWarnings.
func RenderWarnings(w io.Writer, r *results.Results) error {
	for _, msg := range AllWarnings(r) {
		if _, err := fmt.Fprintf(w, "warning: %s\n", msg); err != nil {
			return err
		}
	}
	return nil
}

// AllWarnings lists every warning of a run's results, in the order the summary prints them:
// results.json's warnings, then the harness's lag warning and the embedded simulator's.
func AllWarnings(r *results.Results) []string {
	out := slices.Clone(r.Warnings)
	if h := r.Harness; h != nil {
		for _, w := range []string{h.Warning, h.SimulatorWarning} {
			if w != "" {
				out = append(out, w)
			}
		}
	}
	return out
}
