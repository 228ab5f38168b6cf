package diagnose

import (
	"fmt"
	"strings"
)

// Guard is one timeout of a harness family that can end a request whose stream went silent,
// with its default (docs/timeouts.md).
type Guard struct {
	// Name is the guard as the harness names it: "timeout", "stream_idle_timeout_ms".
	Name string
	// AfterS is its default, in seconds.
	AfterS float64
	// Idle says the timer restarts with every byte (an idle timeout: a drip of bytes never
	// fires it); otherwise it counts from the request's start.
	Idle bool
	// HeadersOnly says it ends only a wait for the response headers: a stream whose headers
	// came is beyond it.
	HeadersOnly bool
	// Retries is how many times the harness re-sends the request after it fires.
	Retries int
}

// Family is a harness or client library, told by its User-Agent, and its default guards
// against a silent stream.
type Family struct {
	// Name is how evidence names it.
	Name string
	// UserAgent is a piece of the User-Agent header that only this family sends (compared
	// without case).
	UserAgent string
	// Guards are its default guards, shortest first; none means nothing of the harness ends
	// a silent stream unless it was configured to.
	Guards []Guard
}

// Atlas is the timeout atlas: the families agentsim tells apart, most specific first (opencode
// and the Agents SDK send the User-Agents of the libraries inside them too). docs/timeouts.md
// gives each default's source and how it was checked.
var Atlas = []Family{
	{Name: "opencode", UserAgent: "opencode/", Guards: []Guard{{Name: "provider timeout", AfterS: 300, Retries: 5}}},
	{Name: "Codex", UserAgent: "codex", Guards: []Guard{{Name: "stream_idle_timeout_ms", AfterS: 300, Idle: true, Retries: 5}}},
	{Name: "the OpenAI Agents SDK (JS)", UserAgent: "agents/javascript", Guards: nodeSDKGuards},
	{Name: "the AI SDK (openai-compatible)", UserAgent: "ai-sdk/", Guards: []Guard{undiciBody}},
	{Name: "the OpenAI Node SDK", UserAgent: "openai/js", Guards: nodeSDKGuards},
	{Name: "the OpenAI Python SDK", UserAgent: "openai/python", Guards: []Guard{{Name: "timeout (httpx read)", AfterS: 600, Idle: true, Retries: 2}}},
	{Name: "go-openai", UserAgent: "go-http-client/"},
}

// undiciBody is Node's fetch's own guard: the body timeout, 300 s without a byte.
var undiciBody = Guard{Name: "undici bodyTimeout", AfterS: 300, Idle: true}

// nodeSDKGuards are the OpenAI Node SDK's: its timeout covers the wait for headers only, and
// then undici's body timeout is the guard.
var nodeSDKGuards = []Guard{undiciBody, {Name: "timeout", AfterS: 600, HeadersOnly: true, Retries: 2}}

// FamilyOf returns the family whose User-Agent ua is, and false when none is known.
func FamilyOf(ua string) (Family, bool) {
	low := strings.ToLower(ua)
	for _, f := range Atlas {
		if strings.Contains(low, f.UserAgent) {
			return f, true
		}
	}
	return Family{}, false
}

// streamGuard returns the family's first guard that can end a stream whose headers came, and
// false when it has none.
func (f Family) streamGuard() (Guard, bool) {
	for _, g := range f.Guards {
		if !g.HeadersOnly {
			return g, true
		}
	}
	return Guard{}, false
}

// silentLine says which guard of the family would end a stream silent for silenceS, and when.
func (f Family) silentLine(ua string, silenceS float64) string {
	g, ok := f.streamGuard()
	if !ok {
		return fmt.Sprintf("no guard of this harness (%s, User-Agent %q) ends a silent stream by default: only the server, or a timeout the harness was configured with, can end it", f.Name, ua)
	}
	when := "it fires after " + secs(g.AfterS) + " without a byte (reset by any byte, so a drip never fires it)"
	if !g.Idle {
		when = "it fires " + secs(g.AfterS) + " after the request was sent"
	}
	retries := ""
	if g.Retries > 0 {
		retries = fmt.Sprintf(", then the harness retries up to %d times", g.Retries)
	}
	state := fmt.Sprintf("the longest silence is %s, so none has fired yet", secs(silenceS))
	if silenceS >= g.AfterS {
		state = fmt.Sprintf("the longest silence, %s, has passed it", secs(silenceS))
	}
	return fmt.Sprintf("no guard of this harness (%s, User-Agent %q) ends a silent stream before %s: its %s — %s%s; %s", f.Name, ua, secs(g.AfterS), g.Name, when, retries, state)
}

// firedGuard names the guard of the family whose default matches a silence of silenceS that
// ended in the harness's own retry (within 10 %), or says none of its defaults does.
func (f Family) firedGuard(silenceS float64) string {
	for _, g := range f.Guards {
		if silenceS >= 0.95*g.AfterS && silenceS <= 1.1*g.AfterS {
			return fmt.Sprintf("%s's %s (default %s) fired", f.Name, g.Name, secs(g.AfterS))
		}
	}
	if len(f.Guards) == 0 {
		return fmt.Sprintf("%s has no default guard: a timeout the harness was configured with, ≈ %s, fired", f.Name, secs(silenceS))
	}
	return fmt.Sprintf("none of %s's defaults (%s) is ≈ %s: a timeout the harness was configured with fired", f.Name, f.defaults(), secs(silenceS))
}

// defaults lists the family's default guards.
func (f Family) defaults() string {
	var out []string
	for _, g := range f.Guards {
		out = append(out, g.Name+" "+secs(g.AfterS))
	}
	return strings.Join(out, ", ")
}
