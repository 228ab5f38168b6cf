//go:build !race

package simserver

// raceEnabled says whether the race detector is on (race_on_test.go).
const raceEnabled = false
