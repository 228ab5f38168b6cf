// Package results builds results.json (schema agentsim.results/v1) from a run's events and
// samples. Counts are derived from the very events written to events.jsonl, so the two always
// agree; latency statistics come from an exact sort of every observation.
package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentsim/agentsim/events"
)

// Schema is the results.json schema identifier.
const Schema = "agentsim.results/v1"

// File is the name of the file in a run directory that Write writes and Read reads.
const File = "results.json"

// Results is results.json. Every duration is in simulated seconds (fields named …_s, …_seconds,
// or under latency_seconds); WallSeconds is the wall time the run took.
type Results struct {
	Schema   string  `json:"schema"`
	Command  string  `json:"command"`
	Workload string  `json:"workload,omitempty"`
	Server   Server  `json:"server"`
	Speedup  float64 `json:"speedup"`
	// SpeedupAchieved is the speedup over time of a --speedup max run (Speedup is then its
	// median); nil at a fixed speedup.
	SpeedupAchieved *SpeedupAchieved `json:"speedup_achieved,omitempty"`
	WallSeconds     float64          `json:"wall_seconds"`
	SimSeconds      float64          `json:"sim_seconds"`
	Agents          int              `json:"agents,omitempty"`
	Rounds          Rounds           `json:"rounds"`
	Requests        Requests         `json:"requests"`
	Latency         Latency          `json:"latency_seconds"`
	Tokens          Tokens           `json:"tokens"`
	Stream          Stream           `json:"stream"` // the stream frames received; the simulator's own chunk count
	// Tools is what the agents' tools did; nil when no tool call or task ended (a workload
	// without tools).
	Tools       *Tools  `json:"tools,omitempty"`
	Verdict     Verdict `json:"verdict"`
	Interrupted bool    `json:"interrupted"`
	// Harness is the harness's own scheduling lag (run only).
	Harness *Harness `json:"harness,omitempty"`
	// Bench holds the bench-specific part (command "bench"); Parts the two runs of "compare".
	Bench *Bench              `json:"bench,omitempty"`
	Parts map[string]*Results `json:"parts,omitempty"`
	// Replay compares a replay with its original (command "replay").
	Replay *Replay `json:"replay,omitempty"`
	// Conclusion is compare's one-line conclusion.
	Conclusion string `json:"conclusion,omitempty"`
	// Failures lists the failed requests per class and status, with the server's own words
	// for the first of each.
	Failures []Failure `json:"failures,omitempty"`
	// Warnings are what the run noticed that qualifies its figures, one sentence each: a
	// model or context window that did not match the workload, output lengths that missed
	// its distribution, a server gauge that contradicts the harness's own measurement.
	Warnings []string `json:"warnings,omitempty"`
	// Reproduce says how to make the run again: version, command line, seeds, simulator.
	Reproduce *Reproduction `json:"reproduce,omitempty"`
}

// Server describes the server a run talked to and what its gauges showed.
type Server struct {
	URL     string     `json:"url"`
	Kind    ServerKind `json:"kind"`
	Profile string     `json:"profile,omitempty"` // the embedded simulator's profile
	Fault   []string   `json:"fault,omitempty"`   // the embedded simulator's active faults
	Metrics string     `json:"metrics"`           // which gauges were found, one line
	// Model is the model name the requests sent; ModelSource says where it came from:
	// "workload" (its model key) or "server" (the one model the server serves).
	Model       string `json:"model,omitempty"`
	ModelSource string `json:"model_source,omitempty"`
	// ContextWindow is the context window of one request the server lists for the model, in
	// tokens; 0 when it lists none. ContextWindowSource names the GET /v1/models field it was
	// read from: "max_model_len" (vLLM and servers shaped like it) or "meta.n_ctx" (llama.cpp's
	// llama-server: one slot's window, its -c divided among its -np slots).
	ContextWindow       int    `json:"context_window,omitempty"`
	ContextWindowSource string `json:"context_window_source,omitempty"`
	// FitWindow is the context window, in tokens, the workload was fitted to before the run
	// (harness.Options.FitContext: ContextWindow, or the window given); 0 when it was not
	// fitted. config.yaml records the fitted workload.
	FitWindow int `json:"fit_window,omitempty"`
	Gauges
}

// The fields of GET /v1/models a context window is read from, as Server.ContextWindowSource
// records them.
const (
	FromMaxModelLen = "max_model_len" // vLLM and servers shaped like it
	FromMetaNCtx    = "meta.n_ctx"    // llama.cpp's llama-server: one slot's window
)

// ServerKind says which kind of server a run talked to.
type ServerKind string

// The server kinds.
const (
	// Embedded is agentsim's own simulated inference server, started by the command.
	Embedded ServerKind = "embedded"
	// External is any OpenAI-compatible server named by its URL.
	External ServerKind = "external"
)

// String describes the server in a few words for a header or a summary: its URL, or for the
// embedded simulator its profile and faults, "embedded simulator dsv4-pd (faults none)".
func (s Server) String() string {
	if s.Kind != Embedded {
		return s.URL
	}
	f := "none"
	if len(s.Fault) > 0 {
		f = strings.Join(s.Fault, ",")
	}
	return fmt.Sprintf("embedded simulator %s (faults %s)", s.Profile, f)
}

// Rounds counts agent rounds. A round that sent its request ends completed or failed; one
// that never sent it (its agent stopped first) is not started.
type Rounds struct {
	// Planned counts the rounds the workload plans, agents × rounds; or, when Scripted, the
	// requests of the recorded sessions replayed.
	Planned int `json:"planned"`
	// Scripted says the agents replayed recorded sessions (agentsim replay) instead of the
	// workload's rounds: each request sent its own recorded output length.
	Scripted  bool `json:"scripted,omitempty"`
	Completed int  `json:"completed"`
	Failed    int  `json:"failed"`
	// FirstFailed and LastFailed are the lowest and the highest number (1-based) of a round
	// that failed; 0 when none did.
	FirstFailed int `json:"first_failed,omitempty"`
	LastFailed  int `json:"last_failed,omitempty"`
	// NotStarted counts the planned rounds of finished agents that never sent a request, and
	// NotStartedReasons splits them by why (events.EndReason: duration, watchdog,
	// interrupted, max_context_tokens, pacer_refused). Rounds of agents still running when
	// the record ends are in none of the counts.
	NotStarted        int            `json:"not_started"`
	NotStartedReasons map[string]int `json:"not_started_reasons,omitempty"`
}

// Requests counts requests. Sent counts every attempt; each ends as ok, an error, a timeout or
// a cancellation, or is still in flight. Errors and Timeouts count attempts; Failed counts
// outcomes: a request that failed and then succeeded on retry is ok, with a retry.
type Requests struct {
	Sent      int `json:"sent"`
	OK        int `json:"ok"`
	Errors    int `json:"errors"`
	Timeouts  int `json:"timeouts"`
	Cancelled int `json:"cancelled"`
	InFlight  int `json:"in_flight"`
	Retries   int `json:"retries"`
	// Failed counts requests whose last attempt failed (an error or a timeout not followed
	// by a retry): Errors + Timeouts − the failed attempts that were retried.
	Failed int `json:"failed"`
	// RetriedOK counts requests that succeeded after at least one retry.
	RetriedOK int `json:"retried_ok"`
	// Reasoned counts the requests that streamed any reasoning (a first_reasoning event),
	// finished or not.
	Reasoned int `json:"reasoned"`
	// RetryReasons counts the retried attempts by how they failed ("http_status 429").
	RetryReasons map[string]int `json:"retry_reasons,omitempty"`
	// Stalled counts requests that went without a byte for at least the watchdog's
	// stall_after, finished or not, by the run's diagnosis: a silence counts less the time the
	// harness was behind its schedule during it (docs/verdicts.md). It includes requests the
	// verdict explains as queueing or as cancelled by the run's stop.
	Stalled int `json:"stalled"`
}

// Latency holds the latency distributions, in simulated seconds.
type Latency struct {
	TTFT        Summary `json:"ttft"`
	TTFTContent Summary `json:"ttft_content"`
	ITL         Summary `json:"itl"`
	TPOT        Summary `json:"tpot"`
	E2E         Summary `json:"e2e"`
	PacerWait   Summary `json:"pacer_wait"`
}

// Tokens totals tokens as the server counted them (usage), plus the aggregate output rate.
type Tokens struct {
	Prompt          int64   `json:"prompt"`
	Cached          int64   `json:"cached"`
	Reasoning       int64   `json:"reasoning"`
	Content         int64   `json:"content"`
	OutputPerSecond float64 `json:"output_per_second"`
}

// Gauges summarises the server gauges sampled during the run.
type Gauges struct {
	DecodeRunning   MeanMax `json:"decode_running"`
	PrefillInflight MeanMax `json:"prefill_inflight"`
	// Queued is the requests the server holds waiting for a slot or a batch (requests).
	Queued  MeanMax `json:"queued"`
	Samples int     `json:"samples"`
}

// MeanMax is the mean and maximum of a gauge over the samples that had it.
type MeanMax struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
	N    int     `json:"n"`
}

// Write writes r as indented JSON to File in dir, atomically (temp file, then rename).
func Write(dir string, r *Results) error {
	r.Schema = Schema
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	tmp := filepath.Join(dir, "."+File+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, File)); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// Read reads File in dir. Its errors name the file with its path; a missing file's wraps
// fs.ErrNotExist.
func Read(dir string) (*Results, error) {
	path := filepath.Join(dir, File)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return &r, nil
}

// Bench is the bench-specific part of results.json: the settings, the sampled time series and
// the output rates.
type Bench struct {
	Concurrency  int `json:"concurrency"`
	MaxTokens    int `json:"max_tokens"`
	PromptTokens int `json:"prompt_tokens"`
	OK           int `json:"ok"`
	Failed       int `json:"failed"`
	// Short counts the completed requests that returned fewer than MaxTokens output tokens
	// (a server that ignores max_tokens or ignore_eos).
	Short   int             `json:"short"`
	Samples []events.Sample `json:"samples"`
	// OutputTokPerS is the aggregate output rate; PerRequestTokPerS the mean of each request's
	// completion tokens divided by its decode time.
	OutputTokPerS     float64 `json:"output_tok_per_s"`
	PerRequestTokPerS float64 `json:"per_request_tok_per_s"`
	// Sweep holds one entry per concurrency of --sweep.
	Sweep []SweepPoint `json:"sweep,omitempty"`
	// Rate and Arrivals describe an open-loop test (requests per simulated second, "poisson"
	// or "constant"); absent for requests sent at once, whose Concurrency is the number sent.
	Rate     float64 `json:"rate,omitempty"`
	Arrivals string  `json:"arrivals,omitempty"`
}

// SweepPoint is one concurrency of a bench sweep.
type SweepPoint struct {
	Concurrency       int     `json:"concurrency"`
	WallS             float64 `json:"wall_s"`
	OK                int     `json:"ok"`
	OutputTokPerS     float64 `json:"output_tok_per_s"`
	PerRequestTokPerS float64 `json:"per_request_tok_per_s"`
	LatMeanS          float64 `json:"lat_mean_s"`
	// Cut is set for the test the run's interruption cut short: its figures are of part of
	// a test, and no conclusion is drawn from them.
	Cut bool `json:"cut,omitempty"`
}
