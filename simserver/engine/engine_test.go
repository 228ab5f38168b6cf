package engine

import (
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
)

// TestEngineStartAfterStopStartsNothing: Start after Stop leaves no engine goroutine running
// (synctest.Test fails when the test returns with goroutines of its bubble still blocked),
// and the stopped engine refuses work.
func TestEngineStartAfterStopStartsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, err := NewEngine(clock.Real(), DSV4PD(), nil)
		require.NoError(t, err)
		e.Stop()
		e.Stop() // safe twice
		e.Start()
		_, err = e.Submit(Job{PromptTokens: 10, Key: 1})
		assert.True(t, errors.Is(err, ErrStopped), "Submit after Stop = %v; want ErrStopped", err)
	})
}
