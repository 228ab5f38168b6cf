package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/internal/wire"
)

// ServerSpeedup asks the server GET /v1/models once, within timeout (wall time), and returns
// the speedup it advertises in its speedup header (simserver.SpeedupHeader): simulated seconds
// per wall second of an agentsim server, which a harness must adopt for its timeouts, think
// and tool times and watchdog to run on the server's clock. found is false for any other
// server (the speedup is then 1) and when the server does not answer; a header that is not a
// valid speedup is an error.
func ServerSpeedup(ctx context.Context, hc *http.Client, baseURL, apiKey string, timeout time.Duration) (speedup float64, found bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/v1/models", nil)
	if err != nil {
		return 1, false, nil
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 1, false, nil // unreachable: CheckServer says so
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	s, err := advertised(resp.Header, baseURL)
	if err != nil || s == 0 {
		return 1, false, err
	}
	return s, true, nil
}

// advertised reads the speedup a response of the server at baseURL advertises in
// wire.SpeedupHeader; 0 when it advertises none. A header that is not a valid speedup is an error.
func advertised(h http.Header, baseURL string) (float64, error) {
	v := h.Get(wire.SpeedupHeader)
	if v == "" {
		return 0, nil
	}
	s, err := strconv.ParseFloat(v, 64)
	if err == nil {
		err = clock.ValidateSpeedup(s)
	}
	if err != nil {
		return 0, fmt.Errorf("server %s advertises %s: %q, not a speedup from 1 to 1000000", baseURL, wire.SpeedupHeader, v)
	}
	return s, nil
}
