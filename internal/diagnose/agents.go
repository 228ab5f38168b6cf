package diagnose

import (
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/agents"
)

// Agent states, the harness's own (agents.State, as samples.jsonl counts them), plus
// stateBusy for the instant between two steps of a round (a request ended, its permit not yet
// released…), which takes no time at all.
const (
	stateStarting   = string(agents.Starting)
	stateReading    = string(agents.Reading)
	statePacerWait  = string(agents.PacerWait)
	stateRequesting = string(agents.Requesting)
	stateBackoff    = string(agents.Backoff)
	stateThinking   = string(agents.Thinking)
	stateDone       = string(agents.Finished)
	stateBusy       = "busy"
)

// timed reports whether an agent in state s will move on by itself when a timer fires (start
// jitter, tool time, backoff, think time).
func timed(s string) bool { return agents.State(s).Timed() }

// agentView is what one agent is doing, as its events tell.
type agentView struct {
	state  string
	sinceS float64 // when it entered state, simulated seconds
	// request is the agent's open request while it is requesting; permit the pacer permit
	// it holds for its round, 0 when none.
	request string
	permit  uint64
}

// enter moves the agent to state s at t; staying in the same state keeps the older since.
func (v *agentView) enter(s string, t float64) {
	if v.state != s {
		v.state, v.sinceS = s, t
	}
}

// nextState returns the state an agent is in after event e, and whether e moves it at all.
func nextState(e events.Event) (string, bool) {
	switch e.Kind {
	case events.AgentStart:
		return stateStarting, true
	case events.RoundStart, events.ReadDone:
		return stateReading, true
	case events.PacerWait:
		return statePacerWait, true
	case events.RequestSent:
		return stateRequesting, true
	case events.Retry:
		return stateBackoff, true
	case events.AgentDone:
		return stateDone, true
	case events.RoundDone:
		if e.Outcome == "ok" {
			return stateThinking, true
		}
		return stateBusy, true
	case events.PacerAcquired, events.Done, events.Error, events.Timeout, events.Cancelled:
		return stateBusy, true
	}
	return "", false
}

// agent returns agent id's view, creating views up to id as needed. Agents never seen are
// starting (in their start jitter) since the run began.
func (a *Analyzer) agent(id int) *agentView {
	for len(a.agents) <= id {
		a.agents = append(a.agents, agentView{state: stateStarting})
	}
	return &a.agents[id]
}
