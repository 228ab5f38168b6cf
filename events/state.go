package events

// State is what an agent is doing. The strings are the keys of a sample's agents counts in
// samples.jsonl.
type State string

// The agent states, in the order a round passes through them.
const (
	StateStarting   State = "starting"   // start jitter, before the first round
	StateReading    State = "reading"    // tool time of the read step
	StatePacerWait  State = "pacer_wait" // blocked in the pacer
	StateRequesting State = "requesting" // a request is in flight
	StateTool       State = "tool"       // running the tool calls of a reply
	StateBackoff    State = "backoff"    // waiting before a retry
	StateThinking   State = "thinking"   // think time after a response
	StateDone       State = "done"       // the agent has finished
)

// Timed reports whether an agent in state s moves on by itself when a timer fires (start
// jitter, tool time, tool calls, backoff, think time), as opposed to waiting on the pacer or
// the server.
func (s State) Timed() bool {
	return s == StateStarting || s == StateReading || s == StateTool || s == StateBackoff || s == StateThinking
}
