package cli

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/internal/fakeserver"
)

// vllmLike is a vLLM-shaped server serving one model, model, with context window window
// (listed as max_model_len): any other model name gets vLLM's 404, a longer request its 400,
// and every request 8 content tokens.
func vllmLike(t *testing.T, model string, window int) *httptest.Server {
	f := &fakeserver.Server{Models: []string{model}, MaxModelLen: window, Window: window, Tokens: 8, FixedTokens: true}
	return f.Start(t)
}

// quickSmoke makes smoke quick on a real clock: one round per agent, no pauses, and output
// lengths that match the server's 8 tokens.
var quickSmoke = []string{"--workload", "smoke", "--rounds", "1", "--set", "start_jitter=0s", "--set", "tool_time=0s",
	"--set", "think_time=0s", "--set", "request.force_output_length=false", "--set", "request.output_tokens=8"}

// TestRunAgainstAServerOfAnotherModel: run and compare against a server that serves another
// model send that one and say so, with no --set model; --model names the model, and one the
// server does not serve is a usage error listing what it serves; --fit-context fits the
// workload to the window it lists.
func TestRunAgainstAServerOfAnotherModel(t *testing.T) {
	ts := vllmLike(t, "some/model", 8192)
	small := vllmLike(t, "some/model", 600)
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  []string // each in stdout (or stderr for a usage error)
	}{
		// The workload's model is not served; the one served is sent.
		{"run", append([]string{"run", "--server", ts.URL}, quickSmoke...), ExitOK, []string{
			"model: the server does not serve the workload's model deepseek-v4-flash; it serves one model, some/model: sending that (choose with --model)",
			"model         some/model (from the server; context window 8192 tokens)", "verdict       healthy"}},
		// --model names the served model: nothing to say.
		{"run --model", append([]string{"run", "--server", ts.URL, "--model", "some/model"}, quickSmoke...), ExitOK, []string{
			"model         some/model (from the workload; context window 8192 tokens)"}},
		// --model names a model the server does not serve: refused before the run.
		{"run --model unserved", append([]string{"run", "--server", ts.URL, "--model", "deepseek-v4-flash"}, quickSmoke...), ExitUsage, []string{
			`model "deepseek-v4-flash" is not served by ` + ts.URL + `; it serves 1 model: some/model — choose one with --model NAME`}},
		// compare: both parts send the served model, said once.
		{"compare", append([]string{"compare", "--server", ts.URL, "--concurrency", "2", "--max-tokens", "8"}, quickSmoke...), ExitOK, []string{
			"model: the server does not serve the workload's model deepseek-v4-flash; it serves one model, some/model: sending that"}},
		// A window of 600 tokens: --fit-context scales smoke to it.
		{"run --fit-context", append([]string{"run", "--server", small.URL, "--fit-context"}, quickSmoke...), ExitOK, []string{
			"context: fitted to the server's window of 600 tokens", "verdict       healthy"}},
		// --fit-context=TOKENS for a server that lists no window.
		{"run --fit-context=600", append([]string{"run", "--server", small.URL, "--fit-context=600"}, quickSmoke...), ExitOK, []string{
			"context: fitted to the server's window of 600 tokens"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(tc.args, "--out", t.TempDir())
			code, out, errOut := execute(t, args...)
			assert.Equal(t, tc.code, code, "agentsim %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out, errOut)
			for _, want := range tc.out {
				assert.Contains(t, out+errOut, want)
			}
			if tc.name == "compare" {
				assert.Equal(t, 1, strings.Count(out, "\nmodel: the server does not serve"), "said once before the parts:\n%s", out)
			}
		})
	}
}
