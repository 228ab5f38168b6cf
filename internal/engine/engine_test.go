package engine

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

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

// TestSubmitRejections: Submit refuses in the engine's vocabulary, a *Rejection whose Reason
// says why, carrying the numbers the front needs to explain it.
func TestSubmitRejections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, tc := range []struct {
			faults, params []string
			job            Job
			want           Rejection
		}{
			// A prompt that fills the context leaves no room for output.
			{nil, nil, Job{PromptTokens: 163_840, Key: 1}, Rejection{Reason: TooLong, PromptTokens: 163_840, MaxContextTokens: 163_840}},
			// The errors fault, kind 429, with its retry delay.
			{[]string{"errors"}, []string{"rate=1", "kind=429", "retry_after=7s"}, Job{PromptTokens: 10, Key: 1},
				Rejection{Reason: RateLimited, RetryAfter: 7 * time.Second}},
			// The errors fault, kind 503.
			{[]string{"errors"}, []string{"rate=1", "kind=503"}, Job{PromptTokens: 10, Key: 1}, Rejection{Reason: Overloaded}},
			// A queue limit of 0 refuses every request.
			{[]string{"queue-limit"}, []string{"max_queued=0"}, Job{PromptTokens: 10, Key: 1}, Rejection{Reason: QueueFull}},
		} {
			f, err := ParseFaults(tc.faults, tc.params, 1)
			require.NoError(t, err)
			e, err := NewEngine(clock.Real(), DSV4PD(), f)
			require.NoError(t, err)
			_, err = e.Submit(tc.job)
			var rej *Rejection
			require.True(t, errors.As(err, &rej), "Submit(%+v) with %s = %v; want a *Rejection", tc.job, f, err)
			assert.Equal(t, tc.want, *rej, "Submit(%+v) with %s", tc.job, f)
			assert.Contains(t, rej.Error(), tc.want.Reason.String())
		}
	})
}
