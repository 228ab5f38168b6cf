package traceimport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/trace"
)

// watched imports the directory of a watched recording (record --watch), whose record.json
// names the trace the proxy wrote beside it. That trace is what the proxy saw — each
// request's model, and whether its token counts are the server's or estimated — where the
// directory's events and config.yaml only stand in for them (the workload's placeholder
// model, counts without their provenance). ok is false for any other directory.
func watched(dir string) (t *Trace, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, rundir.Record))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	var info struct {
		Trace string `json:"trace"`
	}
	if err := json.Unmarshal(b, &info); err != nil || info.Trace == "" {
		return nil, true, fmt.Errorf("%s: want the recording's record.json, naming its trace", filepath.Join(dir, rundir.Record))
	}
	path := filepath.Join(dir, filepath.Base(info.Trace))
	f, err := os.Open(path)
	if err != nil {
		return nil, true, fmt.Errorf("%s names the trace %s: %w", filepath.Join(dir, rundir.Record), info.Trace, err)
	}
	defer f.Close()
	rd, err := trace.NewReader(f, path)
	if err != nil {
		return nil, true, err
	}
	t = &Trace{Header: rd.Header()}
	estimated := 0
	for {
		r, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, true, err
		}
		if r.TokensEstimated {
			estimated++
		}
		t.Requests = append(t.Requests, r)
	}
	t.finish()
	t.Notes = append(t.Notes, fmt.Sprintf("run %s was recorded by a proxy: its trace %s is imported as recorded (each request's model; %d of %d with estimated token counts)",
		dir, info.Trace, estimated, len(t.Requests)))
	return t, true, nil
}
