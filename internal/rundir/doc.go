// Package rundir is the run directory on disk (docs/files.md): the names of the files a run
// writes, the parts a compare or a bench sweep puts in subdirectories, and Open, which reads a
// run back. Writers — the harness, `agentsim record --watch`, compare, bench — take the names
// from here; readers — diagnose, diff, report, trace import, replay, harnesstest, the sweep
// table — read through Open or ReadEvents, each saying in Options what it needs and tolerates.
package rundir
