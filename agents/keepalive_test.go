package agents

import (
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/fakeserver"
)

// TestCallResentWhenLostToKeepAlive checks that a request the server hangs up on as it arrives
// on a kept-alive connection — its keep-alive timeout racing the client's next request — is
// sent once more and answered, as a whole request, and that the body held for the resend
// is let go once the round trip is over: for a body of given messages (a onceBody) and for
// an agent's conversation written as it is read (a wireBody, made again for the resend).
func TestCallResentWhenLostToKeepAlive(t *testing.T) {
	for _, wired := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			f := &fakeserver.Server{Tokens: 3, HangUpReused: true}
			ts, hc := f.StartInMemory(t)
			// One connection at most: the second request waits for the first's, and reuses it.
			hc.Transport.(*http.Transport).MaxConnsPerHost = 1
			client := NewClient(ts.URL+"/v1", "", hc, clock.Real(), nil)
			for i := range 3 {
				req := testRequest()
				if wired {
					req = Request{Model: "m", Conversation: (*conversation)(wireTestAgent(true)), MaxTokens: 3}
				}
				res := client.Call(t.Context(), req, nil)
				require.NoError(t, res.Err, "wired %v, call %d", wired, i)
				assert.Equal(t, events.ClassNone, res.Class, "wired %v, call %d", wired, i)
				assert.Equal(t, 3, res.Usage.Completion, "wired %v, call %d", wired, i)
			}
			assert.Equal(t, 2, f.HungUp(), "wired %v: the second and third calls each met a hang-up on their reused connection", wired)
		})
	}
}

// TestOnceBodyHeld checks that a body held for a resend can be had again after it was read
// and closed, and only until its release.
func TestOnceBodyHeld(t *testing.T) {
	o := &onceBody{full: []byte("abc"), b: []byte("abc")}
	o.hold()
	_, _ = o.Read(make([]byte, 8))
	_, _ = o.Read(make([]byte, 8)) // EOF
	require.NoError(t, o.Close())
	again, err := o.again()
	require.NoError(t, err, "held: the body is had again after its end and its Close")
	b := make([]byte, 8)
	n, _ := again.Read(b)
	assert.Equal(t, "abc", string(b[:n]))
	o.release()
	assert.Nil(t, o.full, "released")
	_, err = o.again()
	assert.ErrorIs(t, err, errBodyReleased)
}
