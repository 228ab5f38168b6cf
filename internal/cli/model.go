package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/workloads"
)

// fitConfig is the setting that fits a workload to the server's context window (run,
// compare): see addFitFlag.
type fitConfig struct {
	FitContext int `mapstructure:"fit-context"`
}

// addFitFlag adds --fit-context[=TOKENS]: bare, it fits the window the server lists on
// /v1/models (harness.FitToServer); with a value, that many tokens.
func addFitFlag(f *pflag.FlagSet) {
	f.Int("fit-context", 0, "scale the workload's context keys and output lengths to fit the server's context window "+
		"(max_model_len from /v1/models, else llama.cpp's per-slot meta.n_ctx), or --fit-context=TOKENS")
	f.Lookup("fit-context").NoOptDefVal = "-1"
}

// modelPinned reports whether the user named the model — --model, --set model=… or
// AGENTSIM_MODEL — so that a server which does not serve it is an error rather than a reason
// to send the one it serves.
func modelPinned(o *overrides, env []string) bool {
	for _, ov := range o.list {
		if ov.Key == "model" {
			return true
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, workloads.EnvName("model")+"=") {
			return true
		}
	}
	return false
}

// harnessError marks an error of a harness run or bench, saying which flag sets what it
// names: a model or context fit the harness refused is a configuration error (exit 2), naming
// --model or --fit-context; anything else a runtime failure (exit 1), a server that wants an
// API key naming --api-key.
func harnessError(err error) error {
	var me *harness.ModelError
	var fe *harness.FitError
	switch {
	case errors.As(err, &me):
		return usageError(fmt.Errorf("%s — choose one with --model NAME (the workload key model)", me.Unserved()))
	case errors.As(err, &fe) && fe.Unknown:
		return usageError(fmt.Errorf("--fit-context: %w, --fit-context=TOKENS", fe.Err))
	case errors.As(err, &fe) && fe.Least > 0:
		return usageError(fmt.Errorf("--fit-context: %w (--fit-context=%d)", fe.Err, fe.Least))
	case errors.As(err, &fe):
		return usageError(fmt.Errorf("--fit-context: %w", fe.Err))
	case errors.Is(err, harness.ErrKeyRequired):
		return runtimeError(fmt.Errorf("%w; give it with --api-key or AGENTSIM_API_KEY", err))
	}
	return runtimeError(err)
}
