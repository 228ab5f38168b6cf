package sweep

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentsim/agentsim/workloads"
)

// Dimension is one axis of the grid: a workload key and the values the sweep gives it.
type Dimension struct {
	// Key is a workload key as --set spells it, e.g. "pacer.kind".
	Key string `json:"key"`
	// Values are the key's values, as --set would take them, in the order given.
	Values []string `json:"values"`
}

// ParseGrid parses --grid arguments, each "key=v1,v2,…", into dimensions in the order given.
// It reports every malformed argument at once: no "=", an empty key, an empty list or an
// empty value in it, a key given twice.
func ParseGrid(args []string) ([]Dimension, []workloads.Problem) {
	var dims []Dimension
	var problems []workloads.Problem
	for _, a := range args {
		src := "--grid " + a
		key, list, ok := strings.Cut(a, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		switch {
		case !ok:
			problems = append(problems, workloads.Problem{Source: src,
				Message: fmt.Sprintf("%q is not allowed: want key=v1,v2,… such as pacer.kind=slots,aimd", a)})
			continue
		case key == "":
			problems = append(problems, workloads.Problem{Source: src,
				Message: "the key is empty: want key=v1,v2,… such as pacer.kind=slots,aimd"})
			continue
		case slices.ContainsFunc(dims, func(d Dimension) bool { return d.Key == key }):
			problems = append(problems, workloads.Problem{Source: src, Key: key,
				Message: fmt.Sprintf("%s: given twice: want one --grid per key, its values in one list", key)})
			continue
		}
		values, p := parseList(list)
		if p != "" {
			problems = append(problems, workloads.Problem{Source: src, Key: key, Message: key + ": " + p})
			continue
		}
		dims = append(dims, Dimension{Key: key, Values: values})
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
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		switch {
		case v == "":
			return nil, fmt.Sprintf("%q holds an empty value: want values separated by single commas", list)
		case slices.Contains(values, v):
			return nil, fmt.Sprintf("%q is listed twice: want each value once", v)
		}
		values = append(values, v)
	}
	return values, ""
}

// maxSeeds bounds a --seeds list, so that a typo (1-100000) is refused rather than planned.
const maxSeeds = 1000

// ParseSeeds parses --seeds: seeds and inclusive ranges separated by commas, "1-5", "1,3,7",
// "1-3,10". The seeds are workload seeds: integers ≥ 0, each once, at most 1000.
func ParseSeeds(s string) ([]int64, error) {
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

// NoFault is the fault value of the cells that run the simulator healthy.
const NoFault = "none"

// FaultSep joins the faults one cell runs at once: "slow-decode+drop".
const FaultSep = "+"

// ParseFaults turns the sweep's --sim-fault values (each one cell's faults, several joined
// with "+") into the fault dimension; without any, the sweep runs the simulator healthy.
// It refuses an empty value and a value given twice.
func ParseFaults(values []string) ([]string, []workloads.Problem) {
	if len(values) == 0 {
		return []string{NoFault}, nil
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

// FaultNames splits one cell's fault value into the fault names the simulator takes; none
// for NoFault.
func FaultNames(fault string) []string {
	if fault == NoFault {
		return nil
	}
	return strings.Split(fault, FaultSep)
}
