package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/workloads"
)

// Client makes streaming chat completions against one OpenAI-compatible server and measures
// them in simulated time. It is safe for concurrent use; every agent may share one.
type Client struct {
	api *openai.Client
	clk *clock.Clock

	toolsMu sync.Mutex
	tools   map[*openai.Tool]*[2][]byte // each tools array's encoding in each body form, by its first element
}

// maxNonDataLines bounds the consecutive non-data lines (SSE comments such as keep-alive
// pings, event: lines) go-openai accepts between two data frames. Its default, 300, would turn
// a long stall with keep-alives into an error; a stall is for the timeouts to judge.
const maxNonDataLines = 1 << 20

// NewClient returns a Client for the server whose API root is baseURL (for example
// "http://127.0.0.1:30000/v1"; requests go to baseURL + "/chat/completions"), authenticating
// with apiKey when it is not empty. hc supplies the transport (nil: a default client); its
// Timeout, if any, is wall time and should be 0 — Request.Timeouts bound a call in simulated
// time. hc itself is not modified. clk times every call. stamp, when not nil, adds headers to
// every request. When hc's transport is an *http.Transport, a request that the server hangs
// up on as it arrives on a kept-alive connection, before any byte of an answer, is sent once
// more on another, as net/http does for the requests it may replay.
func NewClient(baseURL, apiKey string, hc *http.Client, clk *clock.Clock, stamp Stamp) *Client {
	cfg := openai.DefaultConfig(apiKey)
	cfg.BaseURL = baseURL
	cfg.EmptyMessagesLimit = maxNonDataLines
	cfg.HTTPClient = wrapHTTPClient(hc, stamp)
	return &Client{api: openai.NewClientWithConfig(cfg), clk: clk, tools: map[*openai.Tool]*[2][]byte{}}
}

// wrapHTTPClient returns a copy of hc whose transport adds the context's body fields and the
// stamp's headers to requests and shows each response to the context's hook.
func wrapHTTPClient(hc *http.Client, stamp Stamp) *http.Client {
	var c http.Client
	if hc != nil {
		c = *hc
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = hookTransport{next: requestTransport{next: base, stamp: stamp}}
	return &c
}

// Request is one streaming request: a chat completion, or a response of the Responses API.
type Request struct {
	// API is the API it goes through: workloads.APIChat ("" too), POST …/chat/completions,
	// or workloads.APIResponses, POST …/responses (docs/agentic.md says how a conversation
	// becomes its input items).
	API string
	// Model is the model name sent to the server.
	Model string
	// Messages is the whole conversation so far, unless Conversation is set.
	Messages []openai.ChatCompletionMessage
	// Conversation, when set, makes the conversation each time a request is sent, instead of
	// Messages: text an agent can make again is not kept while the request streams.
	Conversation Conversation
	// MaxTokens caps the output, reasoning included, in tokens (max_tokens, or
	// max_output_tokens through the Responses API); 0 sends none.
	MaxTokens int
	// IgnoreEOS asks the server to generate exactly MaxTokens tokens (ignore_eos, an SGLang
	// and vLLM extension), as benchmark clients do.
	IgnoreEOS bool
	// ReasoningEffort is sent as reasoning_effort when not empty (low, medium, high, max…).
	ReasoningEffort string
	// Tools, when not empty, is sent as tools, with ToolChoice as tool_choice and
	// ParallelToolCalls as parallel_tool_calls; a request without tools sends neither. The
	// array is the run's one copy (workloads.ToolSet.Tools), shared by every request.
	Tools []openai.Tool
	// ToolChoice is the string auto, none or required, or an openai.ToolChoice naming a
	// function (workloads.Tools.ToolChoice).
	ToolChoice any
	// ParallelToolCalls is whether the model may call several tools in one reply.
	ParallelToolCalls bool
	// Timeouts bound the call in simulated time; a zero field means no such timeout. Request
	// runs from send to the end; TTFT from send to the first token, reasoning or content;
	// Idle is the longest silence allowed between two data frames and applies from the
	// first data frame on (before it, only TTFT and Request do).
	Timeouts workloads.Timeouts
}

// ignoreEOS is the body field IgnoreEOS adds; shared, never modified.
var ignoreEOS = map[string]any{"ignore_eos": true}

// Conversation makes a request's messages when it is sent.
type Conversation interface {
	// Len is how many messages Messages returns.
	Len() int
	// Messages returns the messages, made anew.
	Messages() []openai.ChatCompletionMessage
}

// messages is how many messages r sends.
func (r *Request) messages() int {
	if r.Conversation != nil {
		return r.Conversation.Len()
	}
	return len(r.Messages)
}

// wirePlan is how r's body writes its conversation and tools as it is read, or nil when go-openai
// encodes the whole body: for a request whose Conversation is an agent's.
func (c *Client) wirePlan(r *Request) (*wirePlan, error) {
	conv, ok := r.Conversation.(*conversation)
	if !ok {
		return nil, nil
	}
	api := wireChat
	if r.API == workloads.APIResponses {
		api = wireResponses
	}
	var tools []byte
	if len(r.Tools) > 0 {
		var err error
		if tools, err = c.toolsJSON(r.Tools, api); err != nil {
			return nil, err
		}
	}
	return conv.plan(api, tools), nil
}

// toolsJSON is tools as a request body of form api carries it, encoded once per array: the
// array is the run's one copy (Request.Tools).
func (c *Client) toolsJSON(tools []openai.Tool, api int) ([]byte, error) {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	enc := c.tools[&tools[0]]
	if enc == nil {
		enc = new([2][]byte)
		c.tools[&tools[0]] = enc
	}
	if enc[api] == nil {
		var v any = tools
		if api == wireResponses {
			v = responseTools(tools)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode tools: %w", err)
		}
		enc[api] = b
	}
	return enc[api], nil
}

// chatRequest is the go-openai form of r; the stream always reports usage. wired leaves the
// messages and the tools out, for the transport to write (wirePlan).
func (r *Request) chatRequest(wired bool) openai.ChatCompletionRequest {
	var msgs []openai.ChatCompletionMessage
	switch {
	case wired:
	case r.Conversation != nil:
		msgs = r.Conversation.Messages()
	default:
		msgs = r.Messages
	}
	cr := openai.ChatCompletionRequest{
		Model:    r.Model,
		Messages: msgs,
		//lint:ignore SA1019 max_tokens is the field SGLang, vLLM and llama.cpp read; it bounds reasoning plus content there.
		MaxTokens:       r.MaxTokens,
		ReasoningEffort: r.ReasoningEffort,
		Stream:          true,
		StreamOptions:   &openai.StreamOptions{IncludeUsage: true},
	}
	if len(r.Tools) > 0 {
		cr.ToolChoice, cr.ParallelToolCalls = r.ToolChoice, r.ParallelToolCalls
		if !wired {
			cr.Tools = r.Tools
		}
	}
	return cr
}

// Call sends req as a streaming chat completion and reads the stream to its end, reporting
// events to obs (nil: none) as they happen. It always returns a Result: a failure is described
// by its Err, Class, Status and timings, never raised. Cancelling ctx ends the call promptly
// with events.ClassCancelled and closes the connection, so the server sees the disconnect.
func (c *Client) Call(ctx context.Context, req Request, obs Observer) Result {
	var res Result
	c.callInto(ctx, &req, obs, &res)
	return res
}

// callInto is Call writing its result to *res, which it fills as the request goes. An agent's goroutine waits in it for as long
// as a stream lasts, so its frame, and its callers', hold no Result or Request by value: at
// thousands of agents, every kilobyte of the stack a streaming agent keeps is megabytes
// (docs/speed.md).
func (c *Client) callInto(ctx context.Context, req *Request, obs Observer, res *Result) {
	if obs == nil {
		obs = NopObserver{}
	}
	*res = Result{}
	k := &call{clk: c.clk, obs: obs, res: res}
	callCtx, cancel := k.contexts(ctx, req)
	defer cancel()
	plan, err := c.wirePlan(req)
	if err == nil {
		if plan != nil {
			callCtx = context.WithValue(callCtx, wirePlanKey{}, plan)
		}
		err = k.run(callCtx, c.api, req, plan != nil)
	}
	k.finish(ctx, callCtx, err)
}
