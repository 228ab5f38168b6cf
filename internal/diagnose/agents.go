package diagnose

import (
	"github.com/agentsim/agentsim/events"
)

// stateBusy is the diagnosis's own agent state for the instant between two steps of a round
// (a request ended, its permit not yet released…), which takes no time at all; the others are
// the harness's (events.State, as samples.jsonl counts them).
const stateBusy events.State = "busy"

// agentView is what one agent is doing, as its events tell.
type agentView struct {
	state  events.State
	sinceS float64 // when it entered state, simulated seconds
	// request is the agent's open request while it is requesting; permit the pacer permit
	// it holds for its round, 0 when none.
	request string
	permit  uint64
	// failed is how the agent's latest attempt failed, "" when it did not; roundsSent
	// counts the rounds whose request it sent; ended is why it gave up before a round's
	// request ("" when it did not).
	failed     string
	roundsSent int
	ended      events.EndReason
}

// enter moves the agent to state s at t; staying in the same state keeps the older since.
func (v *agentView) enter(s events.State, t float64) {
	if v.state != s {
		v.state, v.sinceS = s, t
	}
}

// nextState returns the state an agent is in after event e, and whether e moves it at all.
func nextState(e events.Event) (events.State, bool) {
	switch e.Kind {
	case events.AgentStart:
		return events.StateStarting, true
	case events.RoundStart, events.ReadDone:
		return events.StateReading, true
	case events.PacerWait:
		return events.StatePacerWait, true
	case events.RequestSent:
		return events.StateRequesting, true
	case events.Retry:
		return events.StateBackoff, true
	case events.ToolCall, events.ToolResult:
		return events.StateTool, true
	case events.AgentDone:
		return events.StateDone, true
	case events.RoundDone:
		switch e.Outcome {
		case events.RoundOK:
			return events.StateThinking, true
		case events.RoundCancelled:
			// The agent_done that follows at once ends the agent where it stood (a pacer wait
			// the stop abandoned is told by the agent's state then).
			return "", false
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
		a.agents = append(a.agents, agentView{state: events.StateStarting})
	}
	return &a.agents[id]
}
