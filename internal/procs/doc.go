// Package procs supervises the harness processes of `agentsim exec`: N copies of one command,
// each with its own environment, arguments, working directory and output files, started
// spread over a window and stopped together.
//
// Each process leads a process group of its own, so that stopping it — SIGTERM to the group,
// then SIGKILL after a grace period — stops the children it started too. On Linux each is
// also started with a parent-death signal (SIGKILL), so that even an agentsim killed with
// SIGKILL leaves none of the processes it started running; the signal reaches the process
// itself, not children it started in a group of their own. Elsewhere on Unix only the stop
// reaches them.
package procs
