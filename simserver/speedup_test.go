package simserver_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/simserver"
)

// TestSpeedupAdvertised checks that the server advertises its clock's speedup in a header on
// every response and in its model cards, so that a harness can run on the same clock.
func TestSpeedupAdvertised(t *testing.T) {
	bubble(t, func(t *testing.T) {
		clk, err := clock.New(50)
		require.NoError(t, err)
		ts := startServer(t, simserver.Options{Clock: clk})
		for _, path := range []string{"/v1/models", "/health", "/metrics", "/nowhere"} {
			resp, err := ts.client.Get(ts.url + path)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, "50", resp.Header.Get(simserver.SpeedupHeader), "GET %s", path)
		}
		resp, err := ts.client.Get(ts.url + "/v1/models")
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var list struct {
			Data []struct {
				Agentsim struct {
					Speedup float64 `json:"speedup"`
					Profile string  `json:"profile"`
				} `json:"agentsim"`
			} `json:"data"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
		require.Len(t, list.Data, 1)
		assert.Equal(t, 50.0, list.Data[0].Agentsim.Speedup)
		assert.Equal(t, "dsv4-pd", list.Data[0].Agentsim.Profile)
	})
}
