// Package traceimport turns other formats into agentsim.trace/v1: Mooncake request traces,
// router access logs and agentsim's own run directories. Each importer reads its whole source (sessions and latency units are
// inferred from all of it), then hands back the requests in send order with a header whose
// counts are stated.
package traceimport

import (
	"fmt"
	"io"
	"sort"

	"github.com/agentsim/agentsim/trace"
)

// Kinds are the source formats, in the order help lists them.
var Kinds = []string{"mooncake", "access-log", "run"}

// Trace is an imported trace: its header, its requests in the order they are written, and
// notes for the user (the inferred latency unit and its evidence, lines skipped…).
type Trace struct {
	Header   trace.Header
	Requests []trace.Request
	Notes    []string
}

// Write writes t as a trace file to w.
func (t *Trace) Write(w io.Writer) error {
	tw, err := trace.NewWriter(w, t.Header)
	if err != nil {
		return err
	}
	for _, r := range t.Requests {
		if err := tw.Write(r); err != nil {
			return err
		}
	}
	return tw.Close()
}

// finish sorts requests by send time (ties keep their order), numbers each session's
// requests in that order, and states the counts in the header.
func (t *Trace) finish() {
	sort.SliceStable(t.Requests, func(i, j int) bool { return t.Requests[i].TS < t.Requests[j].TS })
	sessions := map[string]bool{}
	for _, r := range t.Requests {
		sessions[r.Session] = true
	}
	t.Header.Schema = trace.Schema
	t.Header.Requests = len(t.Requests)
	t.Header.Sessions = len(sessions)
}

// lineErr is a problem at line n of the named source.
func lineErr(name string, n int, format string, a ...any) error {
	return &trace.LineError{Name: name, Line: n, Err: fmt.Errorf(format, a...)}
}
