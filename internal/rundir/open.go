package rundir

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// Run is one run directory read back.
type Run struct {
	// Dir is the directory as named.
	Dir string
	// Workload is the resolved workload Config recorded; nil only with
	// Options.OptionalWorkload, when that file is missing or cannot be read as one.
	Workload *workloads.Workload
	// Events are the Events file's records in file order, a last line cut short left out.
	Events []events.Event
	// Samples are the Samples file's records in file order (Options.Samples, or read for
	// Options.Derive).
	Samples []events.Sample
	// Results is the Results file (Options.Results), or what Options.Derive made of the
	// records when the file is missing; nil when neither was asked for or made.
	Results *results.Results
	// Proxy says the directory holds a Record file: its events are a recording proxy's view
	// of a real harness, each session an agent and each request a round (docs/files.md §4).
	Proxy bool
}

// Options say what Open reads beyond the Events and Config files and what it tolerates. The
// zero value reads those two and refuses either missing or malformed.
type Options struct {
	// Samples reads the Samples file into Run.Samples.
	Samples bool
	// Results reads the Results file into Run.Results; a missing one (a run killed before it
	// wrote it) leaves it nil.
	Results bool
	// Derive, with the Results file missing, makes Run.Results from the run's records (the
	// Samples file is then read whatever Samples says); it implies Results. It is a function
	// because the judging is diagnose's (diagnose.Derive), and diagnose reads run
	// directories through this package. Its error is Open's, saying the file is missing.
	Derive func(*Run) (*results.Results, error)
	// OptionalWorkload leaves Run.Workload nil when the Config file is missing or cannot be
	// read as a workload, instead of failing; Derive then fails with that error.
	OptionalWorkload bool
}

// Open reads the run in dir as o says. Every error names the file with its path: a missing
// one ("read runs/x/events.jsonl: no such file or directory"), a malformed line of a JSONL
// file ("runs/x/samples.jsonl line 3: …"), a Config file that is empty or not a valid
// workload, a Results file that is not JSON.
func Open(dir string, o Options) (*Run, error) {
	r := &Run{Dir: dir, Proxy: exists(filepath.Join(dir, Record))}
	var err error
	if r.Events, err = ReadEvents(dir); err != nil {
		return nil, err
	}
	w, workloadErr := readWorkload(filepath.Join(dir, Config))
	if workloadErr != nil && !o.OptionalWorkload {
		return nil, workloadErr
	}
	r.Workload = w
	if o.Samples {
		if r.Samples, err = readSamples(dir); err != nil {
			return nil, err
		}
	}
	if !o.Results && o.Derive == nil {
		return r, nil
	}
	r.Results, err = results.Read(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) && o.Derive != nil:
		if err := r.derive(o, workloadErr); err != nil {
			return nil, fmt.Errorf("%s: no %s, and its files cannot be judged: %w", dir, Results, err)
		}
	case errors.Is(err, fs.ErrNotExist):
		r.Results = nil
	case err != nil:
		return nil, err
	}
	return r, nil
}

// derive makes r.Results with o.Derive, reading the samples first if Open did not;
// workloadErr is why r.Workload is nil, if it is.
func (r *Run) derive(o Options, workloadErr error) error {
	if r.Workload == nil {
		return workloadErr
	}
	if !o.Samples {
		var err error
		if r.Samples, err = readSamples(r.Dir); err != nil {
			return err
		}
	}
	res, err := o.Derive(r)
	if err != nil {
		return err
	}
	r.Results = res
	return nil
}

// ReadEvents reads the Events file of the run in dir, as Open does: a last line cut short (a
// run killed mid-write) is left out, any other malformed line is an error naming the file
// and the line.
func ReadEvents(dir string) ([]events.Event, error) {
	return events.ReadFile[events.Event](filepath.Join(dir, Events))
}

// readSamples reads the Samples file of the run in dir, as ReadEvents reads the events.
func readSamples(dir string) ([]events.Sample, error) {
	return events.ReadFile[events.Sample](filepath.Join(dir, Samples))
}

// readWorkload reads the resolved workload a run wrote to its Config file, through the
// workloads loader (workloads.LoadRecorded): the same conversion, strictness, validation and
// bounded read as a workload file, skipping the settings the run redacted (server, api_key).
func readWorkload(path string) (*workloads.Workload, error) {
	data, err := workloads.ReadFile(path)
	if err != nil {
		return nil, readError(path, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("read %s: the file is empty", path)
	}
	w, err := workloads.LoadRecorded(data)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return w, nil
}

// readError says which file could not be read, without repeating its path.
func readError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return fmt.Errorf("read %s: %w", path, pe.Err)
	}
	return fmt.Errorf("read %s: %w", path, err)
}
