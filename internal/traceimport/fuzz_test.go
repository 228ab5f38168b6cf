package traceimport

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentsim/agentsim/trace"
)

// addFiles seeds f with the testdata files matching pattern.
func addFiles(f *testing.F, pattern string) {
	files, _ := filepath.Glob(filepath.Join("testdata", pattern))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// checkImported: whatever an importer accepts, it writes as a trace the reader accepts.
func checkImported(t *testing.T, tr *Trace) {
	var buf bytes.Buffer
	if err := tr.Write(&buf); err != nil {
		t.Fatalf("Write of an imported trace: %v", err)
	}
	if _, err := trace.Validate(&buf, "imported.jsonl"); err != nil {
		t.Fatalf("the imported trace does not validate: %v", err)
	}
}

// FuzzMooncake: any input is refused or imported as a valid trace, and the fast line parser
// never accepts a line differently from encoding/json.
func FuzzMooncake(f *testing.F) {
	addFiles(f, "mooncake-*.jsonl")
	f.Add([]byte(`{"timestamp": 1.5e3, "input_length": 0, "output_length": 0, "hash_ids": [], "extra": -2}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, line := range bytes.Split(in, []byte("\n")) {
			var fast, slow mooncakeLine
			var arena []uint64
			if !parseMooncakeFast(bytes.TrimSpace(line), &fast, &arena) {
				continue
			}
			if err := json.Unmarshal(line, &slow); err != nil {
				t.Fatalf("fast parser accepted %q, encoding/json refuses it: %v", line, err)
			}
			if !reflect.DeepEqual(fast, slow) && !(len(fast.HashIDs) == 0 && len(slow.HashIDs) == 0) {
				t.Fatalf("line %q: fast parser read %+v, encoding/json %+v", line, fast, slow)
			}
		}
		tr, err := Mooncake(bytes.NewReader(in), "fuzz.jsonl")
		if err != nil {
			return
		}
		checkImported(t, tr)
	})
}

// FuzzAccessLog: any input is refused or imported as a valid trace.
func FuzzAccessLog(f *testing.F) {
	addFiles(f, "*.log")
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, u := range []Unit{UnitUnknown, Microseconds} {
			tr, err := AccessLog(bytes.NewReader(in), "fuzz.log", u)
			if err != nil {
				continue
			}
			checkImported(t, tr)
		}
	})
}
