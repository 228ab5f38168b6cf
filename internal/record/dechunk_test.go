package record

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dechunkAll decodes body cut into reads at the given offsets, as pump does, and returns the
// data, the bytes after the body's end, and the error.
func dechunkAll(body []byte, cuts ...int) (data []byte, extra int, done bool, err error) {
	var d dechunker
	at := 0
	for _, c := range append(cuts, len(body)) {
		p := bytes.Clone(body[at:c])
		at = c
		n, x, derr := d.decode(p)
		data = append(data, p[:n]...)
		extra += x
		if derr != nil {
			return data, extra, d.done(), derr
		}
	}
	return data, extra, d.done(), nil
}

// chunked encodes frames as net/http's server does, one chunk a flush.
func chunked(frames ...string) []byte {
	var b bytes.Buffer
	w := httputil.NewChunkedWriter(&b)
	for _, f := range frames {
		_, _ = io.WriteString(w, f)
	}
	_ = w.Close()
	b.WriteString("\r\n")
	return b.Bytes()
}

// TestDechunkEveryCut: a chunked body cut anywhere, once or twice, decodes to its data, ends
// at its end, and leaves nothing over.
func TestDechunkEveryCut(t *testing.T) {
	frames := []string{"data: {\"a\":1}\n\n", strings.Repeat("x", 300), "data: [DONE]\n\n"}
	body := chunked(frames...)
	want := strings.Join(frames, "")
	for i := 0; i <= len(body); i++ {
		for j := i; j <= len(body); j++ {
			data, extra, done, err := dechunkAll(body, i, j)
			require.NoError(t, err, "cuts %d %d", i, j)
			require.True(t, done, "cuts %d %d", i, j)
			require.Zero(t, extra)
			require.Equal(t, want, string(data), "cuts %d %d", i, j)
		}
	}
}

// TestDechunkFraming: extensions, whitespace, a bare LF and trailers read as net/http's
// chunked reader and body read them; malformed framing fails; bytes past the end are counted.
func TestDechunkFraming(t *testing.T) {
	for _, tc := range []struct {
		name, body, data string
		trailer          http.Header
		extra            int
		fails            bool
	}{
		{name: "extension", body: "3;name=v\r\nabc\r\n0\r\n\r\n", data: "abc"},
		{name: "whitespace", body: "3 \t\r\nabc\r\n0\r\n\r\n", data: "abc"},
		{name: "whitespace, then an extension", body: "3 ;x\r\nabc\r\n0\r\n\r\n", fails: true},
		{name: "bare LF", body: "3\nabc\r\n0\r\n\r\n", fails: true},
		{name: "CR in the extension", body: "3;a\rb\r\nabc\r\n0\r\n\r\n", fails: true},
		{name: "too much framing", body: strings.Repeat("1;"+strings.Repeat("e", 1000)+"\r\nx\r\n", 20) + "0\r\n\r\n", data: strings.Repeat("x", 16), fails: true},
		{name: "upper hex", body: "A\r\n0123456789\r\n0\r\n\r\n", data: "0123456789"},
		{name: "trailer", body: "3\r\nabc\r\n0\r\nX-Usage: 7\r\nY: a\r\n\r\n", data: "abc", trailer: http.Header{"X-Usage": {"7"}, "Y": {"a"}}},
		{name: "past the end", body: "3\r\nabc\r\n0\r\n\r\nHTTP/1.1", data: "abc", extra: 8},
		{name: "no digits", body: "\r\nabc\r\n0\r\n\r\n", fails: true},
		{name: "not hex", body: "3x\r\nabc\r\n0\r\n\r\n", fails: true},
		{name: "space in the size", body: "3 3\r\nabc\r\n0\r\n\r\n", fails: true},
		{name: "no CRLF after the data", body: "3\r\nabcd\r\n0\r\n\r\n", data: "abc", fails: true},
		{name: "17 digits", body: "00000000000000003\r\nabc\r\n0\r\n\r\n", fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, extra, done, err := dechunkAll([]byte(tc.body))
			std, stdErr := io.ReadAll(httputil.NewChunkedReader(bufio.NewReader(strings.NewReader(tc.body))))
			if tc.fails {
				require.Error(t, err)
				assert.Error(t, stdErr, "net/http's reader fails it too")
				assert.Equal(t, string(std), string(data), "the data before the failure")
				return
			}
			require.NoError(t, err)
			require.NoError(t, stdErr)
			assert.True(t, done)
			assert.Equal(t, tc.data, string(data))
			assert.Equal(t, string(std), string(data))
			assert.Equal(t, tc.extra, extra)
			var d dechunker
			_, _, _ = d.decode([]byte(tc.body))
			tr, err := d.trailers()
			require.NoError(t, err)
			assert.Equal(t, tc.trailer, tr)
		})
	}
}

// FuzzDechunk holds the decoder, cut anywhere, to net/http's chunked reader: the same data,
// and a failure where it fails.
func FuzzDechunk(f *testing.F) {
	f.Add([]byte("3\r\nabc\r\n0\r\n\r\n"), 2)
	f.Add(chunked("data: {\"a\":1}\n\n", "data: [DONE]\n\n"), 9)
	f.Add([]byte("3;x\r\nabc\r\n0\r\nA: b\r\n\r\n"), 5)
	f.Fuzz(func(t *testing.T, body []byte, cut int) {
		if cut < 0 || cut > len(body) {
			cut = len(body) / 2
		}
		data, _, done, err := dechunkAll(body, cut)
		std, stdErr := io.ReadAll(httputil.NewChunkedReader(bufio.NewReader(bytes.NewReader(body))))
		if err == nil && done && stdErr == nil {
			assert.Equal(t, string(std), string(data))
		}
		if stdErr == nil && !bytes.Contains(body, []byte(";")) {
			// net/http's reader read a whole body: so does the decoder.
			require.NoError(t, err)
			assert.Equal(t, string(std), string(data))
		}
	})
}
