package simserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/internal/engine"
	"github.com/agentsim/agentsim/simserver"
)

// openAIError is the decoded error body.
type openAIError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    int     `json:"code"`
	} `json:"error"`
}

// decodeError checks a response is an OpenAI error body with the status as its code.
func decodeError(t *testing.T, resp *http.Response) openAIError {
	t.Helper()
	defer resp.Body.Close()
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var e openAIError
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &e), "body %s", b)
	assert.Equal(t, resp.StatusCode, e.Error.Code, "code")
	assert.NotEmpty(t, e.Error.Message)
	assert.NotEmpty(t, e.Error.Type)
	return e
}

// badRequest posts body to a default server in a bubble and checks the answer is a 400
// BadRequestError naming wantParam; it returns the error body.
func badRequest(t *testing.T, body, wantParam string) openAIError {
	t.Helper()
	var e openAIError
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{})
		resp := ts.post(context.Background(), body)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "POST %s", body)
		e = decodeError(t, resp)
		assert.Equal(t, "BadRequestError", e.Error.Type)
		assert.Equal(t, wantParam, param(e), "param of POST %s (message %q)", body, e.Error.Message)
	})
	return e
}

func param(e openAIError) string {
	if e.Error.Param == nil {
		return "<null>"
	}
	return *e.Error.Param
}

// TestBadRequests checks that each malformed request gets 400 with an OpenAI error body
// naming the parameter.
func TestBadRequests(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		name, body, param string
	}{
		// Not JSON at all.
		{"malformed", `{"model":"deepseek-v4-flash",`, "<null>"},
		// JSON, but not an object.
		{"array", `[1,2]`, "<null>"},
		{"empty", ``, "<null>"},
		{"missing-model", `{` + msgs + `}`, "model"},
		{"model-type", `{"model":7,` + msgs + `}`, "model"},
		{"missing-messages", `{"model":"deepseek-v4-flash"}`, "messages"},
		{"empty-messages", `{"model":"deepseek-v4-flash","messages":[]}`, "messages"},
		{"messages-type", `{"model":"deepseek-v4-flash","messages":"hi"}`, "messages"},
		{"bad-role", `{"model":"deepseek-v4-flash","messages":[{"role":"wizard","content":"hi"}]}`, "messages[0].role"},
		{"missing-role", `{"model":"deepseek-v4-flash","messages":[{"content":"hi"}]}`, "messages[0].role"},
		{"content-type", `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":3}]}`, "messages[0].content"},
		{"missing-content", `{"model":"deepseek-v4-flash","messages":[{"role":"system","content":"x"},{"role":"user"}]}`, "messages[1].content"},
		{"image-part", `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]}`, "messages[0].content[0].type"},
		{"part-text-type", `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":[{"type":"text","text":1}]}]}`, "messages[0].content"},
		{"negative-max-tokens", `{"model":"deepseek-v4-flash",` + msgs + `,"max_tokens":-5}`, "max_tokens"},
		{"zero-max-completion-tokens", `{"model":"deepseek-v4-flash",` + msgs + `,"max_completion_tokens":0}`, "max_completion_tokens"},
		{"max-tokens-type", `{"model":"deepseek-v4-flash",` + msgs + `,"max_tokens":"10"}`, "max_tokens"},
		{"max-tokens-fraction", `{"model":"deepseek-v4-flash",` + msgs + `,"max_tokens":1.5}`, "max_tokens"},
		{"stream-type", `{"model":"deepseek-v4-flash",` + msgs + `,"stream":"yes"}`, "stream"},
		{"include-usage-type", `{"model":"deepseek-v4-flash",` + msgs + `,"stream":true,"stream_options":{"include_usage":1}}`, "stream_options.include_usage"},
		{"n", `{"model":"deepseek-v4-flash",` + msgs + `,"n":2}`, "n"},
		{"effort-type", `{"model":"deepseek-v4-flash",` + msgs + `,"reasoning_effort":3}`, "reasoning_effort"},
	} {
		t.Run(tc.name, func(t *testing.T) { badRequest(t, tc.body, tc.param) })
	}
}

// TestAcceptedShapes checks request shapes real clients send: unknown fields, assistant
// messages with reasoning and no content, developer and tool roles, n=1, null options.
func TestAcceptedShapes(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{})
		body := `{"model":"deepseek-v4-flash","temperature":0.2,"tools":[],"n":1,"max_tokens":null,"stream_options":null,
			"messages":[{"role":"developer","content":"d"},{"role":"user","content":"u"},
			{"role":"assistant","content":null,"reasoning_content":"thought","tool_calls":[{"id":"c1"}]},
			{"role":"tool","tool_call_id":"c1","content":"result"},
			{"role":"assistant","content":"a","reasoning":"r"},{"role":"user","content":"next"}],
			"max_completion_tokens":3}`
		resp := ts.post(context.Background(), body)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "body %s", b)
	})
}

// TestContextTooLong checks the engine's context limit comes back as 400 on messages.
func TestContextTooLong(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := engine.DSV4PD()
		p.MaxContextTokens, p.KVCapacityTokens = 100, 1000
		ts := startServer(t, simserver.Options{Profile: p})
		resp := ts.post(context.Background(), `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"`+strings.Repeat("word ", 120)+`"}]}`)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
		e := decodeError(t, resp)
		assert.Equal(t, "messages", param(e))
		assert.Contains(t, e.Error.Message, "maximum context length is 100 tokens")
		assert.Contains(t, e.Error.Message, "However, your request has 127 input tokens.", "vLLM's wording, with the prompt's length")
	})
}

// TestRequestTooLarge checks the body limit, whether the length is declared or not.
func TestRequestTooLarge(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{MaxRequestBytes: 1024})
		big := `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}]}`
		resp := ts.post(context.Background(), big)
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
		decodeError(t, resp)

		// Chunked: no Content-Length, the limit trips while reading.
		req, err := http.NewRequest(http.MethodPost, ts.url+"/v1/chat/completions", io.MultiReader(strings.NewReader(big)))
		require.NoError(t, err)
		req.ContentLength = -1
		resp, err = ts.client.Do(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
		decodeError(t, resp)

		resp = ts.post(context.Background(), `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"ok"}],"max_tokens":2}`)
		defer resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "a small body passes")
	})
}

// TestAPIKey checks that /v1/* needs the bearer key while /health and /metrics stay open,
// and that no answer or log line echoes the key.
func TestAPIKey(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var log strings.Builder
		const key = "sk-very-secret-key"
		ts := startServer(t, simserver.Options{APIKey: key, AccessLog: &log})
		body := `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`
		for _, tc := range []struct {
			name   string
			header []string
			want   int
		}{
			{"none", nil, http.StatusUnauthorized},
			{"wrong", []string{"Authorization", "Bearer sk-wrong"}, http.StatusUnauthorized},
			{"prefix", []string{"Authorization", "Bearer " + key[:5]}, http.StatusUnauthorized},
			{"not-bearer", []string{"Authorization", "Basic " + key}, http.StatusUnauthorized},
			{"right", []string{"Authorization", "Bearer " + key}, http.StatusOK},
			{"scheme-case", []string{"Authorization", "bearer " + key}, http.StatusOK},
		} {
			resp := ts.post(context.Background(), body, tc.header...)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, tc.want, resp.StatusCode, "%s: %s", tc.name, b)
			assert.NotContains(t, string(b), key, tc.name)
		}
		code, b := ts.get("/v1/models")
		assert.Equal(t, http.StatusUnauthorized, code, "/v1/models needs the key: %s", b)
		code, _ = ts.get("/health")
		assert.Equal(t, http.StatusOK, code)
		code, _ = ts.get("/metrics")
		assert.Equal(t, http.StatusOK, code)
		ts.Close()
		assert.NotContains(t, log.String(), key)
		assert.Equal(t, 6, strings.Count(log.String(), "smg::response:"), "one end line per chat request:\n%s", log.String())
		assert.Equal(t, 6, strings.Count(log.String(), "smg::request:"), "one start line per chat request:\n%s", log.String())
	})
}

// TestRoutes checks /v1/models, /health, and the 404 and 405 bodies.
func TestRoutes(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ts := startServer(t, simserver.Options{})
		code, b := ts.get("/v1/models")
		require.Equal(t, http.StatusOK, code)
		var models struct {
			Object string `json:"object"`
			Data   []struct {
				ID     string `json:"id"`
				Object string `json:"object"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal([]byte(b), &models))
		assert.Equal(t, "list", models.Object)
		require.Len(t, models.Data, 1)
		assert.Equal(t, "deepseek-v4-flash", models.Data[0].ID)
		assert.Equal(t, "model", models.Data[0].Object)

		code, _ = ts.get("/health")
		assert.Equal(t, http.StatusOK, code)

		resp, err := ts.client.Get(ts.url + "/v1/nope")
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, resp.StatusCode)
		assert.Equal(t, "NotFoundError", decodeError(t, resp).Error.Type)

		for _, tc := range []struct{ method, path, allow string }{
			{http.MethodGet, "/v1/chat/completions", "POST"},
			{http.MethodPut, "/v1/chat/completions", "POST"},
			{http.MethodPost, "/v1/models", "GET"},
			{http.MethodDelete, "/health", "GET"},
			{http.MethodPost, "/metrics", "GET"},
		} {
			req, err := http.NewRequest(tc.method, ts.url+tc.path, nil)
			require.NoError(t, err)
			resp, err := ts.client.Do(req)
			require.NoError(t, err)
			require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "%s %s", tc.method, tc.path)
			assert.Equal(t, tc.allow, resp.Header.Get("Allow"))
			decodeError(t, resp)
		}
	})
}

// TestNewValidates checks that New reports every bad option at once.
func TestNewValidates(t *testing.T) {
	_, err := simserver.New(simserver.Options{MaxRequestBytes: -1, ReasoningField: "thoughts",
		ServedModelNames: []string{""}, ReadTimeout: -time.Second})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `served model names: [""]`)
	assert.Contains(t, err.Error(), "read timeout: -1s")
	assert.Contains(t, err.Error(), "max request bytes: -1")
	assert.Contains(t, err.Error(), `reasoning field: "thoughts"`)
}

// TestValidationLikeVLLM checks the answers vLLM gives for requests it refuses after decoding
// them: an unknown model (404 on model), a completion budget beyond the context the prompt
// leaves (400 with the token numbers), an effort the model does not know, sampling parameters
// of the wrong type or out of range, and numbers JSON cannot carry.
func TestValidationLikeVLLM(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	const model = `"model":"deepseek-v4-flash",`
	for _, tc := range []struct {
		name, body string
		status     int
		typ, param string
		message    string // a part of the message
	}{
		// vLLM's _check_model.
		{"unknown-model", `{"model":"gpt-4o",` + msgs + `}`, 404, "NotFoundError", "model", "The model `gpt-4o` does not exist."},
		// The prompt (8 tokens here) plus max_tokens must fit 100 tokens of context.
		{"max-tokens-over-context", `{` + model + msgs + `,"max_tokens":95}`, 400, "BadRequestError", "max_tokens",
			"'max_tokens' or 'max_completion_tokens' is too large: 95. This model's maximum context length is 100 tokens and your request has 8 input tokens (95 > 100 - 8)."},
		{"max-completion-tokens-over-context", `{` + model + msgs + `,"max_completion_tokens":1000}`, 400, "BadRequestError", "max_completion_tokens", "is too large: 1000."},
		{"effort-unknown", `{` + model + msgs + `,"reasoning_effort":"turbo"}`, 400, "BadRequestError", "reasoning_effort",
			`reasoning_effort must be one of "high", "low", "max", "medium", "minimal", "none"; got "turbo"`},
		{"temperature-type", `{` + model + msgs + `,"temperature":"hot","max_tokens":10}`, 400, "BadRequestError", "temperature", "temperature must be of type number"},
		{"temperature-negative", `{` + model + msgs + `,"temperature":-1}`, 400, "BadRequestError", "temperature", "temperature must be a number ≥ 0, got -1"},
		{"top-p-zero", `{` + model + msgs + `,"top_p":0}`, 400, "BadRequestError", "top_p", "(0, 1]"},
		{"presence-penalty", `{` + model + msgs + `,"presence_penalty":3}`, 400, "BadRequestError", "presence_penalty", "[-2, 2]"},
		{"frequency-penalty-type", `{` + model + msgs + `,"frequency_penalty":true}`, 400, "BadRequestError", "frequency_penalty", "number"},
		{"seed-fraction", `{` + model + msgs + `,"seed":1.5}`, 400, "BadRequestError", "seed", "integer"},
		{"top-k", `{` + model + msgs + `,"top_k":-2}`, 400, "BadRequestError", "top_k", "got -2"},
		{"top-logprobs", `{` + model + msgs + `,"top_logprobs":21}`, 400, "BadRequestError", "top_logprobs", "[0, 20]"},
		{"logprobs-type", `{` + model + msgs + `,"logprobs":"yes"}`, 400, "BadRequestError", "logprobs", "boolean"},
		{"stop-type", `{` + model + msgs + `,"stop":[1,2]}`, 400, "BadRequestError", "stop", "string or an array of strings"},
		{"tools-type", `{` + model + msgs + `,"tools":{}}`, 400, "BadRequestError", "tools", "array"},
		{"tool-choice", `{` + model + msgs + `,"tool_choice":"always"}`, 400, "BadRequestError", "tool_choice", `got "always"`},
		{"response-format", `{` + model + msgs + `,"response_format":{"type":"yaml"}}`, 400, "BadRequestError", "response_format.type", "json_object"},
		{"user-type", `{` + model + msgs + `,"user":42}`, 400, "BadRequestError", "user", "string"},
		{"logit-bias-type", `{` + model + msgs + `,"logit_bias":{"50256":"x"}}`, 400, "BadRequestError", "logit_bias", "number"},
		{"negative-max-tokens", `{` + model + msgs + `,"max_tokens":-1}`, 400, "BadRequestError", "max_tokens", "at least 1"},
		{"max-tokens-overflow", `{` + model + msgs + `,"max_tokens":1e30}`, 400, "BadRequestError", "max_tokens", "integer"},
		{"n", `{` + model + msgs + `,"n":4}`, 400, "BadRequestError", "n", "n must be 1"},
		// JSON has no NaN or infinities; a body that spells them is not JSON.
		{"nan", `{` + model + msgs + `,"temperature":NaN}`, 400, "BadRequestError", "<null>", "not valid JSON"},
		{"infinity", `{` + model + msgs + `,"top_p":Infinity}`, 400, "BadRequestError", "<null>", "not valid JSON"},
		{"huge-number", `{` + model + msgs + `,"temperature":1e400}`, 400, "BadRequestError", "temperature", "number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				p := engine.DSV4PD()
				p.MaxContextTokens, p.KVCapacityTokens = 100, 1000
				ts := startServer(t, simserver.Options{Profile: p})
				resp := ts.post(context.Background(), tc.body)
				require.Equal(t, tc.status, resp.StatusCode, "POST %s", tc.body)
				e := decodeError(t, resp)
				assert.Equal(t, tc.typ, e.Error.Type)
				assert.Equal(t, tc.param, param(e), "param of POST %s (message %q)", tc.body, e.Error.Message)
				assert.Contains(t, e.Error.Message, tc.message, "message of POST %s", tc.body)
			})
		})
	}
}

// TestValidRequestsPass checks that the limits are not too tight: a budget that exactly fills
// the context, every effort the profile knows, in-range sampling parameters, and an alias
// among the served model names are all accepted.
func TestValidRequestsPass(t *testing.T) {
	bubble(t, func(t *testing.T) {
		p := engine.DSV4PD()
		p.MaxContextTokens, p.KVCapacityTokens = 100, 1000
		ts := startServer(t, simserver.Options{Profile: p, ServedModelNames: []string{"deepseek-v4-flash", "dsv4"}})
		const msgs = `"messages":[{"role":"user","content":"hi"}]`
		bodies := []string{
			`{"model":"deepseek-v4-flash",` + msgs + `,"max_tokens":92}`,
			`{"model":"dsv4",` + msgs + `,"max_tokens":2,"temperature":0,"top_p":1,"top_k":-1,"min_p":0,"seed":-7,
				"presence_penalty":-2,"frequency_penalty":2,"repetition_penalty":1.1,"stop":"\n","logprobs":false,
				"top_logprobs":0,"logit_bias":{"1":-100},"user":"u","tools":[],"tool_choice":"auto",
				"parallel_tool_calls":true,"response_format":{"type":"json_object"},"min_tokens":0}`,
			`{"model":"dsv4",` + msgs + `,"max_tokens":2,"stop":["a","b"],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"f"}}}`,
		}
		for _, effort := range []string{"none", "minimal", "low", "medium", "high", "max"} {
			bodies = append(bodies, `{"model":"dsv4",`+msgs+`,"max_tokens":2,"reasoning_effort":"`+effort+`"}`)
		}
		for _, body := range bodies {
			resp := ts.post(context.Background(), body)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode, "POST %s: %s", body, b)
		}
		code, models := ts.get("/v1/models")
		require.Equal(t, http.StatusOK, code)
		assert.Contains(t, models, `"id":"deepseek-v4-flash"`)
		assert.Contains(t, models, `"id":"dsv4"`)
	})
}
