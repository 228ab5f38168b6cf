package agents

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/internal/redact"
)

// maxMessage is the longest error message a terminal event keeps, in bytes.
const maxMessage = 400

// errorMessage is what a terminal event records of a failed call: the server's own words when
// it sent any — the message of its JSON error ("The model `x` does not exist."), or the start of
// a non-JSON error body — else the error's text; on one line, at most maxMessage bytes, with
// credentials in any URL it quotes redacted.
func errorMessage(err error) string {
	var (
		apiErr *openai.APIError
		reqErr *openai.RequestError
	)
	msg := err.Error()
	switch {
	case errors.As(err, &apiErr) && apiErr.Message != "":
		msg = apiErr.Message
		if apiErr.HTTPStatusCode == 0 { // an error frame inside a 200 stream
			msg = "error frame: " + msg
		}
	case errors.As(err, &reqErr) && len(reqErr.Body) > 0:
		msg = fmt.Sprintf("%s (body: %s)", reqErr.HTTPStatus, strings.TrimSpace(string(reqErr.Body)))
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage], "") + "…"
	}
	return redact.Text(msg)
}
