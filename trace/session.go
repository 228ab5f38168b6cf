package trace

import (
	"errors"
	"fmt"
)

// sessions checks the rules that span a session's requests, one request at a time: seqs are
// consecutive from 0, sends are in seq order, extends names an earlier request, and a tool
// time fits in the next request's after_s. It keeps three numbers per session, never the
// requests.
type sessions struct {
	m map[string]*sessionState
	n int // requests seen
}

type sessionState struct {
	next  int     // the seq the session's next request must have
	lastT float64 // t_s of its latest request
	toolS float64 // tool_s of its latest request, −1 when absent
}

func newSessions() *sessions { return &sessions{m: map[string]*sessionState{}} }

// add validates r, alone and against the requests before it, and records it when valid.
func (s *sessions) add(r *Request) error {
	var errs []error
	if err := r.Validate(); err != nil {
		errs = append(errs, err)
	}
	st := s.m[r.Session]
	want := 0
	if st != nil {
		want = st.next
	}
	if r.Seq != want && r.Seq >= 0 {
		if st == nil {
			errs = append(errs, fmt.Errorf("seq = %d: session %q has no earlier request, so its first seq must be 0", r.Seq, r.Session))
		} else {
			errs = append(errs, fmt.Errorf("seq = %d: session %q expects seq %d next (seqs are consecutive, in file order)", r.Seq, r.Session, want))
		}
	}
	if st != nil && r.TS < st.lastT {
		errs = append(errs, fmt.Errorf("t_s = %v: before the previous request of session %q (t_s = %v); a session's requests are sent in seq order", r.TS, r.Session, st.lastT))
	}
	if st != nil && st.toolS >= 0 && r.AfterS < st.toolS {
		errs = append(errs, fmt.Errorf("after_s = %v: less than the previous request's tool_s (%v), which is part of it", r.AfterS, st.toolS))
	}
	if r.Extends != nil && (*r.Extends < 0 || *r.Extends >= want || *r.Extends >= r.Seq) {
		switch {
		case want == 0:
			errs = append(errs, fmt.Errorf("extends = %d: session %q has no earlier request to extend", *r.Extends, r.Session))
		default:
			errs = append(errs, fmt.Errorf("extends = %d: must name an earlier request of session %q (seq 0…%d)", *r.Extends, r.Session, want-1))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if st == nil {
		st = &sessionState{}
		s.m[r.Session] = st
	}
	st.next++
	st.lastT = r.TS
	st.toolS = -1
	if r.ToolS != nil {
		st.toolS = *r.ToolS
	}
	s.n++
	return nil
}

// checkCounts compares the header's stated counts (0: not stated) with what was seen.
func (s *sessions) checkCounts(h *Header) error {
	var errs []error
	if h.Requests != 0 && h.Requests != s.n {
		errs = append(errs, fmt.Errorf("header says %d requests, the trace has %d", h.Requests, s.n))
	}
	if h.Sessions != 0 && h.Sessions != len(s.m) {
		errs = append(errs, fmt.Errorf("header says %d sessions, the trace has %d", h.Sessions, len(s.m)))
	}
	return errors.Join(errs...)
}
