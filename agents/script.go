package agents

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/workloads"
)

// Script is an agent's rounds taken from a recording — one session of a trace — instead of the
// workload's distributions: when each request is sent, how long its prompt is and which
// earlier request it continues, and how long its output is. Round k of the agent sends
// Turns[k-1]. Durations are simulated time, already scaled.
type Script struct {
	// Open sends each turn at its At, whatever the earlier turns are doing (open loop: the
	// timestamps mode of a replay, whose events carry the schedule lag). Otherwise the turns
	// form a closed loop: turn k is sent Wait after turn k-1 ended.
	Open bool
	// Turns are the session's requests in order.
	Turns []Turn
}

// Turn is one recorded request of a Script.
type Turn struct {
	// At is the send time since the agent started: the first turn's send in a closed loop,
	// every turn's in an open one.
	At time.Duration
	// Wait is, in a closed loop and for turns after the first, the pause before the send:
	// think and tool time, counted from the previous turn's end, or from its send when
	// FromSend is set (a source without end times).
	Wait     time.Duration
	FromSend bool
	// PromptTokens is the prompt's length in the server's tokens.
	PromptTokens int
	// Extends is the index in Turns of the turn whose conversation — its prompt and its
	// reply — this prompt begins with, followed by new text; -1 for a prompt of its own.
	Extends int
	// ReplyTokens is the recorded reply's length kept in the conversation (output without
	// reasoning): in an open loop, text of this length stands in for the reply, which may not
	// have arrived when a later turn extends it.
	ReplyTokens int
	// Blocks are prefix-block ids (a trace's hash_ids), each BlockTokens long but the last:
	// the prompt is one message of deterministic text per block, so prompts sharing leading
	// block ids share leading text, here and across agents. They take the place of Extends.
	Blocks      []uint64
	BlockTokens int
	// OutputTokens is the recorded output length, forced with max_tokens and ignore_eos;
	// when 0 (unknown), MaxTokens is sent without ignore_eos.
	OutputTokens int
	MaxTokens    int
	// Model and ReasoningEffort are sent when set, else the workload's.
	Model, ReasoningEffort string
	// Tools, when set, is sent as the request's tools: the same set for every turn of a
	// session, so the prefix a cache sees stays. The request asks for tool calls
	// (tool_choice required) when ToolCalls > 0, else for none.
	Tools *workloads.ToolSet
	// ToolCalls is how many tool calls the recorded reply made, ToolNames their names when
	// known. After the reply the agent runs the calls the reply gave (or, if it gave none,
	// ToolCalls calls of its own, with ids made up), for ToolTime, and the turn that extends
	// this one answers each with a tool message.
	ToolCalls int
	ToolNames []string
	// ToolTime is the recorded tool time after the reply: part of the next turn's Wait.
	ToolTime time.Duration
	// API is the API the recorded request went through (workloads.APIChat or APIResponses),
	// which the replayed one goes through too; empty: the workload's request.api.
	API string
}

// convo is a conversation and its words, for the token estimate.
type convo struct {
	msgs  []openai.ChatCompletionMessage
	words int
}

// scripted is an agent's state while it plays its script.
type scripted struct {
	s     *Script
	convs map[int]convo      // the conversations of turns a later turn extends
	keep  map[int]bool       // which turns those are
	grown map[int]bool       // turns whose conversation was extended in place already
	calls map[int][]ToolCall // the tool calls each turn's reply made, answered by its extension
	begin time.Time          // when the agent started
}

// runScript plays the agent's script: a closed loop per session, or an open one.
func (a *Agent) runScript(rounds, requests context.Context) {
	sc := &scripted{s: a.script, convs: map[int]convo{}, keep: map[int]bool{}, grown: map[int]bool{}, calls: map[int][]ToolCall{}, begin: a.env.Clock.Now()}
	for _, t := range a.script.Turns {
		if t.Extends >= 0 && len(t.Blocks) == 0 {
			sc.keep[t.Extends] = true
		}
	}
	if a.script.Open {
		a.runOpen(rounds, requests, sc)
		return
	}
	var prevSend, prevEnd time.Time
	for k, t := range a.script.Turns {
		until := sc.begin.Add(t.At)
		if k > 0 {
			until = prevEnd.Add(t.Wait)
			if t.FromSend {
				until = prevSend.Add(t.Wait)
			}
		}
		a.set(events.StateThinking)
		if a.sleepUntil(rounds, until) != nil {
			return
		}
		c := a.prompt(sc, k, nil)
		prevSend = a.env.Clock.Now()
		res, ok := a.turn(rounds, requests, k, c, time.Time{})
		prevEnd = a.env.Clock.Now()
		if !ok {
			return
		}
		if res.Err == nil && t.ToolCalls > 0 {
			sc.calls[k] = a.scriptCalls(k, res.ToolCalls)
			if !a.scriptTools(rounds, k+1, sc.calls[k], t.ToolTime) {
				return
			}
		}
		if sc.keep[k] {
			if res.Err == nil {
				c = growReply(c, res.Content, sc.calls[k])
			}
			sc.convs[k] = c
		}
	}
}

// runOpen sends every turn at its time on a goroutine of its own, and waits for them all.
// Prompts are built here, in turn order, with text standing in for replies.
func (a *Agent) runOpen(rounds, requests context.Context, sc *scripted) {
	var inFlight sync.WaitGroup
	defer inFlight.Wait()
	for k, t := range a.script.Turns {
		at := sc.begin.Add(t.At)
		if a.sleepUntil(rounds, at) != nil {
			return
		}
		c := a.prompt(sc, k, sc.standIn)
		if sc.keep[k] {
			sc.convs[k] = c
		}
		// Each turn runs as its own agent value (the same ID): the conversation and the
		// random source are per request, so concurrent turns share nothing mutable.
		sub := &Agent{ID: a.ID, env: a.env, script: a.script, rng: rand.New(rand.NewPCG(uint64(a.env.Workload.Seed), uint64(a.ID)<<20|uint64(k)))}
		inFlight.Go(func() { sub.turn(rounds, requests, k, c, at) })
	}
}

// standIn appends to the conversation of turn e the text that stands for its reply.
func (sc *scripted) standIn(a *Agent, e int, c convo) convo {
	n, text := sc.s.Turns[e].ReplyTokens, ""
	if sc.s.Turns[e].ToolCalls > 0 {
		sc.calls[e] = a.scriptCalls(e, nil)
	}
	if n <= 0 && len(sc.calls[e]) == 0 {
		return c
	}
	words := workloads.WordsForTokens(max(0, n), a.env.Calibration.TokensPerWord())
	if words > 0 {
		text = workloads.Text(a.env.Workload.Seed, a.ID, e+1, "reply", words)
	}
	return growReply(c, text, sc.calls[e])
}

// prompt builds turn k's conversation: its blocks, or the conversation it extends (with its
// reply, or reply's stand-in when given) and new text up to the recorded length, or text of
// its own.
func (a *Agent) prompt(sc *scripted, k int, reply func(*Agent, int, convo) convo) convo {
	t := sc.s.Turns[k]
	if len(t.Blocks) > 0 {
		return a.blocks(t)
	}
	if base, ok := sc.convs[t.Extends]; ok && t.Extends >= 0 {
		if sc.grown[t.Extends] {
			base.msgs = slices.Clip(base.msgs) // a second continuation must not overwrite the first
		}
		sc.grown[t.Extends] = true
		if reply != nil {
			base = reply(a, t.Extends, base)
		}
		// The new text is seeded by the turn extended and the length reached, so a retried
		// request repeats its prompt exactly.
		part := "new-" + strconv.Itoa(t.PromptTokens)
		if calls := sc.calls[t.Extends]; len(calls) > 0 {
			return a.toolResults(base, t, calls, part)
		}
		if words := a.wordsFor(a.textTokens(t), base.words, len(base.msgs)+1); words > 0 {
			return grow(base, openai.ChatMessageRoleUser, workloads.Text(a.env.Workload.Seed, a.ID, t.Extends+1, part, words), words)
		}
	}
	words := max(1, a.wordsFor(a.textTokens(t), 0, 1))
	return grow(convo{}, openai.ChatMessageRoleUser, workloads.Text(a.env.Workload.Seed, a.ID, k+1, "prompt", words), words)
}

// blocks builds a prompt of one message per block id: BlockTokens each, the last one the
// rest of PromptTokens. A block's text depends only on its id, and a shorter block's text is
// the start of a longer one's.
func (a *Agent) blocks(t Turn) convo {
	var c convo
	tpw := a.env.Calibration.TokensPerWord()
	rest := a.textTokens(t) - promptFraming
	for i, id := range t.Blocks {
		if rest <= messageFraming {
			break
		}
		n := min(t.BlockTokens, rest)
		if i == len(t.Blocks)-1 {
			n = rest
		}
		words := workloads.WordsForTokens(n-messageFraming, tpw)
		c = grow(c, openai.ChatMessageRoleUser, workloads.Text(a.env.Workload.Seed, 0, 0, "block-"+strconv.FormatUint(id, 10), words), words)
		rest -= n
	}
	if len(c.msgs) == 0 {
		words := max(1, a.wordsFor(t.PromptTokens, 0, 1))
		c = grow(c, openai.ChatMessageRoleUser, workloads.Text(a.env.Workload.Seed, a.ID, 0, "prompt", words), words)
	}
	return c
}

// wordsFor returns how many words a new message must have for a prompt of tokens tokens,
// given words already in messages messages (the new one included); ≤ 0 when none fit.
func (a *Agent) wordsFor(tokens, words, messages int) int {
	text := tokens - messages*messageFraming - promptFraming
	if text <= 0 {
		return 0
	}
	return workloads.WordsForTokens(text, a.env.Calibration.TokensPerWord()) - words
}

// turn sends turn k (round k+1) with conversation c: the read step's event, the pacer, the
// request with its recorded output length, the release. scheduled, when set, is when an open
// loop meant to send it. It returns the last attempt's result and false when the run stopped.
func (a *Agent) turn(rounds, requests context.Context, k int, c convo, scheduled time.Time) (Result, bool) {
	t, w := a.script.Turns[k], a.env.Workload
	round := k + 1
	a.words, a.scheduled = c.words, scheduled
	a.record(&events.Event{Kind: events.RoundStart, Round: round})
	est := a.env.Calibration.Tokens(c.words, len(c.msgs)) + a.toolTokens(t)
	a.record(&events.Event{Kind: events.ReadDone, Round: round, ReadTokens: max(0, est-a.extendedTokens(k)), ContextTokens: est})
	req := Request{API: w.Request.API, Model: w.Model, Messages: c.msgs, MaxTokens: w.Request.MaxTokens,
		ReasoningEffort: effort(w.Request.ReasoningEffort), Timeouts: w.Request.Timeouts}
	if t.API != "" {
		req.API = t.API
	}
	a.scriptSet = t.Tools
	if t.Tools != nil {
		req.Tools, req.ToolChoice, req.ParallelToolCalls = t.Tools.Tools(), "none", t.ToolCalls > 1
		if t.ToolCalls > 0 {
			req.ToolChoice = "required"
		}
	}
	if t.Model != "" {
		req.Model = t.Model
	}
	if t.ReasoningEffort != "" {
		req.ReasoningEffort = effort(t.ReasoningEffort)
	}
	switch {
	case t.OutputTokens > 0:
		req.MaxTokens, req.IgnoreEOS = t.OutputTokens, true
	case t.MaxTokens > 0:
		req.MaxTokens = t.MaxTokens
	}
	permit, ok := a.acquire(rounds, round, est, req.MaxTokens)
	if !ok {
		return Result{}, false
	}
	res := new(Result)
	a.send(rounds, requests, round, permit, &req, est, res)
	a.release(round, permit, res)
	if res.Err != nil {
		a.record(&events.Event{Kind: events.RoundDone, Round: round, Outcome: events.RoundFailed, Class: res.Class})
		return *res, requests.Err() == nil && rounds.Err() == nil
	}
	a.record(&events.Event{Kind: events.RoundDone, Round: round, Outcome: events.RoundOK})
	return *res, true
}

// extendedTokens is the recorded conversation (prompt and reply) of the turn turn k extends,
// 0 when none: the rest of turn k's prompt is what its read step added.
func (a *Agent) extendedTokens(k int) int {
	t := a.script.Turns[k]
	if t.Extends < 0 || t.Extends >= len(a.script.Turns) || len(t.Blocks) > 0 {
		return 0
	}
	e := a.script.Turns[t.Extends]
	return e.PromptTokens + e.ReplyTokens
}

// sleepUntil sleeps until t (simulated), or returns ctx's error.
func (a *Agent) sleepUntil(ctx context.Context, t time.Time) error {
	if d := t.Sub(a.env.Clock.Now()); d > 0 {
		return a.env.Clock.Sleep(ctx, d)
	}
	return ctx.Err()
}

// grow returns c with one more message; it appends in place, so callers clip c first when an
// earlier continuation of it must survive.
func grow(c convo, role, text string, words int) convo {
	return convo{msgs: append(c.msgs, openai.ChatCompletionMessage{Role: role, Content: text}), words: c.words + words}
}

// Validate checks a script's turns: extends names an earlier turn, sizes, tool calls and tool
// times are not negative.
func (s *Script) Validate() error {
	for k, t := range s.Turns {
		switch {
		case t.Extends >= k || t.Extends < -1:
			return fmt.Errorf("turn %d: extends = %d: must name an earlier turn (0…%d) or be -1", k, t.Extends, k-1)
		case t.PromptTokens < 0 || t.OutputTokens < 0 || t.MaxTokens < 0 || t.ReplyTokens < 0:
			return fmt.Errorf("turn %d: negative token count", k)
		case t.ToolCalls < 0 || t.ToolTime < 0:
			return fmt.Errorf("turn %d: tool_calls = %d, tool time %s: must be ≥ 0", k, t.ToolCalls, t.ToolTime)
		case len(t.Blocks) > 0 && t.BlockTokens <= messageFraming:
			return fmt.Errorf("turn %d: block_tokens = %d: must be more than %d", k, t.BlockTokens, messageFraming)
		}
	}
	return nil
}
