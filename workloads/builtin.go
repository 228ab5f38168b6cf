package workloads

import (
	"embed"
	"slices"
	"strings"
)

// builtinFS holds the built-in workloads, one YAML file each, named <name>.yaml.
//
//go:embed builtin/*.yaml
var builtinFS embed.FS

// Names returns the built-in workload names, sorted.
func Names() []string {
	entries, err := builtinFS.ReadDir("builtin")
	if err != nil {
		panic("workloads: embedded builtin directory missing: " + err.Error())
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	slices.Sort(names)
	return names
}

// Builtin returns the YAML of the named built-in workload, as embedded.
func Builtin(name string) ([]byte, bool) {
	if !slices.Contains(Names(), name) {
		return nil, false
	}
	data, err := builtinFS.ReadFile("builtin/" + name + ".yaml")
	return data, err == nil
}
