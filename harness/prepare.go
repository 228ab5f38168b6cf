package harness

import (
	"context"
	"fmt"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// FitError is a context fit (Options.FitContext) the harness cannot honour: no window known,
// or one too small for the workload. It is a configuration error (the command line exits 2).
type FitError struct {
	// Err says why.
	Err error
	// Unknown says no window was known: the server lists none, and FitContext gave none.
	Unknown bool
	// Least is the smallest window, in tokens, the workload fits when the one known is too
	// small; 0 when none does, or no window was known.
	Least int
}

// Error names the setting, Options.FitContext, and says why.
func (e *FitError) Error() string { return "context fit (Options.FitContext): " + e.Err.Error() }

// Unwrap returns Err.
func (e *FitError) Unwrap() error { return e.Err }

// Prepared is a run settled with its server before it starts (see Prepare): what it sends,
// the clock it runs on, and the notes it records. A run takes it in Options.Prepared.
type Prepared struct {
	// Served is what the server said on GET /v1/models; nil when it was not asked
	// (RunChecked without Options.Served).
	Served *Served
	// Model is the model every request sends and why; Model.Note, when set, is the first
	// note the run records.
	Model ModelChoice
	// Workload is the workload as the run sends it: a copy of Options.Workload carrying
	// Model.Name and, with Options.FitContext, fitted to the server's context window.
	Workload *workloads.Workload
	// Clock is the clock the run runs on: Options.Clock, or, when that is nil, one at the
	// speedup the server advertises (Adopted), else real time.
	Clock *clock.Clock
	// Adopted says Clock is the server's: Options.Clock was nil and the server, an agentsim
	// server, advertises a speedup above 1 (Served.Speedup), which the run's timeouts, think
	// and tool times and watchdog must run at.
	Adopted bool
	// Notes are what the run records of the context window after Model.Note: the fit made,
	// or that the workload does not fit the server's window.
	Notes []string

	// fitted is the window, in tokens, the workload was fitted to; 0 when it was not.
	fitted int
}

// Said returns every note the run records before it starts, in order: Model.Note, when set,
// then Notes. A console says them before the run.
func (p *Prepared) Said() []string {
	if p.Model.Note == "" {
		return p.Notes
	}
	return append([]string{p.Model.Note}, p.Notes...)
}

// Prepare settles with the server what a run of o sends, before anything is written, in one
// step: it asks GET /v1/models once (AskServer, within CheckTimeout) unless o.Served carries
// the answer; takes the model o.Model chose already, or chooses it (ChooseModel of the
// workload's model, o.PinModel, o.AnyModel); with o.FitContext fits the workload to the
// server's context window; and, when o.Clock is nil, makes the clock at the speedup an
// agentsim server advertises. A command that makes several runs prepares the first and
// passes its Served and Model to the others. The error is AskServer's (the server
// unreachable, the key refused, a speedup header that is none), a *ModelError or a *FitError.
func Prepare(ctx context.Context, o Options) (*Prepared, error) {
	served := o.Served
	if served == nil {
		hc := o.HTTPClient
		if hc == nil {
			hc = NewHTTPClient(1)
			defer hc.CloseIdleConnections() // ours: no connection outlives the question
		}
		s, err := AskServer(ctx, hc, o.Target.URL, o.Target.APIKey, CheckTimeout)
		if err != nil {
			return nil, err
		}
		served = s
	}
	return settle(o, served)
}

// settle is Prepare once the server's answer is known; served may be nil: nothing is known,
// the workload is sent as it is.
func settle(o Options, served *Served) (*Prepared, error) {
	p := &Prepared{Served: served, Clock: o.Clock}
	if p.Clock == nil {
		p.Clock, p.Adopted = served.clock()
	}
	if o.Model != nil {
		p.Model = *o.Model
	} else {
		want := o.Workload.Model
		if o.AnyModel {
			want = ""
		}
		c, err := ChooseModel(want, o.PinModel, served, o.Target.URL)
		if err != nil {
			return nil, err
		}
		p.Model = c
	}
	w := *o.Workload
	w.Model = p.Model.Name
	if err := p.fit(&w, o); err != nil {
		return nil, err
	}
	p.Workload = &w
	return p, nil
}

// fit settles the context of w, the workload sent, with the server's window: fitted to it
// with o.FitContext, else a note when w does not fit it. o.Scripts, replay's recorded
// sessions (nil otherwise), are what a window too small is judged against.
func (p *Prepared) fit(w *workloads.Workload, o Options) error {
	window, from := p.Model.ContextWindow, p.Model.ContextSource
	if o.FitContext > 0 {
		window = o.FitContext
	}
	switch {
	case o.FitContext != 0 && window <= 0:
		return &FitError{Unknown: true,
			Err: fmt.Errorf("the server lists no context window (max_model_len, or llama.cpp's meta.n_ctx) for model %s: give it in tokens", w.Model)}
	case o.FitContext != 0:
		fit, note, err := fitContext(w, window)
		if err != nil {
			return err
		}
		if note == "" {
			note = fmt.Sprintf("context: the workload fits the window of %d tokens as it is (--fit-context changed nothing)", window)
		}
		*w, p.fitted = *fit, window
		p.Notes = append(p.Notes, note)
		if o.FitContext == FitToServer && from == results.FromMetaNCtx && w.Agents > 1 {
			p.Notes = append(p.Notes, sharedPoolWarning(w.Agents, window))
		}
	default:
		warn := contextWarning(w, window, from)
		if o.Scripts != nil {
			warn = scriptContextWarning(o.Scripts, w.Request.MaxTokens, window, from)
		}
		if warn != "" {
			p.Notes = append(p.Notes, warn)
		}
	}
	return nil
}
