package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/results"
)

// CheckTimeout is how long, in wall time, a server has to answer GET /v1/models before a run
// starts.
const CheckTimeout = 5 * time.Second

// Served is what a server said about itself on GET /v1/models: the models it serves, in its
// order. An empty list means the server listed nothing readable; servers that serve one model
// under any name (as SGLang may) answer so.
type Served struct {
	Models []ServedModel
	// Speedup is the speedup an agentsim server advertises in wire.SpeedupHeader: simulated
	// seconds per wall second of its clock, which a run against it must adopt; 0 for any
	// other server.
	Speedup float64
}

// clock returns the clock a run against the server runs on: at the speedup it advertises,
// and true, when that is above 1; real time otherwise (served nil: nothing is known).
func (s *Served) clock() (*clock.Clock, bool) {
	if s == nil || s.Speedup <= 1 {
		return clock.Real(), false
	}
	clk, err := clock.New(s.Speedup)
	if err != nil { // AskServer accepts only a valid speedup
		return clock.Real(), false
	}
	return clk, true
}

// ServedModel is one model a server lists.
type ServedModel struct {
	// ID is the name requests must send as "model".
	ID string
	// MaxModelLen is the model's context window in tokens, prompt and output together, as
	// vLLM and servers shaped like it list it (max_model_len); 0 when the server does not say.
	MaxModelLen int
	// SlotContext is the context window of one request in tokens as llama.cpp's llama-server
	// lists it (meta.n_ctx: its -c divided among its -np slots); 0 when the server does not
	// say. meta.n_ctx_train, the model's own ceiling, is not what a request gets.
	SlotContext int
}

// ContextWindow is the context window of one request in tokens and the field it was read
// from (results.FromMaxModelLen when listed, else results.FromMetaNCtx); 0 and "" when the
// server lists neither.
func (m ServedModel) ContextWindow() (int, string) {
	switch {
	case m.MaxModelLen > 0:
		return m.MaxModelLen, results.FromMaxModelLen
	case m.SlotContext > 0:
		return m.SlotContext, results.FromMetaNCtx
	}
	return 0, ""
}

// IDs returns the served model names, in the server's order.
func (s *Served) IDs() []string {
	if s == nil {
		return nil
	}
	ids := make([]string, len(s.Models))
	for i, m := range s.Models {
		ids[i] = m.ID
	}
	return ids
}

// find returns the served model named id.
func (s *Served) find(id string) (ServedModel, bool) {
	if s == nil {
		return ServedModel{}, false
	}
	for _, m := range s.Models {
		if m.ID == id {
			return m, true
		}
	}
	return ServedModel{}, false
}

// ErrKeyRequired marks the error of a server that refuses a request sent without an API key.
var ErrKeyRequired = errors.New("requires an API key")

// CheckServer makes sure the server answers before any agent starts: GET /v1/models must
// return 2xx within timeout (wall time). A 401 or 403 is reported as a key refused, or, when
// no key was given, as a key required.
func CheckServer(ctx context.Context, hc *http.Client, baseURL, apiKey string, timeout time.Duration) error {
	_, err := AskServer(ctx, hc, baseURL, apiKey, timeout)
	return err
}

// ListModels is AskServer's list of model names, in the server's order.
func ListModels(ctx context.Context, hc *http.Client, baseURL, apiKey string, timeout time.Duration) ([]string, error) {
	s, err := AskServer(ctx, hc, baseURL, apiKey, timeout)
	return s.IDs(), err
}

// AskServer asks the server GET /v1/models once, within timeout (wall time), and returns what
// it serves and the speedup it advertises. The error is CheckServer's: the server unreachable,
// the API key refused, or a status other than 2xx; or a wire.SpeedupHeader that is not a valid
// speedup. A 2xx answer that lists nothing readable is no error: it gives a Served without
// models.
func AskServer(ctx context.Context, hc *http.Client, baseURL, apiKey string, timeout time.Duration) (*Served, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/v1/models", nil)
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", baseURL, err)
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("server unreachable: %s: %w", baseURL, err)
	}
	defer resp.Body.Close()
	switch {
	case (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) && apiKey == "":
		return nil, fmt.Errorf("server %s %w: GET /v1/models → %d without one", baseURL, ErrKeyRequired, resp.StatusCode)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("server %s refused the API key: GET /v1/models → %d", baseURL, resp.StatusCode)
	case resp.StatusCode/100 != 2:
		return nil, fmt.Errorf("server %s is not ready: GET /v1/models → %d", baseURL, resp.StatusCode)
	}
	speedup, err := advertised(resp.Header, baseURL)
	if err != nil {
		return nil, err
	}
	var list struct {
		Data []struct {
			ID          string          `json:"id"`
			MaxModelLen json.Number     `json:"max_model_len"`
			Meta        json.RawMessage `json:"meta"`
		} `json:"data"`
	}
	body := io.LimitReader(resp.Body, 1<<20)
	err = json.NewDecoder(body).Decode(&list)
	_, _ = io.Copy(io.Discard, body) // drained, the connection is reused
	s := &Served{Speedup: speedup}
	if err != nil {
		return s, nil
	}
	for _, m := range list.Data {
		if m.ID == "" {
			continue
		}
		n, _ := m.MaxModelLen.Int64()
		var meta struct {
			NCtx json.Number `json:"n_ctx"`
		}
		_ = json.Unmarshal(m.Meta, &meta) // a meta not shaped as llama-server's lists no window
		slot, _ := meta.NCtx.Int64()
		s.Models = append(s.Models, ServedModel{ID: m.ID, MaxModelLen: int(max(n, 0)), SlotContext: int(max(slot, 0))})
	}
	return s, nil
}
