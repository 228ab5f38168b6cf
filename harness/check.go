package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// CheckTimeout is how long, in wall time, a server has to answer GET /v1/models before a run
// starts.
const CheckTimeout = 5 * time.Second

// CheckServer makes sure the server answers before any agent starts: GET /v1/models must
// return 2xx within timeout (wall time). A wrong API key (401/403) is reported as such.
func CheckServer(ctx context.Context, hc *http.Client, baseURL, apiKey string, timeout time.Duration) error {
	_, err := ListModels(ctx, hc, baseURL, apiKey, timeout)
	return err
}

// ListModels asks the server GET /v1/models once, within timeout (wall time), and returns the
// model ids it lists, in its order. The error is CheckServer's: the server unreachable, the API
// key refused, or a status other than 2xx. A 2xx answer that lists nothing readable is no error:
// servers that serve one model (as SGLang does) accept any name.
func ListModels(ctx context.Context, hc *http.Client, baseURL, apiKey string, timeout time.Duration) ([]string, error) {
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
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("server %s refused the API key: GET /v1/models → %d", baseURL, resp.StatusCode)
	case resp.StatusCode/100 != 2:
		return nil, fmt.Errorf("server %s is not ready: GET /v1/models → %d", baseURL, resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	body := io.LimitReader(resp.Body, 1<<20)
	err = json.NewDecoder(body).Decode(&list)
	_, _ = io.Copy(io.Discard, body) // drained, the connection is reused
	if err != nil {
		return nil, nil
	}
	var ids []string
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}
