package harness

import (
	"fmt"
	"strings"

	"github.com/agentsim/agentsim/internal/plural"
)

// ModelSource says where the model name a run sends came from.
type ModelSource string

// The model sources, as results.json's server.model_source records them.
const (
	// ModelFromWorkload: the workload's model key (its file, --config, --set model=…, --model),
	// which the server serves or whose list was unreadable.
	ModelFromWorkload ModelSource = "workload"
	// ModelFromServer: the workload named no model the server serves, and the server serves
	// exactly one (or, for bench without --model, the first it lists): that one is sent.
	ModelFromServer ModelSource = "server"
)

// ModelChoice is the model a run sends and why.
type ModelChoice struct {
	// Name is the model name every request sends.
	Name string
	// Source says where Name came from.
	Source ModelSource
	// Note says, in one line, why Name is not the workload's model; "" when it is.
	Note string
	// ContextWindow is the context window of one request to the served model in tokens, 0
	// when the server did not list one; ContextSource names the /v1/models field it was read
	// from (results.FromMaxModelLen, results.FromMetaNCtx).
	ContextWindow int
	ContextSource string
}

// choiceOf returns the choice of m, with its context window.
func choiceOf(m ServedModel, source ModelSource, note string) ModelChoice {
	window, from := m.ContextWindow()
	return ModelChoice{Name: m.ID, Source: source, Note: note, ContextWindow: window, ContextSource: from}
}

// ModelError is a model choice the harness refuses to make: the model asked for is not served
// and the server serves several, or the user named the model and the server does not serve
// it. It is a configuration error (the command line exits 2).
type ModelError struct {
	// Want is the model asked for; Pinned says the user named it.
	Want   string
	Pinned bool
	// Served lists the models the server serves, in its order.
	Served []string
	// Server is the server's URL.
	Server string
}

// Error names the model asked for, lists the served ones, and the setting that chooses.
func (e *ModelError) Error() string {
	return e.Unserved() + " — choose one with the workload key model"
}

// Unserved says which model is not served and which are, without saying how to choose: for a
// caller that names its own way of setting the model (the command line's --model).
func (e *ModelError) Unserved() string {
	return fmt.Sprintf("model %q is not served by %s; it serves %d model%s: %s",
		e.Want, e.Server, len(e.Served), plural.S(len(e.Served)), strings.Join(e.Served, ", "))
}

// ChooseModel picks the model name a run sends: want (the workload's model; "" for no
// preference) when the server serves it or lists nothing readable; otherwise, unless pinned
// (the user named want), the one model the server serves — or, with no preference, the first
// it lists. Any other case is a *ModelError. served may be nil: nothing is known, want is sent
// as is. It is the one place a run, compare and bench decide the model.
func ChooseModel(want string, pinned bool, served *Served, server string) (ModelChoice, error) {
	ids := served.IDs()
	if m, ok := served.find(want); ok {
		return choiceOf(m, ModelFromWorkload, ""), nil
	}
	switch {
	case len(ids) == 0 && want != "":
		return ModelChoice{Name: want, Source: ModelFromWorkload}, nil
	case len(ids) == 0:
		return ModelChoice{Name: fallbackModel, Source: ModelFromServer,
			Note: fmt.Sprintf("model: the server lists no model; sending %q", fallbackModel)}, nil
	case want == "":
		m, note := served.Models[0], ""
		if len(ids) > 1 {
			note = fmt.Sprintf("model: sending %s, the first of the %d models the server serves (%s); choose with --model", m.ID, len(ids), strings.Join(ids, ", "))
		}
		return choiceOf(m, ModelFromServer, note), nil
	case len(ids) == 1 && !pinned:
		m := served.Models[0]
		return choiceOf(m, ModelFromServer,
			fmt.Sprintf("model: the server does not serve the workload's model %s; it serves one model, %s: sending that (choose with --model)", want, m.ID)), nil
	}
	return ModelChoice{}, &ModelError{Want: want, Pinned: pinned, Served: ids, Server: server}
}

// fallbackModel is sent when nothing names a model: no preference and a server that lists
// none (servers that serve one model, as SGLang does, accept any name).
const fallbackModel = "default"
