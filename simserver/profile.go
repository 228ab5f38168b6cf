package simserver

import "github.com/agentsim/agentsim/internal/engine"

// The engine model behind the server lives in internal/engine (docs/engine.md); these are the
// names a user of the simulator builds on: a profile, the faults, and the engine's gauges.
type (
	// Profile is an engine model: its phases' timing, capacity and limits (docs/engine.md).
	Profile = engine.Profile
	// Faults are the injected faults a server draws each request's fate from.
	Faults = engine.Faults
	// FirstByte says when a stream's HTTP head goes out: at admission or with the first token.
	FirstByte = engine.FirstByte
	// Stats is a snapshot of the engine's gauges and counters.
	Stats = engine.Stats
	// FaultError is one problem of the faults ParseFaults is given: a fault name it does not
	// know, or a fault parameter it cannot apply.
	FaultError = engine.FaultError
)

// When a stream's head goes out (Profile.FirstByte).
const (
	// FirstByteAtAdmission sends the head and the role chunk once the request is admitted.
	FirstByteAtAdmission = engine.FirstByteAtAdmission
	// FirstByteAtToken sends nothing, not even the head, until the first token.
	FirstByteAtToken = engine.FirstByteAtToken
)

// DefaultProfile names the profile a server runs when none is given: the incident's SGLang
// prefill/decode pair.
const DefaultProfile = engine.DefaultProfile

// ErrUnknownProfile is the error LookupProfile and LoadProfile wrap for a name that is no
// built-in profile.
var ErrUnknownProfile = engine.ErrUnknownProfile

// ProfileNames lists the built-in profiles, sorted.
func ProfileNames() []string { return engine.ProfileNames() }

// FaultNames lists the fault names ParseFaults accepts, sorted.
func FaultNames() []string { return engine.FaultNames() }

// DSV4PD returns the default profile, calibrated to the incident's deployment.
func DSV4PD() *Profile { return engine.DSV4PD() }

// Ideal returns the profile for testing a harness alone: every decode step takes 20 ms whatever
// the load, slots and KV are effectively unlimited, prefill and transfer take no time.
func Ideal() *Profile { return engine.Ideal() }

// LookupProfile returns the built-in profile called name.
func LookupProfile(name string) (*Profile, error) { return engine.LookupProfile(name) }

// LoadProfile returns the built-in profile called nameOrPath, or reads the YAML file at that
// path.
func LoadProfile(nameOrPath string) (*Profile, error) { return engine.LoadProfile(nameOrPath) }

// ParseProfile reads a profile from YAML; source names it in errors.
func ParseProfile(data []byte, source string) (*Profile, error) {
	return engine.ParseProfile(data, source)
}

// ParseFaults builds the faults named in names, each with its "name.key=value" params, drawing
// each request's fate from seed. It reports every problem at once, joined: an unknown name or
// a parameter it cannot apply as a *FaultError.
func ParseFaults(names, params []string, seed uint64) (*Faults, error) {
	return engine.ParseFaults(names, params, seed)
}
