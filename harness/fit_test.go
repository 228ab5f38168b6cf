package harness

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/agents"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/workloads"
)

// loadWith loads a built-in workload with key=value overrides.
func loadWith(t *testing.T, name string, overrides ...string) *workloads.Workload {
	t.Helper()
	var over []workloads.Override
	for _, kv := range overrides {
		k, v, _ := strings.Cut(kv, "=")
		over = append(over, workloads.Override{Key: k, Value: v, Source: "--set"})
	}
	w, err := workloads.Load(workloads.LoadOptions{Workload: name, Overrides: over})
	require.NoError(t, err)
	return w
}

// TestFitContextKeepsEveryPlannedRequest: a fitted workload validates, every request it plans
// (its largest prompt with the largest output it reserves) passes the agents' context check,
// and what is sent (that prompt and the max_tokens sent) stays within the planned share of the
// window — whatever max_tokens is beside the outputs, forced or not.
func TestFitContextKeepsEveryPlannedRequest(t *testing.T) {
	for _, c := range []struct {
		name      string
		overrides []string
	}{
		// A max_tokens far above the prompts: scaled, it took more than half the window and
		// left max_context_tokens below it.
		{"max_tokens above the prompts", []string{"rounds=1"}},
		// Forced, the sampled length is sent; max_tokens is not, and scaled it passed
		// max_context_tokens.
		{"forced", []string{"rounds=1", "request.force_output_length=true"}},
		{"forced, 8 rounds", []string{"request.force_output_length=true"}},
		// A max_tokens below the outputs bounds them: the agents reserved the whole sampled
		// output and stopped before sending.
		{"max_tokens below the outputs", []string{"rounds=1", "request.max_tokens=1500"}},
		{"8 rounds", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			const window, budget = 8192, 7372 // fitMargin of the window
			w := loadWith(t, "ocbrowse", c.overrides...)
			fit, note, err := fitContext(w, window)
			require.NoError(t, err)
			require.NotEqual(t, "", note)
			require.NoError(t, fit.Validate())
			n := diagnose.NeedOf(fit)
			r := &fit.Request
			if diagnose.NeedOf(w).Prompt < w.Context.MaxContextTokens { // else agents stop there, fitted or not
				assert.LessOrEqual(t, n.Prompt+r.Reserved(diagnose.Upper(r.OutputTokens)), fit.Context.MaxContextTokens,
					"the largest planned prompt and output pass the agents' check: %s", note)
			}
			sent := r.MaxTokens
			if r.ForceOutputLength {
				sent = diagnose.Upper(r.OutputTokens)
			}
			assert.LessOrEqual(t, n.Prompt+sent, budget, "sent within the planned share: %s", note)
			// An admitted prompt with the least output it reserves, plus what is sent as
			// max_tokens, stays within the window too (forced, what is sent is what is reserved).
			if !r.ForceOutputLength {
				least := r.Reserved(diagnose.Lower(r.OutputTokens))
				assert.LessOrEqual(t, fit.Context.MaxContextTokens-least+sent, budget, note)
			}
		})
	}
}

// TestFitContextCapsMaxTokens: a max_tokens that would take more than half the planned window
// is capped there, said so, and the prompts are scaled to the rest.
func TestFitContextCapsMaxTokens(t *testing.T) {
	_, note, err := fitContext(loadWith(t, "ocbrowse", "rounds=1"), 8192)
	require.NoError(t, err)
	assert.Contains(t, note, "request.max_tokens 32768→3686 (capped at half the planned window)")
	assert.Contains(t, note, "context.max_context_tokens 131072→4156")
}

// TestFitContextTooSmall: a window that cannot hold one request of the workload, even scaled,
// is an error naming the key that fails and the smallest window that fits.
func TestFitContextTooSmall(t *testing.T) {
	w := loadWith(t, "smoke")
	_, _, err := fitContext(w, 20)
	var fe *FitError
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, err.Error(), "context fit (Options.FitContext): the server's window of 20 tokens cannot hold even one request of this workload scaled by ×")
	assert.Contains(t, err.Error(), "request.output_tokens: {dist: uniform, min: 0, max: 1} is not allowed")
	assert.Contains(t, err.Error(), "the smallest window it fits is 40 tokens")
	assert.Equal(t, 40, fe.Least, "FitError.Least")
	_, _, err = fitContext(w, 40)
	require.NoError(t, err)
	_, _, err = fitContext(w, 39)
	require.Error(t, err)
}

// TestReplayContextWarning: a replay is judged by its recorded requests — each prompt with the
// output it forces, or its own max_tokens, or the workload's — and its warning offers no
// --fit-context, which cannot scale recorded requests.
func TestReplayContextWarning(t *testing.T) {
	scripts := []*agents.Script{
		{Turns: []agents.Turn{{PromptTokens: 300, OutputTokens: 100}, {PromptTokens: 900, OutputTokens: 150}}},
		{Turns: []agents.Turn{{PromptTokens: 700, MaxTokens: 400}, {PromptTokens: 1000}}},
	}
	assert.Empty(t, scriptContextWarning(scripts, 64, 0, "max_model_len"), "no window known")
	assert.Empty(t, scriptContextWarning(scripts, 64, 1100, "max_model_len"), "every request fits")
	warn := scriptContextWarning(scripts, 64, 1000, "max_model_len")
	assert.Equal(t, "context: the server's context window is 1000 tokens (max_model_len), below what 3 of the 4 recorded requests ask "+
		"(the largest: a prompt of 700 tokens plus max_tokens 400 = 1100); the server will refuse them", warn)
	assert.NotContains(t, warn, "--fit-context")
}

// TestFitContextScalesMixtures: a mixture of output lengths is scaled part by part, and its
// upper end (its largest part's) is what the fit plans within the window.
func TestFitContextScalesMixtures(t *testing.T) {
	w := loadWith(t, "smoke", "request.output_tokens={dist: mixture, parts: [{weight: 0.9, dist: const, value: 20}, {weight: 0.1, dist: uniform, min: 100, max: 400}]}",
		"request.max_tokens=400")
	fit, note, err := fitContext(w, 1000)
	require.NoError(t, err)
	require.NotEmpty(t, note, "the workload is scaled")
	parts := fit.Request.OutputTokens.Parts
	require.Len(t, parts, 2)
	assert.Less(t, parts[0].Value, 20, "the const part is scaled")
	assert.Less(t, parts[1].Max, 400, "the uniform part is scaled")
	assert.Equal(t, 400, w.Request.OutputTokens.Parts[1].Max, "the workload fitted is not changed")
	assert.LessOrEqual(t, diagnose.NeedOf(fit).Total(), 1000, "the fitted workload's largest request fits")
}
