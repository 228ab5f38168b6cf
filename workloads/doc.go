// Package workloads describes what a simulated agent harness does: how many agents, how many
// rounds, how contexts grow, what each request asks for and which tool definitions it
// carries, how long tools and thinking take, and which pacer gates the requests.
//
// A workload is YAML. Built-ins (ocbrowse, coding-agent, synthetic, smoke) are embedded; users
// pass their own file. Load resolves one workload through the configuration chain
//
//	overrides (--set and the flags for it) > environment (AGENTSIM_…) > --config file > workload YAML > defaults
//
// decoding strictly (unknown keys are errors) and validating every value, so that a run never
// starts from a configuration with a typo in it. Every problem found is reported at once in a
// *ConfigError. LoadRecorded reads back the config.yaml a run wrote the same way.
//
// Text generates the deterministic prompt text agents send. All durations are simulated time;
// all sizes are tokens unless a name says otherwise.
package workloads
