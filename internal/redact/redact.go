// Package redact removes credentials from server URLs and from text that may quote them, so
// that no secret reaches the console, an error message, events.jsonl, results.json or
// config.yaml. Every writer of a user-supplied URL goes through URL or Text.
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Mask is what replaces a secret.
const Mask = "redacted"

// secretParams are query parameter names (lower case, '-' read as '_') whose values are
// credentials, as servers and gateways name them.
var secretParams = map[string]bool{
	"api_key": true, "apikey": true, "key": true, "token": true, "access_token": true,
	"auth": true, "authorization": true, "password": true, "secret": true, "sig": true,
	"signature": true, "x_api_key": true,
}

// URL returns raw with its userinfo (user and password) and the values of credential-like
// query parameters replaced by Mask. A string that does not parse as a URL is returned with
// anything that looks like userinfo masked (see Text), so a malformed URL in an error message
// leaks nothing either.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" && u.Host == "" {
		return Text(raw)
	}
	if u.User != nil {
		u.User = url.User(Mask)
	}
	if u.RawQuery != "" {
		u.RawQuery = query(u.RawQuery)
	}
	out := u.String()
	// url.Parse lowers the scheme; keep the user's spelling so the text reads as given.
	if len(raw) >= len(u.Scheme) && strings.EqualFold(raw[:len(u.Scheme)], u.Scheme) {
		out = raw[:len(u.Scheme)] + out[len(u.Scheme):]
	}
	return out
}

// query masks the values of credential-like parameters in a raw query string, keeping the
// order and the encoding of every other parameter.
func query(raw string) string {
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		if !hasValue {
			continue
		}
		if n, err := url.QueryUnescape(name); err == nil && secretParams[strings.ReplaceAll(strings.ToLower(n), "-", "_")] {
			parts[i] = name + "=" + Mask
		}
	}
	return strings.Join(parts, "&")
}

// inText finds URLs with userinfo or a query inside free text: scheme://userinfo@host… or
// scheme://host…?query.
var inText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`)

// Text returns s with every URL in it redacted as URL does. Use it on error messages and
// other text that may quote a URL, such as net/http's errors.
func Text(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return inText.ReplaceAllStringFunc(s, func(m string) string {
		// Trailing punctuation belongs to the sentence, not the URL, and a trailing
		// backslash to the escaped quote that ends a URL quoted in quoted text (%q).
		trimmed := strings.TrimRight(m, ".,;:)]}\\")
		return redactLoose(trimmed) + m[len(trimmed):]
	})
}

// redactLoose redacts one URL found in text; it masks userinfo even when the URL does not
// parse (an unescaped character in the password, say).
func redactLoose(m string) string {
	if u, err := url.Parse(m); err == nil && u.Host != "" {
		return URL(m)
	}
	scheme, rest, _ := strings.Cut(m, "://")
	host := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host = rest[:i]
	}
	if at := strings.LastIndex(host, "@"); at >= 0 {
		rest = Mask + rest[at:]
	}
	return scheme + "://" + rest
}
