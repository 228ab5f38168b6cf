package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// CheckServer makes sure the server answers before any agent starts: GET /v1/models must
// return 2xx within timeout (wall time). A wrong API key (401/403) is reported as such.
func CheckServer(ctx context.Context, hc *http.Client, baseURL, apiKey string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/v1/models", nil)
	if err != nil {
		return fmt.Errorf("server %s: %w", baseURL, err)
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("server unreachable: %s: %w", baseURL, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("server %s refused the API key: GET /v1/models → %d", baseURL, resp.StatusCode)
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("server %s is not ready: GET /v1/models → %d", baseURL, resp.StatusCode)
	}
	return nil
}
