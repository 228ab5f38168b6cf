package diagnose

import (
	"fmt"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// maxQuoted is how many failure classes the evidence quotes the server's words for.
const maxQuoted = 4

// serverWords quotes, per class of failure the server answered with (an HTTP status or an
// error frame), what it said the first time, most frequent class first:
// `first http_status 404 at t=0.5 s: "The model 'x' does not exist."`. Failures the harness
// observed itself (timeouts, resets) are named by their class alone.
func serverWords(r *results.Results) []string {
	var out []string
	for _, f := range r.Failures {
		if f.FirstMessage == "" || (f.Status == 0 && f.Class != events.ClassErrorFrame) {
			continue
		}
		if len(out) == maxQuoted {
			out = append(out, "… more in results.json failures")
			break
		}
		out = append(out, fmt.Sprintf("first %s at t=%s: %q", f.Key(), secs(f.FirstS), f.FirstMessage))
	}
	return out
}
