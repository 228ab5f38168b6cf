// Package sweep runs a workload over a grid of designs, faults and seeds and builds one table
// from the runs.
//
// A sweep is planned before anything runs: the grid (--grid key=v1,v2,…), the simulator
// faults (--sim-fault none,long-context-wedge) and the seeds (--seeds 1-5) multiply into runs,
// each with a completion index, and the Plan that lists them is written to sweep.json in the
// sweep's directory. Every run is then `agentsim run` with the plan's settings and its own
// cell's, into its own directory under the sweep's (Plan.RunArgs). A run is executed by the
// same per-index command wherever it runs: as a subprocess of the local sweep (Local), or as a
// pod of a Kubernetes Indexed Job (Job) that reads its index from JOB_COMPLETION_INDEX.
// Collect then builds the table — per cell, the verdicts across seeds, goodput, latencies,
// pacer wait and the time to the first stall — from the run directories, wherever they ran.
//
// The directory layout and the files' fields are described in docs/sweep.md.
package sweep
