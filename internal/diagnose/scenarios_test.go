package diagnose

import (
	"time"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/workloads"
)

// Scenarios: each returns the world, the Analyzer's Config and the time to judge it at.

// wedgeStarvation: 30 agents, 16 slots, no timeouts. Agents 0–15 took the 16 permits at
// t=1 s and their streams went silent at t=100 s (the server dropped them from the batch:
// decode_running 16 → 0); agents 16–29 have waited in the pacer since t=110 s.
func wedgeStarvation() (*world, Config, float64) {
	w := newWorld(30, 16)
	for id := range 16 {
		w.agent(id, 0).read(1).wait(0).call(call{dur: inf, ttft: 5, silent: 99})
	}
	for id := 16; id < 30; id++ {
		w.agent(id, 95).read(15).wait(inf)
	}
	w.gauges = decodeRunning(func(t float64) float64 {
		if t < 100 {
			return 16
		}
		return 0
	})
	return w, Config{Agents: 30, PacerKind: "slots", PacerSlots: 16}, 700
}

// allWedged: 30 agents, 30 slots, hang_after 300 s, no timeouts (or a 600 s request timeout);
// every stream went silent at t=100 s.
func allWedged(timeouts bool) (*world, Config, float64) {
	w := newWorld(30, 30)
	for id := range 30 {
		w.agent(id, 0).read(1).wait(0).call(call{dur: inf, ttft: 5, silent: 99})
	}
	cfg := Config{Agents: 30, PacerKind: "slots", PacerSlots: 30, HangAfter: 300 * time.Second}
	if timeouts {
		cfg.Timeouts.Request = 600 * time.Second
	}
	return w, cfg, 400
}

// wedgeIdleTimeout: 8 agents, 8 slots, idle_timeout 60 s. Every other round's stream wedges
// 20 s in; the idle timeout ends it 60 s later and the round fails (a timeout is not
// retried); the other rounds succeed in 30 s.
func wedgeIdleTimeout() (*world, Config, float64) {
	w := newWorld(8, 8)
	for id := range 8 {
		a := w.agent(id, float64(id))
		for round := range 4 {
			a.read(1).wait(0)
			if (round+id)%2 == 0 {
				a.call(call{dur: 80, ttft: 2, silent: 20, kind: events.Timeout, class: "timeout_idle"}).release(false).roundDone(false, 2)
				continue
			}
			a.call(call{dur: 30, ttft: 2, tokens: 600}).release(false).roundDone(true, 2)
		}
		a.done()
	}
	return w, Config{Agents: 8, Rounds: 4, PacerKind: "slots", PacerSlots: 8, Timeouts: workloads.Timeouts{Idle: 60 * time.Second}}, 0
}

// retriedErrors: 8 agents × 4 rounds, retry.max 2. Every other round's first attempt gets a
// 429; the agent backs off 1 s and the retry succeeds in 30 s. Every round completes.
func retriedErrors() (*world, Config, float64) {
	w := newWorld(8, 8)
	for id := range 8 {
		a := w.agent(id, float64(id))
		for round := range 4 {
			a.read(1).wait(0)
			if (round+id)%2 == 0 {
				a.call(call{dur: 0.2, ttft: inf, kind: events.Error, class: "http_status", status: 429}).backoff(1)
			}
			a.call(call{dur: 30, ttft: 2, tokens: 600}).release(false).roundDone(true, 2)
		}
		a.done()
	}
	return w, Config{Agents: 8, Rounds: 4, PacerKind: "slots", PacerSlots: 8}, 0
}

// leakOnTimeout: 6 agents, 4 slots, request timeout 30 s, leak_on_timeout. Agents 0–3 time
// out at t=31 s and keep their permits; then they and agents 4–5 wait for ever.
func leakOnTimeout() (*world, Config, float64) {
	w := newWorld(6, 4)
	for id := range 4 {
		w.agent(id, 0).read(1).wait(0).
			call(call{dur: 30, ttft: inf, kind: events.Timeout, class: "timeout_request"}).
			release(true).roundDone(false, 0).read(1).wait(inf)
	}
	for id := 4; id < 6; id++ {
		w.agent(id, 0).read(1).wait(inf)
	}
	cfg := Config{Agents: 6, PacerKind: "slots", PacerSlots: 4, Timeouts: workloads.Timeouts{Request: 30 * time.Second}, LeakOnTimeout: true}
	return w, cfg, 300
}

// leakAndWedge: 6 agents, 4 slots, ttft_timeout 30 s, leak_on_timeout. Agents 0–1 get no
// token, time out at t=31 s and keep their permits; agents 2–3 stream until t=50 s, then
// wedge (the TTFT timeout no longer applies); agents 4–5 wait from t=1 s.
func leakAndWedge() (*world, Config, float64) {
	w := newWorld(6, 4)
	for id := range 2 {
		w.agent(id, 0).read(1).wait(0).
			call(call{dur: 30, ttft: inf, kind: events.Timeout, class: "timeout_ttft"}).
			release(true).roundDone(false, 0).read(1).wait(inf)
	}
	for id := 2; id < 4; id++ {
		w.agent(id, 0).read(1).wait(0).call(call{dur: inf, ttft: 2, silent: 49})
	}
	for id := 4; id < 6; id++ {
		w.agent(id, 0).read(1).wait(inf)
	}
	cfg := Config{Agents: 6, PacerKind: "slots", PacerSlots: 4, Timeouts: workloads.Timeouts{TTFT: 30 * time.Second}, LeakOnTimeout: true}
	return w, cfg, 300
}

// serialized: n agents, n slots, a server that decodes one request at a time: each takes
// 10 s of decode once its turn comes; agents read 0.5 s and think 0.5 s between rounds.
func serialized(n int, until float64, gauge bool) (*world, Config, float64) {
	w := newWorld(n, n)
	type turn struct {
		agent int
		send  float64
	}
	actors := make([]*actor, n)
	queue := make([]turn, n)
	for id := range n {
		actors[id] = w.agent(id, 0)
		queue[id] = turn{agent: id, send: 0.5}
	}
	free := 0.0
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		start := max(next.send, free)
		free = start + 10
		a := actors[next.agent]
		a.round(0.5, 0, call{dur: free - next.send, ttft: start - next.send + 0.01, tokens: 500}, 0.5)
		if a.t+0.5 < until {
			queue = append(queue, turn{agent: next.agent, send: a.t + 0.5})
		}
	}
	if gauge {
		w.gauges = decodeRunning(func(float64) float64 { return 1 })
	}
	return w, Config{Agents: n, PacerKind: "slots", PacerSlots: n}, until
}

// parallel: n agents streaming at once, back to back, each request taking dur seconds
// for tokens output tokens; agents read 0.5 s and think 0.5 s.
func parallel(n, rounds int, dur float64, tokens int) (*world, Config) {
	w := newWorld(n, n)
	for id := range n {
		a := w.agent(id, 0)
		for range rounds {
			a.round(0.5, 0, call{dur: dur, ttft: min(10, dur/4), tokens: tokens}, 0.5)
		}
		a.done()
	}
	return w, Config{Agents: n, PacerKind: "slots", PacerSlots: n}
}

// withErrors: 10 agents × 5 rounds of 5 s requests; 6 requests get 429 and 4 an error frame
// (20 % of 50), the round failing.
func withErrors() (*world, Config) {
	w := newWorld(10, 10)
	n := 0
	for id := range 10 {
		a := w.agent(id, 0)
		for range 5 {
			a.read(0.5).wait(0)
			switch n++; {
			case n%5 == 0 && n <= 30:
				a.call(call{dur: 0.2, ttft: inf, kind: events.Error, class: "http_status", status: 429}).release(false).roundDone(false, 0.5)
			case n%5 == 0:
				a.call(call{dur: 3, ttft: 1, kind: events.Error, class: "error_frame"}).release(false).roundDone(false, 0.5)
			default:
				a.call(call{dur: 5, ttft: 1, tokens: 100}).release(false).roundDone(true, 0.5)
			}
		}
		a.done()
	}
	return w, Config{Agents: 10, PacerKind: "slots", PacerSlots: 10}
}

// oneStalled: 8 agents, 8 slots, no timeouts; agent 3's first stream went silent at t=50 s
// while the other seven keep completing 20 s requests.
func oneStalled() (*world, Config, float64) {
	w := newWorld(8, 8)
	for id := range 8 {
		a := w.agent(id, 0)
		if id == 3 {
			a.read(1).wait(0).call(call{dur: inf, ttft: 2, silent: 49})
			continue
		}
		for range 15 {
			a.round(0.5, 0, call{dur: 20, ttft: 2, tokens: 400}, 0.5)
		}
		a.done()
	}
	return w, Config{Agents: 8, PacerKind: "slots", PacerSlots: 8}, 300
}

// partlyWedged: 30 agents, 16 slots; 10 holders wedged at t=50 s, 6 holders keep completing
// 100 s requests back to back, and agents 16–29 wait their turn.
func partlyWedged() (*world, Config, float64) {
	w := newWorld(30, 16)
	for id := range 10 {
		w.agent(id, 0).read(1).wait(0).call(call{dur: inf, ttft: 2, silent: 49})
	}
	for id := 10; id < 16; id++ {
		a := w.agent(id, 0)
		for range 5 {
			a.round(0, 0, call{dur: 100, ttft: 2, tokens: 2000}, 0)
		}
	}
	for id := 16; id < 30; id++ {
		w.agent(id, 0).read(1).wait(inf)
	}
	return w, Config{Agents: 30, PacerKind: "slots", PacerSlots: 16}, 300
}

// lostWakeUp: 4 agents, 4 slots; agent 0 finishes one round at t=11 s and releases, yet
// agents 1–3 wait in the pacer from t=1 s for ever with permits free.
func lostWakeUp() (*world, Config, float64) {
	w := newWorld(4, 4)
	w.agent(0, 0).round(1, 0, call{dur: 10, ttft: 1, tokens: 100}, 0).done()
	for id := 1; id < 4; id++ {
		w.agent(id, 0).read(1).wait(inf)
	}
	return w, Config{Agents: 4, PacerKind: "slots", PacerSlots: 4}, 200
}

// smoke: 4 agents × 2 rounds of 6 s, 100-token requests.
func smoke() (*world, Config) {
	w, cfg := parallel(4, 2, 6, 100)
	cfg.StallAfter, cfg.HangAfter = 20*time.Second, 60*time.Second
	return w, cfg
}
