package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// The sweep directory's fixed names (docs/sweep.md).
const (
	// PlanFile is the plan, written before any run starts.
	PlanFile = "sweep.json"
	// RunsDir holds one run directory per completion index.
	RunsDir = "cells"
	// LogsDir holds each locally run index's console output.
	LogsDir = "logs"
	// InputsDir holds copies of the workload and --config files the plan names, so that
	// wherever a run executes, it reads the files the sweep was planned with.
	InputsDir = "inputs"
)

// PlanSchema identifies sweep.json's format.
const PlanSchema = "agentsim.sweep/v1"

// MaxRuns bounds the runs of one sweep, so that a grid typed by mistake is refused before it
// is planned.
const MaxRuns = 10000

// Plan is sweep.json: the settings every run shares, the grid, and every run with its
// completion index. It holds everything a run needs apart from credentials, which a run takes
// from AGENTSIM_API_KEY, so that a run executes the same on this machine or in a pod.
type Plan struct {
	Schema string `json:"schema"`
	// Command is the sweep's command line, credentials redacted.
	Command string `json:"command"`
	// Base holds the settings every run shares.
	Base Base `json:"base"`
	// Grid, Faults and Seeds are the sweep's axes; a cell is one value of each grid
	// dimension and one fault, a run one cell with one seed.
	Grid   []Dimension `json:"grid"`
	Faults []string    `json:"faults"`
	Seeds  []int64     `json:"seeds"`
	// Runs lists every run, Runs[i].Index == i: the grid's first dimension varies slowest,
	// then the next ones, then the fault, the seed fastest.
	Runs []Run `json:"runs"`
}

// Base is the run settings every run of a sweep shares: the flags of `agentsim run` (or
// `agentsim exec`) the sweep was given, resolved.
type Base struct {
	// Exec is the harness command of exec cells, each run an `agentsim exec … -- Exec…`;
	// nil, each run is an `agentsim run`.
	Exec []string `json:"exec,omitempty"`
	// Workload is a built-in workload's name or a workload file, relative to the plan's
	// directory (a copy under InputsDir), "" for exec cells, which start from exec's own;
	// Name is the name it resolves to.
	Workload string `json:"workload"`
	Name     string `json:"name"`
	// Config is the --config file relative to the plan's directory, "" for none.
	Config string `json:"config,omitempty"`
	// Set lists the --set overrides and the flags that stand for them, in command-line order.
	Set []Set `json:"set,omitempty"`
	// Env holds the AGENTSIM_ variables naming workload keys that were set when the sweep was
	// planned, "NAME=value"; every run gets them, and no other variable of its own
	// environment but AGENTSIM_API_KEY.
	Env []string `json:"env,omitempty"`
	// Server is the external server's base URL, "" for the embedded simulator; MetricsURLs
	// are the extra /metrics URLs. Neither holds credentials.
	Server      string   `json:"server,omitempty"`
	MetricsURLs []string `json:"metrics_urls,omitempty"`
	// SimProfile, Speedup and FaultParams configure the embedded simulator. SimSeed, when
	// set, is its seed in every run; nil gives each run its own seed as the simulator's.
	SimProfile string  `json:"sim_profile,omitempty"`
	Speedup    float64 `json:"speedup,omitempty"`
	// SpeedupMax runs every run at --speedup max (Speedup is then its starting speedup).
	SpeedupMax  bool     `json:"speedup_max,omitempty"`
	SimSeed     *uint64  `json:"sim_seed,omitempty"`
	FaultParams []string `json:"fault_params,omitempty"`
	// FitContext is --fit-context: 0 off, -1 the server's window, else tokens.
	FitContext int `json:"fit_context,omitempty"`
}

// Set is one --set key=value.
type Set struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Embedded reports whether the runs use the embedded simulator.
func (b Base) Embedded() bool { return b.Server == "" }

// Run is one completion index: one cell with one seed.
type Run struct {
	Index int `json:"index"`
	// Values holds the cell's value of each grid dimension, in Plan.Grid's order.
	Values []string `json:"values"`
	// Fault is the cell's simulator fault value (FaultNames splits it).
	Fault string `json:"fault"`
	// Seed is the workload's seed and, unless Base.SimSeed is set, the simulator's.
	Seed int64 `json:"seed"`
	// Dir is the run's directory, relative to the plan's directory.
	Dir string `json:"dir"`
}

// Count is the number of runs of the grid × faults × seeds, from the lengths of the axes
// alone, so that a sweep past MaxRuns is refused before its plan is built: it saturates at
// MaxRuns+1.
func Count(grid []Dimension, faults []string, seeds []int64) int {
	n := len(faults) * len(seeds)
	for _, d := range grid {
		if n > MaxRuns {
			break
		}
		n *= len(d.Values)
	}
	return min(n, MaxRuns+1)
}

// NewPlan lists the runs of the grid × faults × seeds, in index order.
func NewPlan(command string, base Base, grid []Dimension, faults []string, seeds []int64) *Plan {
	p := &Plan{Schema: PlanSchema, Command: command, Base: base, Grid: grid, Faults: faults, Seeds: seeds}
	for _, values := range Cells(grid) {
		for _, f := range faults {
			for _, s := range seeds {
				i := len(p.Runs)
				p.Runs = append(p.Runs, Run{Index: i, Values: values, Fault: f, Seed: s,
					Dir: filepath.ToSlash(filepath.Join(RunsDir, runDirName(i, values, f, s)))})
			}
		}
	}
	return p
}

// Cells lists every combination of the dimensions' values, the first dimension slowest, in
// plan order; one empty combination for no dimension.
func Cells(grid []Dimension) [][]string {
	out := [][]string{{}}
	for _, d := range grid {
		var next [][]string
		for _, prefix := range out {
			for _, v := range d.Values {
				next = append(next, append(append([]string{}, prefix...), v))
			}
		}
		out = next
	}
	return out
}

var unsafeDirChars = regexp.MustCompile(`[^A-Za-z0-9.=+_-]+`)

// runDirName names a run's directory: its index, so that names sort in plan order and never
// collide, then its values, fault and seed for a reader, "0004-aimd-long-context-wedge-seed2".
func runDirName(index int, values []string, fault string, seed int64) string {
	parts := append([]string{fmt.Sprintf("%04d", index)}, values...)
	parts = append(parts, fault, "seed"+strconv.FormatInt(seed, 10))
	name := unsafeDirChars.ReplaceAllString(strings.Join(parts, "-"), "_")
	if len(name) > 120 {
		name = name[:120]
	}
	return name
}

// Cell describes run r's cell in words: "pacer.kind=aimd fault=long-context-wedge".
func (p *Plan) Cell(r Run) string {
	var parts []string
	for i, d := range p.Grid {
		parts = append(parts, d.Key+"="+r.Values[i])
	}
	return strings.Join(append(parts, "fault="+r.Fault), " ")
}

// RunArgs returns the command line, after the program name, that makes run r as `agentsim
// run` does, or for exec cells as `agentsim exec … -- CMD ARGS…`: the base settings, the
// cell's values and seed, and --out its directory under planDir. --force lets a run replace
// what an interrupted attempt left there.
func (p *Plan) RunArgs(r Run, planDir string) []string {
	b := p.Base
	args := []string{"run", "--workload", p.input(b.Workload, planDir)}
	if b.Exec != nil {
		args = []string{"exec"}
	}
	if b.Config != "" {
		args = append(args, "--config", p.input(b.Config, planDir))
	}
	for _, s := range b.Set {
		args = append(args, "--set", s.Key+"="+s.Value)
	}
	for i, d := range p.Grid {
		args = append(args, "--set", d.Key+"="+r.Values[i])
	}
	args = append(args, "--set", "seed="+strconv.FormatInt(r.Seed, 10))
	if b.Embedded() {
		simSeed := uint64(r.Seed)
		if b.SimSeed != nil {
			simSeed = *b.SimSeed
		}
		speedup := strconv.FormatFloat(b.Speedup, 'g', -1, 64)
		if b.SpeedupMax {
			speedup = "max"
		}
		args = append(args, "--sim-profile", b.SimProfile, "--speedup", speedup, "--sim-seed", strconv.FormatUint(simSeed, 10))
		if names := FaultNames(r.Fault); len(names) > 0 {
			args = append(args, "--sim-fault", strings.Join(names, ","))
		}
		for _, fp := range CellFaultParams(b.FaultParams, r.Fault) {
			args = append(args, "--sim-fault-param", fp)
		}
	} else {
		args = append(args, "--server", b.Server)
		for _, m := range b.MetricsURLs {
			args = append(args, "--metrics-url", m)
		}
	}
	if b.FitContext != 0 {
		args = append(args, "--fit-context="+strconv.Itoa(b.FitContext))
	}
	args = append(args, "--out", filepath.Join(planDir, filepath.FromSlash(r.Dir)), "--force")
	if b.Exec != nil {
		args = append(append(args, "--"), b.Exec...)
	}
	return args
}

// input resolves a workload or --config file the plan names: a copy under InputsDir relative
// to planDir, anything else (a built-in workload's name) as it is.
func (p *Plan) input(name, planDir string) string {
	if strings.HasPrefix(name, InputsDir+"/") {
		return filepath.Join(planDir, filepath.FromSlash(name))
	}
	return name
}

// CellFaultParams returns the --sim-fault-param values ("name.key=value") that apply to a
// cell's fault value: those naming one of its faults.
func CellFaultParams(params []string, fault string) []string {
	var out []string
	names := FaultNames(fault)
	for _, fp := range params {
		name, _, _ := strings.Cut(fp, ".")
		for _, n := range names {
			if n == name {
				out = append(out, fp)
				break
			}
		}
	}
	return out
}

// Same reports whether q plans the same runs with the same settings as p: whether a sweep
// planned as q may resume p's directory. Their command lines may differ.
func (p *Plan) Same(q *Plan) bool {
	a, b := *p, *q
	a.Command, b.Command = "", ""
	return reflect.DeepEqual(normalised(a), normalised(b))
}

// normalised round-trips p through JSON, so that nil and empty lists compare equal.
func normalised(p Plan) Plan {
	data, err := json.Marshal(p)
	if err != nil {
		panic(err) // a Plan always encodes
	}
	var out Plan
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

// Write writes the plan to dir/sweep.json, atomically (a temporary file, then a rename).
func (p *Plan) Write(dir string) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode sweep plan: %w", err)
	}
	tmp := filepath.Join(dir, "."+PlanFile+".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write sweep plan: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, PlanFile)); err != nil {
		return fmt.Errorf("write sweep plan: %w", err)
	}
	return nil
}

// ReadPlan reads a plan: path is sweep.json or the sweep directory holding it. It returns the
// plan and the directory its paths are relative to. A missing file, a file of another schema
// and a plan whose runs are out of order are errors naming the file.
func ReadPlan(path string) (*Plan, string, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, PlanFile)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("%s: no sweep plan there: want a sweep directory holding %s, as agentsim sweep writes", path, PlanFile)
	}
	if err != nil {
		return nil, "", fmt.Errorf("read sweep plan: %w", err)
	}
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, "", fmt.Errorf("%s: not a sweep plan: %w", path, err)
	}
	if p.Schema != PlanSchema {
		return nil, "", fmt.Errorf("%s: schema %q is not allowed: want %q", path, p.Schema, PlanSchema)
	}
	for i, r := range p.Runs {
		if r.Index != i || len(r.Values) != len(p.Grid) || r.Dir == "" || filepath.IsAbs(r.Dir) || strings.Contains(r.Dir, "..") {
			return nil, "", fmt.Errorf("%s: run %d is malformed: want index %d, %d values and a directory inside the sweep's", path, i, i, len(p.Grid))
		}
	}
	return &p, filepath.Dir(path), nil
}
