package redact_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/internal/redact"
)

func TestURL(t *testing.T) {
	cases := []struct{ in, want string }{
		// A URL without secrets is unchanged, the embedded simulator's loopback URL among them.
		{"http://127.0.0.1:31002", "http://127.0.0.1:31002"},
		{"http://127.0.0.1:31002/metrics", "http://127.0.0.1:31002/metrics"},
		// User and password are both masked: a user name can be a token too.
		{"http://alice:hunter2@host:8000", "http://redacted@host:8000"},
		{"https://sk-abc123@host/v1", "https://redacted@host/v1"},
		// Credential-like query parameters keep their name, lose their value.
		{"http://host/metrics?api_key=s3cret&job=x", "http://host/metrics?api_key=redacted&job=x"},
		{"http://host/m?X-API-Key=s3cret", "http://host/m?X-API-Key=redacted"},
		{"http://host/m?token=a&Token=b", "http://host/m?token=redacted&Token=redacted"},
		// Not a URL: returned as text, with nothing to mask.
		{"not a url", "not a url"},
		// A password that does not parse is still masked.
		{"http://alice:hun%zzter@host", "http://redacted@host"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, redact.URL(c.in), "URL(%q)", c.in)
	}
}

func TestText(t *testing.T) {
	cases := []struct{ in, want string }{
		// net/http quotes the URL in its errors.
		{`Get "http://alice:***@10.0.0.1:30001/v1/models": dial tcp: connection refused`,
			`Get "http://redacted@10.0.0.1:30001/v1/models": dial tcp: connection refused`},
		// Sentence punctuation after a URL stays outside it.
		{"server http://u:p@host:1. Check it.", "server http://redacted@host:1. Check it."},
		{"two: http://a:b@h1, https://h2/?key=k", "two: http://redacted@h1, https://h2/?key=redacted"},
		{"no url here", "no url here"},
		// A URL inside a quoted error (%q) ends before the escaped quote: its backslash is
		// the quoting's, not the URL's, and is not shown as %5C.
		{`"Get \"http://alice:pw@gpu:8000/v1/models\": EOF"`, `"Get \"http://redacted@gpu:8000/v1/models\": EOF"`},
		{`"Get \"https://gpu:8000/v1/models\": EOF"`, `"Get \"https://gpu:8000/v1/models\": EOF"`},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, redact.Text(c.in), "Text(%q)", c.in)
	}
}

// FuzzText checks that whatever the password, a URL quoted in an error message loses it.
func FuzzText(f *testing.F) {
	for _, s := range []string{"hunter2", "p%zz", "", "a:b", "ü", "x%40y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pass string) {
		// These end the userinfo or the URL in free text, so they cannot be part of a password there.
		if strings.ContainsAny(pass, "@/?#\"'<> \t\r\n\v\f\u0085\u00a0") || !utf8.ValidString(pass) {
			t.Skip()
		}
		in := "error: http://alice:" + pass + "@host:1/v1 failed"
		want := "error: http://redacted@host:1/v1 failed"
		if got := redact.Text(in); got != want {
			t.Fatalf("Text(%q) = %q; want %q", in, got, want)
		}
	})
}
