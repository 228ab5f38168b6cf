package sweep

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/workloads"
)

// MaxRuns bounds the runs of one sweep, so that a grid typed by mistake is refused before it
// is planned.
const MaxRuns = 10000

// maxComboProblems bounds how many problems of value combinations are listed one by one.
const maxComboProblems = 20

// CheckGrid returns every problem of the grid against the workload base resolves to, which
// must load: a key that is no workload key, a key the sweep sets otherwise (seed, which
// --seeds gives, or a key --set already gives), a value the key refuses, and a combination of
// values the workload refuses though each value alone is accepted. Each problem names the
// --grid argument, the key, the value and what is allowed.
func CheckGrid(base workloads.LoadOptions, grid []Dimension) []workloads.Problem {
	var problems []workloads.Problem
	seen := map[string]bool{}
	add := func(p workloads.Problem) {
		if !seen[p.String()] {
			seen[p.String()] = true
			problems = append(problems, p)
		}
	}
	for _, d := range grid {
		for _, p := range checkDimension(base, d) {
			add(p)
		}
	}
	if len(problems) > 0 || len(grid) < 2 {
		return problems
	}
	var combos []workloads.Problem
	for _, values := range product(grid) {
		var over []workloads.Override
		var words []string
		for i, d := range grid {
			over = append(over, workloads.Override{Key: d.Key, Value: values[i], Source: "--grid " + d.Key})
			words = append(words, d.Key+"="+values[i])
		}
		for _, p := range loadProblems(base, over) {
			if p.Source == "" || strings.HasPrefix(p.Source, "--grid ") {
				p.Source = "--grid " + strings.Join(words, " ")
			}
			combos = append(combos, p)
		}
	}
	if len(combos) > maxComboProblems {
		n := len(combos) - maxComboProblems
		combos = append(combos[:maxComboProblems], workloads.Problem{Source: "--grid",
			Message: fmt.Sprintf("and %d more problems of value combinations", n)})
	}
	return append(problems, combos...)
}

// checkDimension returns the problems of one dimension: its key, then each of its values.
func checkDimension(base workloads.LoadOptions, d Dimension) []workloads.Problem {
	src := "--grid " + d.Key + "=" + strings.Join(d.Values, ",")
	switch {
	case d.Key == "seed":
		return []workloads.Problem{{Source: src, Key: d.Key, Message: "seed: give the seeds with --seeds (such as --seeds 1-5), not --grid"}}
	case slices.ContainsFunc(base.Overrides, func(o workloads.Override) bool { return strings.EqualFold(o.Key, d.Key) }):
		return []workloads.Problem{{Source: src, Key: d.Key,
			Message: fmt.Sprintf("%s: also given with %s: want it in one place, the grid or the flag", d.Key, flagFor(base.Overrides, d.Key))}}
	case workloads.KeyType(d.Key) == "":
		// The loader's message says what the key might have meant.
		ps := loadProblems(base, []workloads.Override{{Key: d.Key, Value: d.Values[0], Source: "--grid " + d.Key}})
		for i := range ps {
			ps[i].Source = src
		}
		return ps
	}
	var problems []workloads.Problem
	for _, v := range d.Values {
		for _, p := range loadProblems(base, []workloads.Override{{Key: d.Key, Value: v, Source: "--grid " + d.Key}}) {
			if p.Source == "" {
				p.Source = "--grid " + d.Key + "=" + v
			}
			problems = append(problems, p)
		}
	}
	return problems
}

// flagFor names the flag that gave key among overrides: "--set" or a shortcut like "--agents".
func flagFor(overrides []workloads.Override, key string) string {
	for _, o := range overrides {
		if strings.EqualFold(o.Key, key) {
			if o.Source == "" {
				return "--set"
			}
			return o.Source
		}
	}
	return "--set"
}

// loadProblems loads the workload base with extra overrides appended and returns the problems
// the overrides add: those the base alone does not have.
func loadProblems(base workloads.LoadOptions, extra []workloads.Override) []workloads.Problem {
	opts := base
	opts.Overrides = append(slices.Clone(base.Overrides), extra...)
	_, err := workloads.Load(opts)
	var ce *workloads.ConfigError
	if !errors.As(err, &ce) {
		if err != nil {
			return []workloads.Problem{{Message: err.Error()}}
		}
		return nil
	}
	return ce.Problems
}

// CheckFaults returns every problem of the sweep's fault values and --sim-fault-param values:
// an unknown fault, a parameter that does not name its fault (in a sweep every parameter
// names it, name.key=value), names a fault no cell runs, or has a value the fault refuses.
func CheckFaults(faults, params []string) []workloads.Problem {
	var problems []workloads.Problem
	add := func(msg string) {
		msg = strings.ReplaceAll(msg, "--fault", "--sim-fault")
		if !slices.ContainsFunc(problems, func(p workloads.Problem) bool { return p.Message == msg }) {
			problems = append(problems, workloads.Problem{Key: "sim-fault", Message: msg})
		}
	}
	used := map[string]bool{}
	for _, f := range faults {
		for _, n := range FaultNames(f) {
			used[n] = true
		}
	}
	for _, fp := range params {
		kv, _, _ := strings.Cut(fp, "=")
		name, _, dotted := strings.Cut(kv, ".")
		switch {
		case !dotted:
			add(fmt.Sprintf("--sim-fault-param %q: in a sweep, name the fault: want name.key=value, such as long-context-wedge.threshold_tokens=32768", fp))
		case !used[name]:
			add(fmt.Sprintf("--sim-fault-param %q: fault %q is in no cell: want a fault of --sim-fault (%s)", fp, name, strings.Join(faults, ", ")))
		}
	}
	for _, f := range faults {
		if _, err := simserver.ParseFaults(FaultNames(f), CellFaultParams(params, f), 1); err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				add(line)
			}
		}
	}
	return problems
}
