package results

// Reproduction is what a run directory records so that the run can be made again: the program,
// the command line and environment it was given, and every setting outside the workload that
// shaped it. The workload itself is config.yaml. results.json and config.yaml's reproduce
// section hold the same value. No field holds a secret.
type Reproduction struct {
	// Agentsim is the program that made the run.
	Agentsim Build `yaml:"agentsim" json:"agentsim"`
	// Command is the command line, shell-quoted, with the API key and URL credentials masked.
	Command string `yaml:"command" json:"command"`
	// Env lists the AGENTSIM_ variables set, as NAME=value, masked the same way.
	Env []string `yaml:"env,omitempty" json:"env,omitempty"`
	// Seed is the workload's seed (text, lengths, timing).
	Seed int64 `yaml:"seed" json:"seed"`
	// Server is the kind of server, embedded or external.
	Server ServerKind `yaml:"server" json:"server"`
	// Simulator is the embedded simulator's settings; nil with an external server.
	Simulator *SimulatorSettings `yaml:"simulator,omitempty" json:"simulator,omitempty"`
	// Replay is what a replay's workload came from; nil for any other command.
	Replay *ReplaySource `yaml:"replay,omitempty" json:"replay,omitempty"`
}

// ReplaySource is a replay's part of a Reproduction: the trace replayed, and the workload keys
// whose values came from it rather than from the defaults or the user.
type ReplaySource struct {
	// Trace is the trace file replayed ("-": standard input).
	Trace string `yaml:"trace" json:"trace"`
	// FromTrace says, one line per key, what the workload took from the trace and how, e.g.
	// "model: tiny.gguf, named by 8 of the 8 requests replayed".
	FromTrace []string `yaml:"from_trace" json:"from_trace"`
}

// SimulatorSettings is the embedded simulator's part of a Reproduction.
type SimulatorSettings struct {
	// Profile is the engine profile (--sim-profile).
	Profile string `yaml:"profile" json:"profile"`
	// Seed is the simulator's seed (--sim-seed).
	Seed uint64 `yaml:"seed" json:"seed"`
	// Speedup is how many times faster than wall time simulated time ran (--speedup). For a
	// --speedup max run it is the rate the run started at in config.yaml, and the median it
	// held in results.json.
	Speedup float64 `yaml:"speedup" json:"speedup"`
	// SpeedupMax is set for a --speedup max run: `--speedup max` reproduces it, the simulated
	// figures being the same at any rate; Achieved is then, in results.json, the rates it held.
	SpeedupMax bool          `yaml:"speedup_max,omitempty" json:"speedup_max,omitempty"`
	Achieved   *SpeedupRange `yaml:"-" json:"achieved,omitempty"`
	// Faults are the faults injected (--sim-fault), with their parameters (--sim-fault-param).
	Faults      []string `yaml:"faults" json:"faults"`
	FaultParams []string `yaml:"fault_params" json:"fault_params"`
}

// Build names the agentsim binary that made a run.
type Build struct {
	// Version is the release or module version, "devel" for a source build.
	Version string `yaml:"version" json:"version"`
	// Revision is the VCS commit, with "+dirty" for uncommitted changes; "unknown" when the
	// build recorded none.
	Revision string `yaml:"revision" json:"revision"`
	// Go is the toolchain version.
	Go string `yaml:"go" json:"go"`
}

// SpeedupRange is the least, median and largest speedup a --speedup max run held over its
// control windows (SpeedupAchieved).
type SpeedupRange struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}
