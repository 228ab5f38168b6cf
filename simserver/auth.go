package simserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// authorize checks the request's API key when the server has one, answering 401 when it is
// missing or wrong. Keys are compared as SHA-256 digests in constant time, so neither their
// content nor their length leaks through timing; the key is never logged or echoed.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.APIKey == "" {
		return true
	}
	got, ok := bearerToken(r.Header.Get("Authorization"))
	if ok {
		sum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(sum[:], s.keyHash[:]) == 1 {
			return true
		}
	}
	w.Header().Set("WWW-Authenticate", "Bearer")
	writeError(w, &apiError{Status: http.StatusUnauthorized, Type: "AuthenticationError",
		Message: "Invalid or missing API key: send it as Authorization: Bearer <key>."})
	return false
}

// bearerToken extracts the token of an "Authorization: Bearer <token>" header; the scheme is
// case-insensitive.
func bearerToken(header string) (string, bool) {
	const scheme = "bearer "
	if len(header) < len(scheme) || !strings.EqualFold(header[:len(scheme)], scheme) {
		return "", false
	}
	return strings.TrimSpace(header[len(scheme):]), true
}
