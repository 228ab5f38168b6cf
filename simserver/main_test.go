package simserver

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks, for the internal and the black-box tests alike, that no goroutine outlives
// the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
