package bench

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
)

// fallbackModel is sent when the server lists no model.
const fallbackModel = "default"

// discoverModel returns the first model the server lists on GET /v1/models, or fallbackModel
// when it lists none or the answer cannot be read (servers that serve one model, as SGLang
// does, accept any name).
func discoverModel(ctx context.Context, hc *http.Client, baseURL, apiKey string) string {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/v1/models", nil)
	if err != nil {
		return fallbackModel
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fallbackModel
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if resp.StatusCode/100 != 2 || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list) != nil ||
		len(list.Data) == 0 || list.Data[0].ID == "" {
		return fallbackModel
	}
	return list.Data[0].ID
}
