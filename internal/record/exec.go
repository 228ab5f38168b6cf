package record

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/diagnose"
	"github.com/agentsim/agentsim/results"
)

// procView is the Watcher's view of a proxy whose requests name their process (agentsim
// exec, WatchOptions.AgentOf): agents are the processes, each numbering its requests' rounds
// across its lanes, and a request that re-sends a failed request's messages is that
// request's retry — the same round, the next attempt, after a retry event that says how long
// the failed attempt had been silent. A failed request's round_done waits until the agent's
// next request shows it was the round's last attempt (a request that is not its retry, or the
// process's exit): a round the harness retried to success is not a failed round, as
// events.RoundFailed promises. Callers hold the Watcher's lock.
type procView struct {
	agentOf       func(string) (int, bool)
	seen          map[string]int     // sessions AgentOf does not name → agents after the processes
	ids           map[uint64]roundID // request (Seen.ID) → its round and attempt
	rounds        map[int]int        // agent → its latest round
	failed        map[int]failure    // agent → its latest failed request, until the next one ends
	exited        map[int]bool       // agents whose process exited
	started, gone int
	agents        int // the processes (Agents), for the sample's states
}

// roundID is a request's agent, round and attempt.
type roundID struct{ agent, round, attempt int }

// failure is a failed request a retry may repeat: its round and attempt, when it ended and how
// long it had been silent then, in seconds, and its round's round_done, held until the round
// is known to have failed.
type failure struct {
	round, attempt int
	endS, silenceS float64
	class          events.Class
	roundDone      events.Event
}

func newProcView(agentOf func(string) (int, bool)) *procView {
	return &procView{agentOf: agentOf, seen: map[string]int{}, ids: map[uint64]roundID{}, rounds: map[int]int{}, failed: map[int]failure{},
		exited: map[int]bool{}}
}

// agent returns session's agent: the process that sent it, or for a request no process
// named (a path without the agent prefix), an agent after the processes.
func (p *procView) agent(session string) int {
	if id, ok := p.agentOf(strings.SplitN(session, "~", 2)[0]); ok {
		return id
	}
	id, ok := p.seen[session]
	if !ok {
		id = 1<<20 + len(p.seen)
		p.seen[session] = id
	}
	return id
}

// sent places r in its agent's rounds and returns the events to record before its
// request_sent: the retry event when it re-sends the agent's failed request, else that
// request's round_done, the round having failed.
func (p *procView) sent(r Seen) []events.Event {
	a := p.agent(r.Session)
	f, failed := p.failed[a]
	delete(p.failed, a)
	if r.Retry && failed {
		id := roundID{a, f.round, f.attempt + 1}
		p.ids[r.ID] = id
		return []events.Event{{TS: r.SentS, Kind: events.Retry, Agent: a, Round: id.round, Attempt: id.attempt,
			Request: requestID(id), BackoffS: max(0, r.SentS-f.endS), SinceLastByteS: f.silenceS, Class: f.class,
			Message: fmt.Sprintf("the harness re-sent the messages of %s, %s after it ended %s", requestID(roundID{a, f.round, f.attempt}),
				time.Duration((r.SentS-f.endS)*float64(time.Second)).Round(time.Millisecond), describeFailure(f))}}
	}
	p.rounds[a]++
	p.ids[r.ID] = roundID{agent: a, round: p.rounds[a]}
	if failed {
		return []events.Event{f.roundDone}
	}
	return nil
}

// describeFailure says how a failed attempt ended.
func describeFailure(f failure) string {
	return fmt.Sprintf("(%s, silent for %s before)", f.class, time.Duration(f.silenceS*float64(time.Second)).Round(time.Millisecond))
}

// ended notes r's terminal event e and its round's round_done, and returns the round_done
// to record now: at once for a request that succeeded, or whose process has exited; nil for
// a failed one, which a retry may follow (sent and exit return it later).
func (p *procView) ended(r Seen, e, roundDone events.Event) []events.Event {
	id := p.ids[r.ID]
	delete(p.ids, r.ID)
	var out []events.Event
	if f, ok := p.failed[id.agent]; ok {
		// Another lane's failure waits still: it is no longer the agent's latest, the one a
		// retry is matched to, so it was its round's last attempt.
		delete(p.failed, id.agent)
		out = append(out, f.roundDone)
	}
	if e.Kind == events.Done || p.exited[id.agent] {
		return append(out, roundDone)
	}
	p.failed[id.agent] = failure{round: id.round, attempt: id.attempt, endS: e.TS, silenceS: e.SinceLastByteS, class: e.Class, roundDone: roundDone}
	return out
}

// exit notes that agent's process exited and returns its failed request's round_done, if
// one waits: no retry can follow.
func (p *procView) exit(agent int) []events.Event {
	p.exited[agent] = true
	p.gone++
	f, ok := p.failed[agent]
	if !ok {
		return nil
	}
	delete(p.failed, agent)
	return []events.Event{f.roundDone}
}

// event builds the event of kind k for request r at t.
func (p *procView) event(k events.Kind, r Seen, t float64) events.Event {
	id, ok := p.ids[r.ID]
	if !ok { // not sent yet: a snapshot racing its Sent
		id = roundID{agent: p.agent(r.Session), round: p.rounds[p.agent(r.Session)] + 1}
	}
	return events.Event{TS: t, Kind: k, Agent: id.agent, Round: id.round, Attempt: id.attempt, Request: requestID(id)}
}

// requestID is a request's id as a run names it: a<agent>-r<round>-<attempt>. A sample names
// every open request, so it is built without fmt.
func requestID(id roundID) string {
	var b [48]byte
	s := append(b[:0], 'a')
	s = strconv.AppendInt(s, int64(id.agent), 10)
	s = append(s, "-r"...)
	s = strconv.AppendInt(s, int64(id.round), 10)
	s = append(s, '-')
	return string(strconv.AppendInt(s, int64(id.attempt), 10))
}

// states counts the processes by state for a sample: inFlight requesting, the others that
// run thinking (the proxy cannot see inside them), those not started yet starting.
func (p *procView) states(inFlight int) map[events.State]int {
	running := p.started - p.gone
	return map[events.State]int{events.StateStarting: max(0, p.agents-p.started), events.StateRequesting: inFlight,
		events.StateThinking: max(0, running-inFlight), events.StateDone: p.gone}
}

// ProcessStarted records agent's process start (agent_start, with its pid and command line)
// at the proxy's time tS; agents is how many processes the run has. It requires
// WatchOptions.AgentOf.
func (w *Watcher) ProcessStarted(tS float64, agent, agents, pid int, command string) {
	w.lock()
	defer w.mu.Unlock()
	w.procs.agents = agents
	w.procs.started++
	w.record(events.Event{TS: tS, Kind: events.AgentStart, Agent: agent, PID: pid, Command: command})
}

// ProcessExited records agent's process end (agent_done, with its exit code, −1 for a
// signal, and how it ended) at tS; stopped is the run's end reason when agentsim stopped it,
// "" when it exited by itself. It requires WatchOptions.AgentOf.
func (w *Watcher) ProcessExited(tS float64, agent, code int, stopped events.EndReason, how string) {
	w.lock()
	defer w.mu.Unlock()
	for _, e := range w.procs.exit(agent) {
		w.record(e)
	}
	w.record(events.Event{TS: tS, Kind: events.AgentDone, Agent: agent, ExitCode: &code, Reason: stopped, Message: how})
}

// Note records a run-level event (agent −1) at tS: the exec's run_start, stop and run_end.
func (w *Watcher) Note(tS float64, k events.Kind, reason events.EndReason, msg string) {
	w.lock()
	defer w.mu.Unlock()
	w.record(events.Event{TS: tS, Kind: k, Agent: -1, Reason: reason, Message: msg})
}

// Fill writes into r what the watch's records tell, judged at tS (diagnose.Analyzer.Fill).
func (w *Watcher) Fill(r *results.Results, tS float64) {
	w.lock()
	defer w.mu.Unlock()
	w.a.Fill(r, tS)
}

// Stall reads the watch at tS for a watchdog that ends the run (diagnose.Analyzer.Stall).
func (w *Watcher) Stall(tS float64) diagnose.Stall {
	w.lock()
	defer w.mu.Unlock()
	return w.a.Stall(tS)
}
