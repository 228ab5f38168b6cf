package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/agentsim/agentsim/agents"
)

// Arrivals is how the requests of an open-loop test are spread in time.
type Arrivals string

// The arrival processes of an open-loop test.
const (
	// Poisson draws each gap between two sends from an exponential distribution of mean
	// 1/rate (vegeta's and vllm bench serve's default with a rate): bursts and lulls, as
	// independent users make them.
	Poisson Arrivals = "poisson"
	// Constant sends one request every 1/rate exactly.
	Constant Arrivals = "constant"
)

// ArrivalKinds lists the arrival processes, in the order help texts name them.
var ArrivalKinds = []Arrivals{Poisson, Constant}

// MinRate and MaxRate bound an open-loop test's rate, in requests per simulated second: below
// one request in about 17 minutes a test is not a load, and above a million a second no
// client keeps the schedule.
const (
	MinRate = 0.001
	MaxRate = 1e6
)

// MaxOpenRequests is the most requests an open-loop test sends: each is an agent of its own,
// and a run has at most 10,000 agents.
const MaxOpenRequests = 10000

// OpenLoop is an open-loop test: requests sent at Rate per simulated second whatever the
// server does with the earlier ones — the load of vegeta's attack, k6's constant-arrival-rate
// and vllm bench serve's --request-rate — until Duration has passed or Requests have been
// sent, whichever comes first (0: that bound is unset; at least one must be set).
type OpenLoop struct {
	// Rate is the mean number of requests sent per simulated second.
	Rate float64
	// Arrivals is Poisson or Constant.
	Arrivals Arrivals
	// Duration is the simulated time over which requests are sent (the last one before it).
	Duration time.Duration
	// Requests is how many requests are sent.
	Requests int
}

// String describes the load: "10 requests/s, poisson arrivals, for 30s".
func (l *OpenLoop) String() string {
	s := fmt.Sprintf("%g requests/s, %s arrivals", l.Rate, l.Arrivals)
	switch {
	case l.Requests > 0 && l.Duration > 0:
		s += fmt.Sprintf(", %d requests or %s, whichever comes first", l.Requests, l.Duration)
	case l.Requests > 0:
		s += fmt.Sprintf(", %d requests", l.Requests)
	default:
		s += ", for " + l.Duration.String()
	}
	return s
}

// Validate reports every field out of range at once, each naming the field, its value and
// what is allowed, and a load that would send more than MaxOpenRequests.
func (l *OpenLoop) Validate() error {
	var bad []error
	if !(l.Rate >= MinRate && l.Rate <= MaxRate) {
		bad = append(bad, fmt.Errorf("rate %g is not allowed: want requests per second from %g to %g", l.Rate, MinRate, MaxRate))
	}
	if l.Arrivals != Poisson && l.Arrivals != Constant {
		bad = append(bad, fmt.Errorf("arrivals %q is not allowed: want %s or %s", l.Arrivals, Poisson, Constant))
	}
	if l.Duration < 0 {
		bad = append(bad, fmt.Errorf("duration %s is not allowed: want a duration > 0", l.Duration))
	}
	if l.Requests < 0 || l.Requests > MaxOpenRequests {
		bad = append(bad, fmt.Errorf("requests %d is not allowed: want a whole number from 1 to %d", l.Requests, MaxOpenRequests))
	}
	if l.Duration <= 0 && l.Requests <= 0 {
		bad = append(bad, errors.New("an open-loop test needs a duration or a number of requests: none given"))
	}
	if len(bad) == 0 && l.Requests == 0 && l.Rate*l.Duration.Seconds() > MaxOpenRequests {
		bad = append(bad, fmt.Errorf("rate %g × duration %s is %.0f requests: want at most %d (a lower rate, a shorter duration, or a number of requests)",
			l.Rate, l.Duration, l.Rate*l.Duration.Seconds(), MaxOpenRequests))
	}
	return errors.Join(bad...)
}

// Schedule returns the send times of the test's requests, from its start, in order: the
// first at 0, then gaps of 1/Rate (Constant) or drawn from seed (Poisson), until Duration or
// Requests ends it — never more than MaxOpenRequests.
func (l *OpenLoop) Schedule(seed int64) []time.Duration {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6f70656e)) // "open": its own stream of the seed
	var at []time.Duration
	t := 0.0
	for len(at) < MaxOpenRequests && (l.Requests == 0 || len(at) < l.Requests) {
		d := time.Duration(t * float64(time.Second))
		if l.Duration > 0 && d >= l.Duration {
			break
		}
		at = append(at, d)
		gap := 1 / l.Rate
		if l.Arrivals == Poisson {
			gap = rng.ExpFloat64() / l.Rate
		}
		t += gap
	}
	return at
}

// scripts makes the schedule into one agent per request, each sending its one request at
// its time: a prompt of its own of promptTokens and exactly maxTokens output tokens.
func scripts(at []time.Duration, promptTokens, maxTokens int) []*agents.Script {
	out := make([]*agents.Script, len(at))
	for i, t := range at {
		out[i] = &agents.Script{Open: true, Turns: []agents.Turn{{At: t, PromptTokens: promptTokens, Extends: -1,
			OutputTokens: maxTokens, MaxTokens: maxTokens}}}
	}
	return out
}
