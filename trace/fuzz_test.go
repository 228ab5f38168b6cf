package trace_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentsim/agentsim/trace"
)

// FuzzReader: any input is either refused with a line-numbered error or read whole; what is
// read, written back by a Writer, reads back the same.
func FuzzReader(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		rd, err := trace.NewReader(bytes.NewReader(in), "fuzz.jsonl")
		if err != nil {
			var le *trace.LineError
			if !errors.As(err, &le) {
				t.Fatalf("NewReader error %v is not a *LineError", err)
			}
			return
		}
		var reqs []trace.Request
		for {
			r, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				var le *trace.LineError
				if !errors.As(err, &le) || le.Line < 1 {
					t.Fatalf("Next error %v is not a *LineError with a line", err)
				}
				return
			}
			reqs = append(reqs, r)
		}
		var buf bytes.Buffer
		w, err := trace.NewWriter(&buf, rd.Header())
		if err != nil {
			t.Fatalf("NewWriter(%+v): %v", rd.Header(), err)
		}
		for _, r := range reqs {
			if err := w.Write(r); err != nil {
				t.Fatalf("Write(%+v) of a request the reader accepted: %v", r, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		rd2, err := trace.NewReader(&buf, "rewritten.jsonl")
		if err != nil {
			t.Fatalf("re-read header: %v", err)
		}
		for i := range reqs {
			r, err := rd2.Next()
			if err != nil {
				t.Fatalf("re-read request %d: %v\n%s", i, err, buf.String())
			}
			if !equalRequest(r, reqs[i]) {
				t.Fatalf("request %d: read back %+v, wrote %+v", i, r, reqs[i])
			}
		}
	})
}

func equalRequest(a, b trace.Request) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}
