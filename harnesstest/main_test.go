package harnesstest_test

import (
	"runtime/debug"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a run leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// skipUnderRace skips an ocbrowse-sized test under the race detector, where one run takes
// 10–30 s instead of about a second; CI runs these tests once more without it.
func skipUnderRace(t *testing.T) {
	t.Helper()
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" && s.Value == "true" {
			t.Skip("ocbrowse-sized: run without -race")
		}
	}
}
