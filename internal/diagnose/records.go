package diagnose

import (
	"fmt"
	"math"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/rundir"
)

// maxRecordS bounds the times of records read from a run directory, in simulated seconds: a
// year, far beyond any run, and well inside the range a float64 holds to the millisecond.
const maxRecordS = 366 * 24 * 3600

// arrivalSkewS is how negative, in simulated seconds, a time since the latest byte in a
// sample may be and still be read: runs written before samples clamped it could record a byte
// that arrived while the sample was taken as a few microseconds in the future.
const arrivalSkewS = 0.01

// checkRecords refuses records that no run of w could have written, before they reach the
// Analyzer: an agent number outside the run's agents (0 to agents−1; −1 is the run itself), a time negative
// or beyond maxRecordS, a count below zero. Each error names the file, the record's number
// (counted from 1 among the file's records), the field, its value and what is allowed.
func checkRecords(evs []events.Event, samples []events.Sample, agents int) error {
	agent := func(file string, n int, field string, id int, run bool) error {
		lo := 0
		if run {
			lo = -1
		}
		if id < lo || id >= agents {
			want := fmt.Sprintf("0–%d (the run had %d agents)", agents-1, agents)
			if run {
				want = "−1 (the run) or " + want
			}
			return fmt.Errorf("%s record %d: %s %d is not allowed: want %s", file, n, field, id, want)
		}
		return nil
	}
	ts := func(file string, n int, t float64) error {
		if math.IsNaN(t) || t < 0 || t > maxRecordS {
			return fmt.Errorf("%s record %d: t_s %g is not allowed: want simulated seconds from 0 to %d", file, n, t, maxRecordS)
		}
		return nil
	}
	for i, e := range evs {
		if err := ts(rundir.Events, i+1, e.TS); err != nil {
			return err
		}
		if err := agent(rundir.Events, i+1, "agent", e.Agent, true); err != nil {
			return err
		}
		if e.Round < 0 || e.Attempt < 0 || e.Chunks < 0 || e.CompletionTokens < 0 {
			return fmt.Errorf("%s record %d: round %d, attempt %d, chunks %d, completion_tokens %d: want counts ≥ 0",
				rundir.Events, i+1, e.Round, e.Attempt, e.Chunks, e.CompletionTokens)
		}
	}
	for i, s := range samples {
		n := i + 1
		if err := ts(rundir.Samples, n, s.TS); err != nil {
			return err
		}
		if s.InFlight < 0 || s.TokensOut < 0 || s.ChunksIn < 0 {
			return fmt.Errorf("%s record %d: in_flight %d, tokens_out %d, chunks_in %d: want counts ≥ 0", rundir.Samples, n, s.InFlight, s.TokensOut, s.ChunksIn)
		}
		if o := s.Open; o != nil {
			if o.Silent < 0 || o.Moving < 0 || o.WithBytes < 0 || o.Chunks < 0 {
				return fmt.Errorf("%s record %d: open.silent %d, open.moving %d, open.with_bytes %d, open.chunks %d: want counts ≥ 0",
					rundir.Samples, n, o.Silent, o.Moving, o.WithBytes, o.Chunks)
			}
			for _, f := range []struct {
				name string
				v    float64
			}{{"open.stall_after_s", o.StallAfterS}, {"open.last_byte_ago_s", o.LastByteAgoS},
				{"open.unlisted_max_silence_s", o.UnlistedMaxSilenceS}, {"open.not_silent_max_s", o.NotSilentMaxS}} {
				if math.IsNaN(f.v) || f.v < -arrivalSkewS || f.v > maxRecordS {
					return fmt.Errorf("%s record %d: %s %g is not allowed: want seconds from 0 to %d", rundir.Samples, n, f.name, f.v, maxRecordS)
				}
			}
		}
		for _, st := range s.Streams {
			if err := agent(rundir.Samples, n, "streams[].agent", st.Agent, false); err != nil {
				return err
			}
		}
		if p := s.Pacer; p != nil {
			for _, h := range p.Held {
				if err := agent(rundir.Samples, n, "pacer.held[].agent", h.Agent, false); err != nil {
					return err
				}
			}
			for _, wt := range p.Waiters {
				if err := agent(rundir.Samples, n, "pacer.waiters[].agent", wt.Agent, false); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
