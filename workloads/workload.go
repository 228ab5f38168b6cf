package workloads

import (
	"time"

	"github.com/agentsim/agentsim/internal/gate"
	"github.com/agentsim/agentsim/pacer"
)

// Workload is one resolved workload: the schema of a workload file. Durations are simulated
// time; sizes are tokens. Keys are the mapstructure/yaml tags.
type Workload struct {
	// Name identifies the workload in run directories and reports; letters, digits, '.', '_'
	// and '-' only.
	Name string `mapstructure:"name" yaml:"name"`
	// Agents is the number of agents running at once; 1–10000.
	Agents int `mapstructure:"agents" yaml:"agents"`
	// Rounds is the number of rounds each agent runs; 1–100000.
	Rounds int `mapstructure:"rounds" yaml:"rounds"`
	// Duration ends the run: after it no agent starts a new round; 0 means no limit.
	Duration time.Duration `mapstructure:"duration" yaml:"duration"`
	// Seed makes text and every sampled value reproducible.
	Seed int64 `mapstructure:"seed" yaml:"seed"`
	// Model is the model name sent in each request.
	Model string `mapstructure:"model" yaml:"model"`
	// StartJitter spreads the agents' first rounds uniformly over this window; 0 starts all at
	// once.
	StartJitter time.Duration `mapstructure:"start_jitter" yaml:"start_jitter"`
	// Context describes how each agent's conversation starts and grows.
	Context Context `mapstructure:"context" yaml:"context"`
	// Request describes each chat completion request.
	Request Request `mapstructure:"request" yaml:"request"`
	// Retry is the retry policy for failed requests.
	Retry Retry `mapstructure:"retry" yaml:"retry"`
	// ToolTime is the time the read step's tool takes, each round, in a workload without tools
	// (tools.set none).
	ToolTime DurationDist `mapstructure:"tool_time" yaml:"tool_time"`
	// ThinkTime is the pause after a response before the next round.
	ThinkTime DurationDist `mapstructure:"think_time" yaml:"think_time"`
	// Tools are the tool definitions requests carry and what the agent's tools cost.
	Tools Tools `mapstructure:"tools" yaml:"tools"`
	// Task divides an agent's rounds into tasks when it has tools.
	Task Task `mapstructure:"task" yaml:"task"`
	// Pacer selects the design that gates requests.
	Pacer pacer.Config `mapstructure:"pacer" yaml:"pacer"`
	// Watchdog sets when a run without progress is reported and ended.
	Watchdog Watchdog `mapstructure:"watchdog" yaml:"watchdog"`
	// SampleInterval is the time between two samples of server and harness state; > 0.
	SampleInterval time.Duration `mapstructure:"sample_interval" yaml:"sample_interval"`
	// Grace is how long requests in flight may finish after Duration has ended new rounds,
	// before they are cancelled; ≥ 0.
	Grace time.Duration `mapstructure:"grace" yaml:"grace"`
	// Thresholds are the rules a run is held to when it is compared with a baseline run
	// (run --baseline, diff) and, for absolute limits, on every run (docs/gate.md).
	Thresholds Thresholds `mapstructure:"thresholds" yaml:"thresholds"`
}

// Thresholds are a workload's gate rules, parsed and checked: the `thresholds:` rule language
// of docs/gate.md, whose engine (the figures, the resampling, the evaluation) is internal.
type Thresholds = gate.Thresholds

// Context describes an agent's conversation, in tokens.
type Context struct {
	// SystemTokens is the size of the system message; ≥ 0.
	SystemTokens int `mapstructure:"system_tokens" yaml:"system_tokens"`
	// InitialTokens is the size of the task given to the agent before round 1; ≥ 0.
	InitialTokens int `mapstructure:"initial_tokens" yaml:"initial_tokens"`
	// ReadTokens is the size of the text appended by the read step, each round, in a workload
	// without tools (tools.set none).
	ReadTokens Dist `mapstructure:"read_tokens" yaml:"read_tokens"`
	// MaxContextTokens is the model's context window, in tokens; larger than SystemTokens +
	// InitialTokens. An agent stops before a round whose prompt and the output it reserves
	// (Request.Reserved) would pass it.
	MaxContextTokens int `mapstructure:"max_context_tokens" yaml:"max_context_tokens"`
}

// Request describes each streaming request an agent sends.
type Request struct {
	// API is the API every request goes through: APIChat (POST /v1/chat/completions, the
	// default) or APIResponses (POST /v1/responses, as Codex CLI and the OpenAI Agents SDK
	// send); one of APIs.
	API string `mapstructure:"api" yaml:"api"`
	// Stream asks for a streamed (SSE) response.
	Stream bool `mapstructure:"stream" yaml:"stream"`
	// ReasoningEffort is sent as reasoning_effort: one of ReasoningEfforts.
	ReasoningEffort string `mapstructure:"reasoning_effort" yaml:"reasoning_effort"`
	// MaxTokens caps the output (reasoning included), in tokens; ≥ 1.
	MaxTokens int `mapstructure:"max_tokens" yaml:"max_tokens"`
	// OutputTokens is the desired output length, in tokens.
	OutputTokens Dist `mapstructure:"output_tokens" yaml:"output_tokens"`
	// ForceOutputLength sends max_tokens = the sampled OutputTokens with ignore_eos = true,
	// as benchmark clients do, so every response has exactly that length.
	ForceOutputLength bool `mapstructure:"force_output_length" yaml:"force_output_length"`
	// Timeouts are the keys timeout, ttft_timeout and idle_timeout; 0 means none.
	Timeouts `mapstructure:",squash" yaml:",inline"`
}

// Reserved is the output, in tokens, that a request whose sampled output length is sampled
// reserves in its context: what is sent as max_tokens bounds it, the sampled length itself
// with ForceOutputLength, else at most MaxTokens.
func (r *Request) Reserved(sampled int) int {
	if r.ForceOutputLength {
		return sampled
	}
	return min(sampled, r.MaxTokens)
}

// Watchdog sets the live watchdog's thresholds, in simulated time.
type Watchdog struct {
	// StallAfter is the time without progress (no token, no finished request) after which the
	// watchdog warns; > 0.
	StallAfter time.Duration `mapstructure:"stall_after" yaml:"stall_after"`
	// HangAfter is the time without progress after which the watchdog ends the run with its
	// verdict; longer than StallAfter.
	HangAfter time.Duration `mapstructure:"hang_after" yaml:"hang_after"`
	// SlowAfter is the mean end-to-end request latency from which a run that progresses is
	// judged slow rather than healthy; > 0.
	SlowAfter time.Duration `mapstructure:"slow_after" yaml:"slow_after"`
}

// The APIs of request.api.
const (
	// APIChat sends chat completions: POST /v1/chat/completions.
	APIChat = "chat"
	// APIResponses sends the Responses API: POST /v1/responses, the whole conversation as
	// input items each time, with store false (docs/agentic.md).
	APIResponses = "responses"
)

// APIs lists the allowed values of request.api.
var APIs = []string{APIChat, APIResponses}

// ReasoningEfforts lists the allowed values of request.reasoning_effort, lowest first.
var ReasoningEfforts = []string{"none", "minimal", "low", "medium", "high", "max"}

// Defaults of the keys every command shares, in simulated time: the watchdog's thresholds and
// the sample interval.
const (
	DefaultStallAfter     = 120 * time.Second
	DefaultHangAfter      = 600 * time.Second
	DefaultSlowAfter      = 60 * time.Second
	DefaultSampleInterval = 750 * time.Millisecond
)

// DefaultWorkload is the built-in Load resolves when LoadOptions.Workload is empty.
const DefaultWorkload = "ocbrowse"

// Defaults returns the built-in defaults, the lowest layer of the configuration chain. Every
// key has one, so that each key can be overridden from any layer.
func Defaults() Workload {
	return Workload{
		Name:    "workload",
		Agents:  1,
		Rounds:  1,
		Seed:    1,
		Model:   "deepseek-v4-flash",
		Context: Context{InitialTokens: 1000, ReadTokens: Const(0), MaxContextTokens: 131072},
		Request: Request{
			API:             APIChat,
			Stream:          true,
			ReasoningEffort: "none",
			MaxTokens:       4096,
			OutputTokens:    Const(256),
		},
		Retry:          Retry{Backoff: time.Second, MaxBackoff: 30 * time.Second},
		ToolTime:       ConstDuration(0),
		ThinkTime:      ConstDuration(0),
		Tools:          Tools{Set: ToolSetNone, Choice: ToolChoiceAuto, Parallel: true, Latency: DefaultToolLatency(), ResultTokens: DefaultResultTokens()},
		Task:           Task{Steps: DefaultTaskSteps(), CallsPerStep: DefaultCallsPerStep(), MessageTokens: Const(DefaultMessageTokens)},
		Pacer:          pacer.Config{Kind: "unlimited"},
		Watchdog:       Watchdog{StallAfter: DefaultStallAfter, HangAfter: DefaultHangAfter, SlowAfter: DefaultSlowAfter},
		SampleInterval: DefaultSampleInterval,
		Grace:          30 * time.Second,
	}
}
