package workloads

import "strings"

// Problem is one mistake in a configuration.
type Problem struct {
	// Source says where the offending input came from: a workload or --config file, an
	// environment variable ("AGENTSIM_AGENTS=0"), or a flag ("--set pacer.slots=0"). It is
	// empty for problems found in the resolved configuration, whatever layer set the value.
	Source string
	// Key is the dotted key concerned, e.g. "pacer.slots"; empty when the problem is a whole
	// file.
	Key string
	// Message names the key, the value and what is allowed, e.g.
	// `agents: -3 is not allowed: want an integer from 1 to 10000`.
	Message string
}

// String is "<source>: <message>", or the message alone when the source is unknown.
func (p Problem) String() string {
	if p.Source == "" {
		return p.Message
	}
	return p.Source + ": " + p.Message
}

// ConfigError lists every problem Load or Validate found, in the order found: the layers
// from lowest to highest precedence, then the resolved configuration in schema order. The
// command layer reports it as a usage error.
type ConfigError struct {
	// Problems has at least one element.
	Problems []Problem
}

// Error is one problem per line.
func (e *ConfigError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// configError returns nil for no problems, else a *ConfigError holding them.
func configError(problems []Problem) error {
	if len(problems) == 0 {
		return nil
	}
	return &ConfigError{Problems: problems}
}
