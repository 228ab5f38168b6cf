package engine

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDSV4PDFiguresUnchanged checks that profiles/dsv4-pd.yaml holds the figures the
// calibration was fitted with, when they were Go code.
func TestDSV4PDFiguresUnchanged(t *testing.T) {
	want := &Profile{
		Name:        "dsv4-pd",
		Model:       "deepseek-v4-flash",
		Description: "DeepSeek-V4-Flash on SGLang with prefill/decode disaggregation (the incident's stack)",
		Engine:      EngineDisaggregated,
		FirstByte:   FirstByteAtToken, StreamInterval: 1, StreamCoalesceTokens: 1,

		PrefillBase:            20 * time.Millisecond,
		PrefillPerToken:        80 * time.Microsecond,
		PrefillAttnPerToken2Ns: 1,
		PrefillChunkTokens:     8192,
		PrefixCacheTokens:      4 << 20,

		TransferSerial:     70 * time.Millisecond,
		TransferPerTokenNs: 5,
		TransferLatency:    1100 * time.Millisecond,

		DecodeBase:         9200 * time.Microsecond,
		DecodePerSeq:       1090 * time.Microsecond,
		DecodePerKVTokenNs: 10,
		MaxRunning:         128,
		KVCapacityTokens:   1_500_000,
		DecodeLogInterval:  40,
		SlowStepFactor:     1,

		BootstrapTimeout: 300 * time.Second,
		WaitingTimeout:   300 * time.Second,
		AbortDelay:       2 * time.Second,

		MaxContextTokens: 163_840,
		Efforts: map[string]LengthProfile{
			"":        {Min: 200, Max: 800},
			"none":    {Min: 200, Max: 800},
			"minimal": {Min: 150, Max: 600, ReasoningFraction: 0.2},
			"low":     {Min: 400, Max: 1200, ReasoningFraction: 0.5},
			"medium":  {Min: 1000, Max: 2500, ReasoningFraction: 0.7},
			"high":    {Min: 2000, Max: 3500, ReasoningFraction: 0.8},
			"max":     {Min: 3000, Max: 4500, ReasoningFraction: 0.8},
		},
		Agent: Agent{CallsPerRequest: 8.8, CallsPerReply: 1.2, CallsPerReplyP99: 4, ToolCallStyle: ToolCallsOpenAI},
	}
	assert.Equal(t, want, DSV4PD())
}

// TestBuiltinProfiles checks that every built-in profile parses, is valid, and reads back
// the same from its printed YAML.
func TestBuiltinProfiles(t *testing.T) {
	names := ProfileNames()
	assert.Equal(t, []string{"dsv4-pd", "ideal", "vllm-llama3-8b-h100"}, names)
	for _, name := range names {
		p, err := LookupProfile(name)
		require.NoError(t, err, name)
		assert.Equal(t, name, p.Name)
		out, err := p.YAML()
		require.NoError(t, err, name)
		back, err := ParseProfile(out, "printed "+name)
		require.NoError(t, err, "%s printed:\n%s", name, out)
		assert.Equal(t, p, back, "%s read back from its YAML", name)
	}
}

// TestParseProfile checks profile files: a base and an override, and every way a file is
// refused, with all of its problems at once.
func TestParseProfile(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string // substrings of the error, one per problem; nil: no error
		check      func(*testing.T, *Profile)
	}{{
		// A base keeps every key the file does not set.
		name: "base", yaml: "base: dsv4-pd\nname: mine\ndecode_base: 12ms\n",
		check: func(t *testing.T, p *Profile) {
			assert.Equal(t, "mine", p.Name)
			assert.Equal(t, 12*time.Millisecond, p.DecodeBase)
			assert.Equal(t, 1090*time.Microsecond, p.DecodePerSeq)
		},
	}, {
		// An unknown key names the key; a typo is not silently ignored.
		name: "unknown key", yaml: "base: ideal\ndecode_bas: 12ms\n",
		want: []string{`unknown key "decode_bas"`},
	}, {
		// NaN and infinities are refused, and every problem is reported at once.
		name: "nan and inf", yaml: "base: ideal\ndecode_per_kv_token_ns: .nan\nprefill_attn_per_token2_ns: .inf\nstep_jitter_sigma: -1\n",
		want: []string{"decode_per_kv_token_ns: NaN is not allowed", "prefill_attn_per_token2_ns: +Inf is not allowed", "step_jitter_sigma: -1 is not allowed"},
	}, {
		// A duration must carry its unit.
		name: "bare number duration", yaml: "base: ideal\ndecode_base: 20\n",
		want: []string{"decode_base", "duration"},
	}, {
		// Without a base, the keys left out are zero and the ones that may not be say so.
		name: "no base", yaml: "name: x\nmodel: m\n",
		want: []string{"decode_base: 0s is not allowed", "max_running: 0 is not allowed", "efforts:"},
	}, {
		// first_byte takes one of three words.
		name: "first byte", yaml: "base: ideal\nfirst_byte: soon\n",
		want: []string{`first_byte: "soon" is not allowed: want first-token, headers, admission`},
	}, {
		// engine takes one of three words; colocated-mixed needs its step budget, and the PD
		// keys are refused on a colocated engine.
		name: "engine", yaml: "base: vllm-llama3-8b-h100\nstep_token_budget: 0\nwaiting_timeout: 5s\ndecode_ignores_disconnect: true\n",
		want: []string{"step_token_budget: 0 is not allowed: want an integer ≥ 1",
			"waiting_timeout: 5s is not allowed with engine colocated-mixed",
			"decode_ignores_disconnect: true is not allowed with engine colocated-mixed"},
	}, {
		name: "engine word", yaml: "base: ideal\nengine: colocated\n",
		want: []string{`engine: "colocated" is not allowed: want disaggregated, colocated-mixed, colocated-alternating`},
	}, {
		// The agent section: a mean below one call, a percentile its mean cannot have, a
		// negative weight and a style there is not, all at once.
		name: "agent", yaml: "base: ideal\nagent:\n  calls_per_request: 0.5\n  calls_per_reply: 3\n  calls_per_reply_p99: 2\n  weights: {read: -1}\n  tool_call_style: json\n",
		want: []string{"agent.calls_per_request: 0.5 is not allowed: want a number ≥ 1 (0: the default)",
			"agent.calls_per_reply_p99: 2 is not allowed with agent.calls_per_reply 3: want a 99th percentile from 9 to 64 for that mean",
			"agent.weights.read: -1 is not allowed", `agent.tool_call_style: "json" is not allowed: want openai, repeat-ids, name-every-chunk, no-id`},
	}, {
		// An unknown key of the agent section names the section's keys.
		name: "agent key", yaml: "base: ideal\nagent:\n  calls_per_reqest: 3\n",
		want: []string{`unknown key "agent.calls_per_reqest": want one of calls_per_request, calls_per_request_p50, calls_per_reply, calls_per_reply_p99, allow, weights, tool_call_style`},
	}, {
		// A base keeps the agent keys a file does not set.
		name: "agent base", yaml: "base: dsv4-pd\nagent:\n  allow: [bash]\n",
		check: func(t *testing.T, p *Profile) {
			assert.Equal(t, Agent{CallsPerRequest: 8.8, CallsPerReply: 1.2, CallsPerReplyP99: 4, Allow: []string{"bash"}, ToolCallStyle: ToolCallsOpenAI}, p.Agent)
		},
	}, {
		// A base must be a built-in.
		name: "unknown base", yaml: "base: nope\n",
		want: []string{`base: "nope" is not allowed`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseProfile([]byte(tc.yaml), "test.yaml")
			if tc.want == nil {
				require.NoError(t, err)
				tc.check(t, p)
				return
			}
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Contains(t, err.Error(), "test.yaml: ")
		})
	}
}

// TestLoadProfileFile checks that a file path loads and that the file name names a profile
// that does not name itself.
func TestLoadProfileFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "slow-8b.yaml")
	require.NoError(t, os.WriteFile(path, []byte("base: vllm-llama3-8b-h100\ndecode_base: 9ms\n"), 0o644))
	p, err := LoadProfile(path)
	require.NoError(t, err)
	assert.Equal(t, "vllm-llama3-8b-h100", p.Name) // the base's name is kept
	assert.Equal(t, 9*time.Millisecond, p.DecodeBase)
	_, err = LoadProfile("nosuch")
	assert.ErrorContains(t, err, `unknown profile "nosuch": want one of dsv4-pd, ideal, vllm-llama3-8b-h100, or a profile file`)
}

// TestVLLMProfileFit checks the vLLM profile against the measurements its file cites: TPOT
// p50 6.48 ms at concurrency 1 and 10.94 ms at 16 (~500-token contexts), TTFT 14.0 ms for a
// ~250-token prompt alone (prefill, then the decode step that makes the first token).
func TestVLLMProfileFit(t *testing.T) {
	p, err := LookupProfile("vllm-llama3-8b-h100")
	require.NoError(t, err)
	assert.InEpsilon(t, 6.48, ms(p.DecodeStep(1, 500)), 0.05, "TPOT at concurrency 1, ms")
	assert.InEpsilon(t, 10.94, ms(p.DecodeStep(16, 16*500)), 0.05, "TPOT at concurrency 16, ms")
	ttft := p.PrefillStep([]int{250}, []int{0}, 0) + p.DecodeStep(1, 251)
	assert.InEpsilon(t, 14.0, ms(ttft), 0.1, "TTFT at concurrency 1, ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
