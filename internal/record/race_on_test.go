//go:build race

package record_test

// raceEnabled says whether the race detector is on: under it, every frame is larger, so a
// bound on how deep the proxy's calls go does not hold.
const raceEnabled = true
