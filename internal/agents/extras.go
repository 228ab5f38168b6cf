package agents

import "context"

// Extras are the parts of a run that only agentsim's own commands set: bench's Tap on every
// request's frames, and replay's Scripts (one per agent, in agent order). They travel in the
// context handed to harness.Run, so that the public harness.Options carries no type of this
// internal package.
type Extras struct {
	Tap     Tap
	Scripts []*Script
}

type extrasKey struct{}

// WithExtras returns a copy of ctx that carries x to the run started with it.
func WithExtras(ctx context.Context, x Extras) context.Context {
	return context.WithValue(ctx, extrasKey{}, x)
}

// ExtrasFrom returns the Extras ctx carries; none (the zero value) for a run started by
// anyone else.
func ExtrasFrom(ctx context.Context) Extras {
	x, _ := ctx.Value(extrasKey{}).(Extras)
	return x
}
