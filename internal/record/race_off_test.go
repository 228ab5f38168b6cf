//go:build !race

package record_test

// raceEnabled says whether the race detector is on (race_on_test.go).
const raceEnabled = false
