package harness

import (
	"fmt"

	"github.com/agentsim/agentsim/agents"
)

// FitError is a --fit-context the harness cannot honour: no window known, or one too small
// for the workload. It is a configuration error (the command line exits 2).
type FitError struct{ Err error }

// Error is Err's message.
func (e *FitError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *FitError) Unwrap() error { return e.Err }

// prepared is what prepare settled besides the options: the notes the run records — why the
// model is not the workload's, the fit made, or a window the workload does not fit — how many
// of them, from the start, the caller has said already (a model chosen before the run is the
// caller's to say), and whether one said the workload does not fit the window.
type prepared struct {
	notes         []string
	said          int
	contextWarned bool
	// fitted is the window, in tokens, the workload was fitted to with --fit-context; 0 without.
	fitted int
}

// prepare settles what the run sends before anything is written: the model (Options.Model, or
// chosen from the workload's model and Served) and, with FitContext, the workload fitted to the
// server's context window; scripts, replay's recorded sessions (nil otherwise), are what a
// window too small is judged against. It returns o with a copy of the workload carrying both and
// Options.Model set.
func prepare(o Options, scripts []*agents.Script) (Options, prepared, error) {
	var p prepared
	choice := o.Model
	if choice == nil {
		c, err := ChooseModel(o.Workload.Model, o.PinModel, o.Served, o.Target.URL)
		if err != nil {
			return o, p, err
		}
		choice = &c
	}
	w := *o.Workload
	w.Model = choice.Name
	if choice.Note != "" {
		p.notes = append(p.notes, choice.Note)
		if o.Model != nil {
			p.said = 1
		}
	}
	window := choice.ContextWindow
	if o.FitContext > 0 {
		window = o.FitContext
	}
	switch {
	case o.FitContext != 0 && window <= 0:
		return o, p, &FitError{fmt.Errorf("--fit-context: the server lists no context window (max_model_len, or llama.cpp's meta.n_ctx) for model %s: give it in tokens, --fit-context=TOKENS", w.Model)}
	case o.FitContext != 0:
		fit, note, err := fitContext(&w, window)
		if err != nil {
			return o, p, &FitError{err}
		}
		if note == "" {
			note = fmt.Sprintf("context: the workload fits the window of %d tokens as it is (--fit-context changed nothing)", window)
		}
		w, p.fitted = *fit, window
		p.notes = append(p.notes, note)
	default:
		warn := contextWarning(&w, window, choice.ContextSource)
		if scripts != nil {
			warn = scriptContextWarning(scripts, w.Request.MaxTokens, window, choice.ContextSource)
		}
		if warn != "" {
			p.notes, p.contextWarned = append(p.notes, warn), true
		}
	}
	o.Workload, o.Model = &w, choice
	return o, p, nil
}
