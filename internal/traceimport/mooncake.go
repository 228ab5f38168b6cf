package traceimport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/agentsim/agentsim/trace"
)

// BlockTokens is the number of tokens one Mooncake hash id covers.
const BlockTokens = 512

// systemShare is the share of requests a leading run of blocks must open to count as a system
// prompt: shared by (nearly) all requests, it says nothing about which session a request
// belongs to.
const systemShare = 0.9

// mooncakeLine is one line of a Mooncake trace. Fields of other tools' variants are ignored.
type mooncakeLine struct {
	Timestamp    *float64 `json:"timestamp"`     // arrival, ms since the trace's start
	InputLength  *int     `json:"input_length"`  // prompt tokens
	OutputLength *int     `json:"output_length"` // completion tokens
	HashIDs      []uint64 `json:"hash_ids"`      // one id per BlockTokens prompt tokens
}

// mcReq is a Mooncake request while sessions are inferred.
type mcReq struct {
	line    int
	tsMS    float64
	in, out int
	ids     []uint64
	session int // 1-based
	seq     int
	extends int // index of the extended request in the sorted slice, or -1
}

// Mooncake imports a Mooncake trace (JSON Lines of timestamp in ms, input_length,
// output_length, hash_ids). Sessions are inferred from the hash ids:
//
//   - The leading blocks that (nearly) all requests open with (90 %) are a system prompt: they
//     link no sessions. The run is cut back to its last branch point, so a trace of one
//     conversation does not mistake that conversation for a system prompt.
//   - A request whose ids begin with all the complete blocks of an earlier, shorter request
//     (beyond the system prompt) continues that request's session: it extends it, with
//     new_tokens = its prompt − (that prompt + that reply), or 0 when the reply was not kept
//     whole. Only complete blocks count because a prompt's last, partial block changes its hash
//     when the conversation grows.
//   - Each request is continued at most once (a session sends one request at a time), so a
//     later request that also begins with an already-continued request — a fork, or another
//     conversation behind a second shared prompt — starts its own session.
//   - Any other request starts a session.
//
// Mooncake has no end times, so after_s is the gap between the sends of a session's
// consecutive requests (the header says after_s_from "send") and the trace has no outcomes.
func Mooncake(r io.Reader, name string) (*Trace, error) {
	reqs, err := readMooncake(r, name)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].tsMS < reqs[j].tsMS })
	prefix, share := systemPrefix(reqs)
	nsessions := linkSessions(reqs, prefix)
	t := &Trace{Header: trace.Header{Source: "mooncake:" + name, AfterSFrom: trace.AfterSend}}
	t.Requests = make([]trace.Request, len(reqs))
	last := make([]float64, nsessions+1) // each session's latest send, ms
	for i := range reqs {
		q := &reqs[i]
		tr := trace.Request{Session: fmt.Sprintf("s%d", q.session), Seq: q.seq, PromptTokens: q.in, OutputTokens: q.out, HashIDs: q.ids}
		if len(reqs) > 0 {
			tr.TS = (q.tsMS - reqs[0].tsMS) / 1000
		}
		if q.seq > 0 {
			tr.AfterS = (q.tsMS - last[q.session]) / 1000
		}
		if q.extends >= 0 {
			e := &reqs[q.extends]
			seq := e.seq
			tr.Extends = &seq
			tr.NewTokens = max(0, q.in-e.in-e.out)
		}
		last[q.session] = q.tsMS
		t.Requests[i] = tr
	}
	t.finish()
	t.Notes = append(t.Notes, mooncakeNote(t, prefix, share))
	return t, nil
}

func mooncakeNote(t *Trace, prefix int, share float64) string {
	sys := "no system prompt shared by nearly all requests"
	if prefix > 0 {
		sys = fmt.Sprintf("system prompt: the first %d blocks, opened by %.0f %% of requests, link no sessions", prefix, share*100)
	}
	return fmt.Sprintf("sessions: %d from %d requests, inferred from shared leading hash_ids (%s); after_s counts from the previous request's send: Mooncake has no end times",
		t.Header.Sessions, t.Header.Requests, sys)
}

// readMooncake reads every line, checking the fields the import needs.
func readMooncake(r io.Reader, name string) ([]mcReq, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), trace.MaxLineBytes)
	var reqs []mcReq
	var arena []uint64
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m mooncakeLine
		if !parseMooncakeFast(line, &m, &arena) {
			m = mooncakeLine{}
			if err := json.Unmarshal(line, &m); err != nil {
				return nil, lineErr(name, n, "not a Mooncake line: %s", jsonMessage(err))
			}
		}
		q, err := m.request(n)
		if err != nil {
			return nil, &trace.LineError{Name: name, Line: n, Err: err}
		}
		reqs = append(reqs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, lineErr(name, n+1, "%v", err)
	}
	return reqs, nil
}

func (m *mooncakeLine) request(line int) (mcReq, error) {
	switch {
	case m.Timestamp == nil || m.InputLength == nil || m.OutputLength == nil:
		return mcReq{}, fmt.Errorf("a Mooncake line has timestamp (ms), input_length and output_length; missing %s", missing(m))
	case *m.Timestamp < 0 || *m.Timestamp > trace.MaxSeconds*1000:
		return mcReq{}, fmt.Errorf("timestamp = %v: must be between 0 and %g ms", *m.Timestamp, trace.MaxSeconds*1000)
	case *m.InputLength < 0 || *m.InputLength > trace.MaxTokens:
		return mcReq{}, fmt.Errorf("input_length = %d: must be between 0 and %d tokens", *m.InputLength, trace.MaxTokens)
	case *m.OutputLength < 0 || *m.OutputLength > trace.MaxTokens:
		return mcReq{}, fmt.Errorf("output_length = %d: must be between 0 and %d tokens", *m.OutputLength, trace.MaxTokens)
	}
	return mcReq{line: line, tsMS: *m.Timestamp, in: *m.InputLength, out: *m.OutputLength, ids: m.HashIDs, extends: -1}, nil
}

// jsonMessage says what is wrong with a line encoding/json refused, naming the field.
func jsonMessage(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := map[string]string{"int": "a whole number", "uint64": "a non-negative whole number", "float64": "a number"}[te.Type.String()]
		if want == "" {
			want = te.Type.String()
		}
		if v, ok := strings.CutPrefix(te.Value, "number "); ok {
			return fmt.Sprintf("%s = %s: must be %s", te.Field, v, want)
		}
		return fmt.Sprintf("%s is a JSON %s: must be %s", te.Field, te.Value, want)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func missing(m *mooncakeLine) string {
	var s []string
	if m.Timestamp == nil {
		s = append(s, "timestamp")
	}
	if m.InputLength == nil {
		s = append(s, "input_length")
	}
	if m.OutputLength == nil {
		s = append(s, "output_length")
	}
	return strings.Join(s, ", ")
}

// systemPrefix returns the number of leading blocks that are a system prompt, and the share
// of requests (with hash ids) that open with them. It follows the most common id at each
// depth while at least systemShare of requests still match, then cuts back to the deepest
// depth where the matching requests branch (two different next blocks): a run with no branch
// after it is one conversation, not a prompt many share.
func systemPrefix(reqs []mcReq) (int, float64) {
	var idx []int
	for i := range reqs {
		if len(reqs[i].ids) > 0 {
			idx = append(idx, i)
		}
	}
	total := len(idx)
	if total < 2 {
		return 0, 0
	}
	need := int(systemShare*float64(total) + 0.999999)
	var branches []bool // branches[d]: the requests matching the first d blocks differ at block d
	var shares []float64
	counts := map[uint64]int{}
	for depth := 0; ; depth++ {
		clear(counts)
		complete := map[uint64]bool{}
		for _, i := range idx {
			if ids := reqs[i].ids; len(ids) > depth {
				counts[ids[depth]]++
				if depth < reqs[i].in/BlockTokens {
					complete[ids[depth]] = true
				}
			}
		}
		// A prompt's last, partial block differs from its continuation's: only complete
		// blocks show a branch.
		branches = append(branches, len(complete) >= 2)
		shares = append(shares, float64(len(idx))/float64(total))
		var best uint64
		bestN := 0
		for id, c := range counts {
			if c > bestN || (c == bestN && id < best) {
				best, bestN = id, c
			}
		}
		if bestN < need {
			break
		}
		kept := idx[:0]
		for _, i := range idx {
			if ids := reqs[i].ids; len(ids) > depth && ids[depth] == best {
				kept = append(kept, i)
			}
		}
		idx = kept
	}
	for d := len(branches) - 1; d > 0; d-- {
		if branches[d] {
			return d, shares[d]
		}
	}
	return 0, 0
}

// chainKey identifies a run of n hash ids by a hash of the ids and n.
func chainKey(h uint64, n int) uint64 { return h ^ uint64(n)*0x9e3779b97f4a7c15 }

// mix folds one id into a running hash of a run of ids.
func mix(h, id uint64) uint64 {
	h ^= id + 0x9e3779b97f4a7c15 + h<<6 + h>>2
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>31
}

// linkSessions assigns sessions and seqs to reqs (sorted by send time) and returns the
// number of sessions. A request continues the session of the latest earlier request whose
// complete blocks beyond the system prompt (prefix blocks) it begins with, the longest such.
func linkSessions(reqs []mcReq, prefix int) int {
	chains := make(map[uint64]int, len(reqs)) // chain key → the latest request ending it, not yet continued
	chainOf := make([]uint64, len(reqs))      // each request's chain key
	var next []int                            // next seq of each session, index session-1
	var hits []int                            // earlier requests whose chains q begins with, shortest first
	for j := range reqs {
		q := &reqs[j]
		full := min(q.in/BlockTokens, len(q.ids))
		fullHash, h := uint64(0), uint64(0)
		hits = hits[:0]
		for k := prefix; k < len(q.ids); k++ {
			h = mix(h, q.ids[k])
			if i, ok := chains[chainKey(h, k+1-prefix)]; ok && reqs[i].in < q.in {
				hits = append(hits, i)
			}
			if k+1 == full {
				fullHash = h
			}
		}
		best := -1
		// The hash finds candidates; comparing the ids rules out a collision.
		for k := len(hits) - 1; k >= 0 && best < 0; k-- {
			i := hits[k]
			n := min(reqs[i].in/BlockTokens, len(reqs[i].ids))
			if equalIDs(reqs[i].ids[prefix:n], q.ids[prefix:n]) {
				best = i
			}
		}
		if best >= 0 {
			q.session = reqs[best].session
			q.extends = best
			// A session is a closed loop, one request at a time: each request is continued at
			// most once, and a later request that also begins with it starts its own session.
			delete(chains, chainOf[best])
		} else {
			next = append(next, 0)
			q.session = len(next)
		}
		q.seq = next[q.session-1]
		next[q.session-1]++
		if full > prefix {
			chainOf[j] = chainKey(fullHash, full-prefix)
			chains[chainOf[j]] = j
		}
	}
	return len(next)
}

func equalIDs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
