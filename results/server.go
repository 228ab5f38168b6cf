package results

import (
	"fmt"
	"strings"
)

// String describes the server in a few words for a header or a summary: its URL, or for the
// embedded simulator its profile and faults, "embedded simulator dsv4-pd (faults none)".
func (s Server) String() string {
	if s.Kind != "embedded" {
		return s.URL
	}
	faults := "none"
	if len(s.Fault) > 0 {
		faults = strings.Join(s.Fault, ",")
	}
	return fmt.Sprintf("embedded simulator %s (faults %s)", s.Profile, faults)
}
