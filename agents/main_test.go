package agents

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine (a silence timer, a stream reader, a
// test server) outlives them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
