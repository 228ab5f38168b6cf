package cli

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentsim/agentsim/internal/shown"
	"github.com/agentsim/agentsim/internal/sweep"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/workloads"
)

// The settings of agentsim sweep that shape its grid — --grid, --seeds, --sim-fault and
// --sim-fault-param — are parsed and checked here, each problem naming the flag that gave it.

// parseGrid parses --grid arguments, each "key=v1,v2,…", into dimensions in the order given.
// It reports every malformed argument at once: no "=", an empty key, an empty list or an
// empty value in it, a key given twice.
func parseGrid(args []string) ([]sweep.Dimension, []workloads.Problem) {
	var dims []sweep.Dimension
	var problems []workloads.Problem
	for _, a := range args {
		src := "--grid " + shown.Elide(a)
		key, list, ok := strings.Cut(a, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		switch {
		case !ok:
			problems = append(problems, workloads.Problem{Source: src,
				Message: fmt.Sprintf("%q is not allowed: want key=v1,v2,… such as pacer.kind=slots,aimd", shown.Elide(a))})
			continue
		case key == "":
			problems = append(problems, workloads.Problem{Source: src,
				Message: "the key is empty: want key=v1,v2,… such as pacer.kind=slots,aimd"})
			continue
		case slices.ContainsFunc(dims, func(d sweep.Dimension) bool { return d.Key == key }):
			problems = append(problems, workloads.Problem{Source: src, Key: key,
				Message: fmt.Sprintf("%s: given twice: want one --grid per key, its values in one list", key)})
			continue
		}
		values, p := parseList(list)
		if p != "" {
			problems = append(problems, workloads.Problem{Source: src, Key: key, Message: key + ": " + p})
			continue
		}
		dims = append(dims, sweep.Dimension{Key: key, Values: values})
	}
	return dims, problems
}

// parseList splits a comma-separated list, refusing an empty list, an empty item and an item
// given twice; the message says which.
func parseList(list string) ([]string, string) {
	if strings.TrimSpace(list) == "" {
		return nil, "the list of values is empty: want at least one value"
	}
	var values []string
	seen := map[string]bool{}
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		switch {
		case v == "":
			return nil, fmt.Sprintf("%q holds an empty value: want values separated by single commas", shown.Elide(list))
		case seen[v]:
			return nil, fmt.Sprintf("%q is listed twice: want each value once", shown.Elide(v))
		}
		seen[v] = true
		values = append(values, v)
	}
	return values, ""
}

// maxSeeds bounds a --seeds list, so that a typo (1-100000) is refused rather than planned.
const maxSeeds = 1000

// parseSeeds parses --seeds: seeds and inclusive ranges separated by commas, "1-5", "1,3,7",
// "1-3,10". The seeds are workload seeds: integers ≥ 0, each once, at most 1000.
func parseSeeds(s string) ([]int64, error) {
	want := "want seeds ≥ 0 and ranges separated by commas, such as 1-5 or 1,3,7"
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("--seeds: the list is empty: %s", want)
	}
	var seeds []int64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		a, errA := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
		b, errB := strconv.ParseInt(strings.TrimSpace(hi), 10, 64)
		switch {
		case errA != nil || errB != nil || a < 0 || b < 0:
			return nil, fmt.Errorf("--seeds: %q is not allowed: %s", part, want)
		case b < a:
			return nil, fmt.Errorf("--seeds: %q is not allowed: a range goes from low to high, such as %d-%d", part, b, a)
		case b-a >= maxSeeds || len(seeds)+int(b-a+1) > maxSeeds:
			return nil, fmt.Errorf("--seeds: %q is not allowed: want at most %d seeds", s, maxSeeds)
		}
		for x := a; x <= b; x++ {
			if slices.Contains(seeds, x) {
				return nil, fmt.Errorf("--seeds: seed %d is listed twice: want each seed once", x)
			}
			seeds = append(seeds, x)
		}
	}
	return seeds, nil
}

// parseSweepFaults turns the sweep's --sim-fault values (each one cell's faults, several
// joined with "+") into the fault dimension; without any, the sweep runs the simulator
// healthy. It refuses an empty value and a value given twice.
func parseSweepFaults(values []string) ([]string, []workloads.Problem) {
	if len(values) == 0 {
		return []string{sweep.NoFault}, nil
	}
	var faults []string
	var problems []workloads.Problem
	for _, v := range values {
		v = strings.TrimSpace(v)
		switch {
		case v == "":
			problems = append(problems, workloads.Problem{Key: "sim-fault",
				Message: "--sim-fault: an empty value is not allowed: want fault names, one cell's faults joined with +"})
		case slices.Contains(faults, v):
			problems = append(problems, workloads.Problem{Key: "sim-fault",
				Message: fmt.Sprintf("--sim-fault: %q is listed twice: want each value once", v)})
		default:
			faults = append(faults, v)
		}
	}
	return faults, problems
}

// maxComboProblems bounds how many problems of value combinations are listed one by one.
const maxComboProblems = 20

// checkGrid returns every problem of the grid against the workload base resolves to, which
// must load: a key that is no workload key, a key the sweep sets otherwise (seed, which
// --seeds gives, or a key --set already gives), a value the key refuses, and a combination of
// values the workload refuses though each value alone is accepted. Each problem names the
// --grid argument, the key, the value and what is allowed.
func checkGrid(base workloads.LoadOptions, grid []sweep.Dimension) []workloads.Problem {
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
	for _, values := range sweep.Cells(grid) {
		var over []workloads.Override
		var words []string
		for i, d := range grid {
			over = append(over, workloads.Override{Key: d.Key, Value: values[i], Source: "--grid"})
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
func checkDimension(base workloads.LoadOptions, d sweep.Dimension) []workloads.Problem {
	src := "--grid " + d.Key + "=" + strings.Join(d.Values, ",")
	switch {
	case d.Key == "seed":
		return []workloads.Problem{{Source: src, Key: d.Key, Message: "seed: give the seeds with --seeds (such as --seeds 1-5), not --grid"}}
	case slices.ContainsFunc(base.Overrides, func(o workloads.Override) bool { return strings.EqualFold(o.Key, d.Key) }):
		return []workloads.Problem{{Source: src, Key: d.Key,
			Message: fmt.Sprintf("%s: also given with %s: want it in one place, the grid or the flag", d.Key, flagFor(base.Overrides, d.Key))}}
	case workloads.KeyType(d.Key) == "":
		// The loader's message says what the key might have meant.
		ps := loadProblems(base, []workloads.Override{{Key: d.Key, Value: d.Values[0], Source: "--grid"}})
		for i := range ps {
			ps[i].Source = src
		}
		return ps
	}
	var problems []workloads.Problem
	for _, v := range d.Values {
		for _, p := range loadProblems(base, []workloads.Override{{Key: d.Key, Value: v, Source: "--grid"}}) {
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

// checkSweepFaults returns every problem of the sweep's fault values and --sim-fault-param
// values: an unknown fault, a parameter that does not name its fault (in a sweep every
// parameter names it, name.key=value), names a fault no cell runs, or has a value the fault
// refuses.
func checkSweepFaults(faults, params []string) []workloads.Problem {
	var problems []workloads.Problem
	add := func(msg string) {
		if !slices.ContainsFunc(problems, func(p workloads.Problem) bool { return p.Message == msg }) {
			problems = append(problems, workloads.Problem{Key: "sim-fault", Message: msg})
		}
	}
	used := map[string]bool{}
	for _, f := range faults {
		for _, n := range sweep.FaultNames(f) {
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
		if _, err := simserver.ParseFaults(sweep.FaultNames(f), sweep.CellFaultParams(params, f), 1); err != nil {
			for _, line := range strings.Split(simFaultFlags.named(err).Error(), "\n") {
				add(line)
			}
		}
	}
	return problems
}
