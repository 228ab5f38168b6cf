package diagnose

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/results"
)

func TestRender(t *testing.T) {
	v := results.Verdict{Kind: results.Deadlock, Summary: "every running agent (2/2) waits",
		Evidence: []string{"request a0-r1-0 (agent 0): no byte for 612 s", "no timeout is armed"}}
	var b bytes.Buffer
	require.NoError(t, Render(&b, v))
	assert.Equal(t, "verdict: deadlock — every running agent (2/2) waits\n"+
		"  • request a0-r1-0 (agent 0): no byte for 612 s\n"+
		"  • no timeout is armed\n", b.String())
}

func TestRenderJSON(t *testing.T) {
	cases := []struct {
		name string
		v    results.Verdict
		want string
	}{
		// Evidence round-trips; no HTML escaping of "≥" or "<".
		{"evidence", results.Verdict{Kind: results.Slow, Summary: "s", Evidence: []string{"≥ 120 s < 600 s"}},
			"{\n  \"kind\": \"slow\",\n  \"summary\": \"s\",\n  \"evidence\": [\n    \"≥ 120 s < 600 s\"\n  ]\n}\n"},
		// No evidence is an empty list, never null.
		{"no evidence", results.Verdict{Kind: results.Healthy, Summary: "ok"},
			"{\n  \"kind\": \"healthy\",\n  \"summary\": \"ok\",\n  \"evidence\": []\n}\n"},
	}
	for _, c := range cases {
		var b bytes.Buffer
		require.NoError(t, RenderJSON(&b, c.v))
		assert.Equal(t, c.want, b.String(), "RenderJSON(%+v)", c.v)
		var back results.Verdict
		require.NoError(t, json.Unmarshal(b.Bytes(), &back))
		assert.Equal(t, c.v.Kind, back.Kind)
	}
}
