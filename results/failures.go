package results

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/agentsim/agentsim/events"
)

// Failure is one class of failed requests: how many ended so and what the server said the
// first time.
type Failure struct {
	// Class is the failure class events.jsonl records (http_status, error_frame,
	// timeout_idle…), or the terminal event's kind when it records none.
	Class events.Class `json:"class"`
	// Status is the HTTP status of an http_status failure; 0 otherwise.
	Status int `json:"status,omitempty"`
	// Count is how many requests (attempts, retries included) failed so.
	Count int `json:"count"`
	// FirstMessage is the first such request's error message — the server's own words where
	// it sent any — and FirstS when it ended, in simulated seconds since the run started.
	FirstMessage string  `json:"first_message,omitempty"`
	FirstS       float64 `json:"first_t_s"`
}

// Key names the failure's class and status, as "http_status 404" or "timeout_idle".
func (f Failure) Key() string {
	if f.Status != 0 {
		return string(f.Class) + " " + strconv.Itoa(f.Status)
	}
	return string(f.Class)
}

// failureClass is the class a failed request's terminal event records, or the event's kind
// (error, timeout, cancelled) when it records none.
func failureClass(e events.Event) events.Class {
	if e.Class != events.ClassNone {
		return e.Class
	}
	return events.Class(e.Kind)
}

// failures accumulates Failure records in order of first appearance.
type failures struct {
	list []Failure
}

// add counts one failed request's terminal event (error or timeout).
func (fs *failures) add(e events.Event) {
	f := Failure{Class: failureClass(e), Count: 1, FirstMessage: e.Message, FirstS: e.TS}
	if e.Status >= 300 { // after 200 headers a status says nothing of the failure
		f.Status = e.Status
	}
	for i := range fs.list {
		if fs.list[i].Class == f.Class && fs.list[i].Status == f.Status {
			fs.list[i].Count++
			return
		}
	}
	fs.list = append(fs.list, f)
}

// sorted returns the failures most frequent first, then by first appearance; nil when none.
func (fs *failures) sorted() []Failure {
	if len(fs.list) == 0 {
		return nil
	}
	out := slices.Clone(fs.list)
	slices.SortStableFunc(out, func(a, b Failure) int { return cmp.Compare(b.Count, a.Count) })
	return out
}
