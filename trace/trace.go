// Package trace defines agentsim.trace/v1: a recorded or imported workload as JSON Lines, one
// request a line, read and written one request at a time.
//
// The first line is a Header:
//
//	{"schema":"agentsim.trace/v1","source":"mooncake:conv.jsonl","created":"2026-11-30T19:44:13Z","requests":3,"sessions":2}
//
// and every following line is a Request:
//
//	{"session":"s1","seq":1,"t_s":12.5,"after_s":4.1,"prompt_tokens":7319,"output_tokens":490,"extends":0,"new_tokens":60}
//
// The requests of one session form a closed loop: request seq k+1 is sent only after request k
// ended, after_s later. Requests appear in any order across sessions (a recording appends them
// as they end) but in seq order within a session. Every duration is in seconds and carries
// "_s" in its name; every token count is a count of the server's tokens.
package trace

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Schema is the value of the header's schema field this package reads and writes.
const Schema = "agentsim.trace/v1"

// The values of Header.AfterSFrom.
const (
	// AfterEnd: after_s runs from the end of the session's previous request (the default).
	AfterEnd = "end"
	// AfterSend: after_s runs from the send of the session's previous request, so it includes
	// that request's duration. Importers set it when the source has no end times (Mooncake).
	AfterSend = "send"
)

// Header is the first line of a trace.
type Header struct {
	// Schema is always Schema ("agentsim.trace/v1"); readers refuse any other value.
	Schema string `json:"schema"`
	// Source says where the requests came from, e.g. "mooncake:conv.jsonl",
	// "access-log:router.log" or "record:http://10.0.0.5:30000".
	Source string `json:"source"`
	// Created is when the trace was written, RFC 3339 in UTC.
	Created string `json:"created"`
	// Requests is the number of request lines, or 0 when the writer did not know it in advance
	// (a recording appends requests as they end). When non-zero, readers check it at the end.
	Requests int `json:"requests,omitempty"`
	// Sessions is the number of distinct sessions, or 0 when not stated; checked like Requests.
	Sessions int `json:"sessions,omitempty"`
	// AfterSFrom says what after_s is measured from: AfterEnd ("end", the default when empty)
	// or AfterSend ("send").
	AfterSFrom string `json:"after_s_from,omitempty"`
}

// Request is one request line of a trace. Zero values of optional fields mean "not known".
type Request struct {
	// Session names the agent or conversation the request belongs to; never empty.
	Session string `json:"session"`
	// Seq is the request's position in its session: 0, 1, 2… in file order.
	Seq int `json:"seq"`
	// TS is the send time in seconds since the trace's start; ≥ 0.
	TS float64 `json:"t_s"`
	// AfterS is, for Seq > 0, the gap in seconds between the session's previous request and
	// this send: tool and think time. It is measured from that request's end, or from its
	// send when the header's after_s_from is "send". Always 0 for Seq 0.
	AfterS float64 `json:"after_s,omitempty"`

	// PromptTokens is the prompt length in tokens, as the server counted it (usage).
	PromptTokens int `json:"prompt_tokens"`
	// CachedTokens is how many prompt tokens the server served from its prefix cache.
	CachedTokens int `json:"cached_tokens,omitempty"`
	// OutputTokens is the completion length in tokens, reasoning included.
	OutputTokens int `json:"output_tokens"`
	// ReasoningTokens is the part of OutputTokens spent reasoning.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// TokensEstimated is true when the counts are estimates (the server did not report usage)
	// or unknown (0 with TokensEstimated: an access log has no token counts).
	TokensEstimated bool `json:"tokens_estimated,omitempty"`

	// Extends, when set, is the Seq of an earlier request of the same session whose whole
	// conversation (its prompt and its reply) this prompt begins with.
	Extends *int `json:"extends,omitempty"`
	// NewTokens is, with Extends, the number of prompt tokens after that conversation:
	// the append-only context growth a prefix cache sees.
	NewTokens int `json:"new_tokens,omitempty"`

	// MaxTokens is the max_tokens the request asked for; 0 when not set.
	MaxTokens int `json:"max_tokens,omitempty"`
	// ReasoningEffort is the reasoning_effort the request asked for ("low", "high"…).
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	// Model is the model the request named.
	Model string `json:"model,omitempty"`
	// API is the API the request went through: APIChat, APICompletions or APIResponses; empty
	// when not known (a trace written before the field existed, an access log), which replay
	// takes as chat completions.
	API string `json:"api,omitempty"`

	// Status is the HTTP status of the response; 0 when not known.
	Status int `json:"status,omitempty"`
	// TTFTS is the time to the first token in seconds since the send; 0 when not known.
	TTFTS float64 `json:"ttft_s,omitempty"`
	// E2ES is the time from the send to the end of the response in seconds; 0 when not known.
	E2ES float64 `json:"e2e_s,omitempty"`
	// FinishReason is the finish_reason the server gave ("stop", "length"…).
	FinishReason string `json:"finish_reason,omitempty"`
	// Error says how the request failed: a failure class and what happened, e.g.
	// "reset: the server's connection failed mid-response" or "http_status: HTTP 404: …"
	// (the server's own message). Empty for a response that came whole and ok.
	Error string `json:"error,omitempty"`

	// ToolsTokens is the size of the tool definitions the request carried (its tools array),
	// in tokens as agentsim estimates text (4 bytes a token); 0 when it offered none.
	ToolsTokens int `json:"tools_tokens,omitempty"`
	// ToolCalls is how many tool calls the reply carried; 0 when none.
	ToolCalls int `json:"tool_calls,omitempty"`
	// ToolNames are the called functions' names, one per call in the reply's order; absent
	// when not known, else exactly ToolCalls of them.
	ToolNames []string `json:"tool_names,omitempty"`
	// ToolS is, for a reply with tool calls, the tool time in seconds: from this request's end
	// until the results of its calls were ready — the send of the session's next request,
	// which carries them, as a proxy sees it, or the last result as a run logged it. It is
	// part of the next request's after_s, never more. Nil when the session's next request
	// does not carry the results (or there is none).
	ToolS *float64 `json:"tool_s,omitempty"`

	// HashIDs are the prompt's prefix-block hashes (Mooncake's form: one id per block of
	// tokens, equal ids mean equal prefixes), for prefix sharing across sessions. Last, as the
	// longest field.
	HashIDs []uint64 `json:"hash_ids,omitempty"`
}

// The values of Request.API.
const (
	// APIChat: chat completions, POST …/chat/completions.
	APIChat = "chat"
	// APICompletions: legacy completions, POST …/completions.
	APICompletions = "completions"
	// APIResponses: the Responses API, POST …/responses.
	APIResponses = "responses"
)

// MaxSeconds bounds every time and duration field: about 31 years, far beyond any trace, and
// small enough that sums of them stay exact to the microsecond.
const MaxSeconds = 1e9

// Validate checks the fields of r that need no other request: ranges and the relations
// between r's own fields. It returns every problem at once, each naming the field, its value
// and what is allowed. The reader and the writer add the checks across a session.
func (r *Request) Validate() error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if r.Session == "" {
		add(`session is empty: every request names its session`)
	}
	if r.Seq < 0 {
		add("seq = %d: must be ≥ 0", r.Seq)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"t_s", r.TS}, {"after_s", r.AfterS}, {"ttft_s", r.TTFTS}, {"e2e_s", r.E2ES}} {
		if f.v < 0 || f.v > MaxSeconds || math.IsNaN(f.v) {
			add("%s = %v: must be between 0 and %g s", f.name, f.v, MaxSeconds)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"prompt_tokens", r.PromptTokens}, {"cached_tokens", r.CachedTokens}, {"output_tokens", r.OutputTokens},
		{"reasoning_tokens", r.ReasoningTokens}, {"new_tokens", r.NewTokens}, {"max_tokens", r.MaxTokens}} {
		if f.v < 0 {
			add("%s = %d: must be ≥ 0", f.name, f.v)
		}
	}
	if r.PromptTokens >= 0 && r.CachedTokens > r.PromptTokens {
		add("cached_tokens = %d: must be ≤ prompt_tokens (%d)", r.CachedTokens, r.PromptTokens)
	}
	if r.OutputTokens >= 0 && r.ReasoningTokens > r.OutputTokens {
		add("reasoning_tokens = %d: must be ≤ output_tokens (%d), which include them", r.ReasoningTokens, r.OutputTokens)
	}
	if r.PromptTokens >= 0 && r.NewTokens > r.PromptTokens {
		add("new_tokens = %d: must be ≤ prompt_tokens (%d)", r.NewTokens, r.PromptTokens)
	}
	if r.Extends == nil && r.NewTokens != 0 {
		add("new_tokens = %d: only allowed with extends (tokens after an earlier request's conversation)", r.NewTokens)
	}
	if r.Seq == 0 && r.AfterS != 0 {
		add("after_s = %v: must be 0 for seq 0 (a session's first request has no previous one)", r.AfterS)
	}
	if r.Status != 0 && (r.Status < 100 || r.Status > 599) {
		add("status = %d: must be an HTTP status (100…599) or absent", r.Status)
	}
	switch r.API {
	case "", APIChat, APICompletions, APIResponses:
	default:
		add("api = %q: must be %q, %q, %q or absent", r.API, APIChat, APICompletions, APIResponses)
	}
	r.validateTools(add)
	if r.TTFTS > 0 && r.E2ES > 0 && r.TTFTS > r.E2ES {
		add("ttft_s = %v: must be ≤ e2e_s (%v)", r.TTFTS, r.E2ES)
	}
	return errors.Join(errs...)
}

// validateTools checks the tool fields: counts ≥ 0, one name per call, tool time only after
// tool calls.
func (r *Request) validateTools(add func(string, ...any)) {
	if r.ToolsTokens < 0 {
		add("tools_tokens = %d: must be ≥ 0", r.ToolsTokens)
	}
	if r.ToolCalls < 0 {
		add("tool_calls = %d: must be ≥ 0", r.ToolCalls)
	}
	if len(r.ToolNames) > 0 && len(r.ToolNames) != r.ToolCalls {
		add("tool_names has %d names: must have one per tool call (tool_calls = %d)", len(r.ToolNames), r.ToolCalls)
	}
	if r.ToolS != nil {
		switch t := *r.ToolS; {
		case t < 0 || t > MaxSeconds || math.IsNaN(t):
			add("tool_s = %v: must be between 0 and %g s", t, MaxSeconds)
		case r.ToolCalls <= 0:
			add("tool_s = %v: only allowed with tool_calls (the tool time after a reply's calls)", t)
		}
	}
}

// Validate checks the header: the schema, and after_s_from's value.
func (h *Header) Validate() error {
	var errs []error
	if h.Schema != Schema {
		errs = append(errs, fmt.Errorf("schema %q is not supported; this agentsim reads %s", h.Schema, Schema))
	}
	if h.AfterSFrom != "" && h.AfterSFrom != AfterEnd && h.AfterSFrom != AfterSend {
		errs = append(errs, fmt.Errorf("after_s_from = %q: must be %q or %q", h.AfterSFrom, AfterEnd, AfterSend))
	}
	if h.Requests < 0 {
		errs = append(errs, fmt.Errorf("requests = %d: must be ≥ 0 (0: not stated)", h.Requests))
	}
	if h.Sessions < 0 {
		errs = append(errs, fmt.Errorf("sessions = %d: must be ≥ 0 (0: not stated)", h.Sessions))
	}
	return errors.Join(errs...)
}

// LineError is a problem at one line of a named file: it prints as "trace.jsonl:12: …".
type LineError struct {
	Name string // the file's name as the user gave it, or "-" for standard input
	Line int    // 1-based
	Err  error
}

// Error returns the file name, line and problem, e.g. "trace.jsonl:12: seq = 2: …"; a joined
// error prints on one line, its parts separated by "; ".
func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, joinLines(e.Err))
}

// Unwrap returns the problem without its position, for errors.Is and errors.As.
func (e *LineError) Unwrap() error { return e.Err }

// joinLines prints a joined error on one line, its parts (and their parts) separated by "; ".
func joinLines(err error) string {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err.Error()
	}
	var parts []string
	for _, e := range j.Unwrap() {
		parts = append(parts, joinLines(e))
	}
	return strings.Join(parts, "; ")
}
