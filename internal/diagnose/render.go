package diagnose

import (
	"encoding/json"
	"fmt"
	"io"

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
