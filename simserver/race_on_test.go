//go:build race

package simserver

// raceEnabled says whether the race detector is on: under it, sync.Pool drops a random share of
// what is put back, so a test that counts the allocations a pooled buffer saves cannot hold.
const raceEnabled = true
