package diagnose

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/results"
)

// jsonl renders records as JSONL, one per line.
func jsonl[T any](t testing.TB, recs []T) []byte {
	var b bytes.Buffer
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// FuzzFromDir feeds arbitrary events.jsonl and samples.jsonl contents, read as diagnose reads
// them, to the analysis of a 30-agent run: any input is refused with an error or judged with
// a verdict of a known kind and a summary; it never panics or hangs, and it never allocates by
// a number the input declares (an agent 2000000000 is refused, not made room for). Seeds: the
// scenario worlds whole and cut in half, a 0-byte file, blank lines, a cut last line, and
// records out of range.
//
// Run it for a while with (minimizing at most 100 executions per new input: the default 60 s
// of minimizing these multi-kilobyte inputs starves the fuzzing itself):
//
//	go test ./internal/diagnose -run '^$' -fuzz FuzzFromDir -fuzztime 60s -fuzzminimizetime 100x
func FuzzFromDir(f *testing.F) {
	// Seeds of at most a few kilobytes each (whole lines), to keep executions fast.
	seed := func(w *world, until float64) {
		evs, smp := firstLines(jsonl(f, w.sorted()), 4<<10), firstLines(jsonl(f, w.samples(until)), 4<<10)
		f.Add(evs, smp)
		f.Add(evs[:len(evs)/2], smp)
	}
	w, _, until := wedgeStarvation()
	seed(w, until)
	w, _, until = leakOnTimeout()
	seed(w, until)
	w, _ = withErrors()
	seed(w, lastTime(w)+60)
	f.Add([]byte{}, []byte{})
	f.Add([]byte("\n\n \n"), []byte("\n"))
	f.Add([]byte(`{"t_s": 1, "event": "run_start", "agent": -1}`+"\n"+`{"t_s": 2, "ev`), []byte(`{"t_s": 1}`))
	f.Add([]byte(`{"t_s": 1, "event": "request_sent", "agent": 2000000000, "request": "x"}`), []byte(`{"t_s": 1}`))
	f.Add([]byte(`{"t_s": -5, "event": "round_done", "agent": 0, "outcome": "cancelled"}`), []byte(`{"t_s": 1e308, "in_flight": -1}`))
	f.Add([]byte(`{"t_s": 1, "event": "done", "agent": 0, "request": "a0-r1-0", "completion_tokens": 5}`),
		[]byte(`{"t_s": 100, "tokens_out": 99999, "pacer": {"acquired": 7, "waiters": [{"agent": 3, "wait_s": 1e300}]}, "streams": [{"agent": 29, "chunks": -4}]}`))
	cfg := Config{Agents: 30, PacerKind: "slots", PacerSlots: 16}
	wl := workloadFor(cfg)
	f.Fuzz(func(t *testing.T, evsIn, samplesIn []byte) {
		evs, err := events.Read[events.Event](bytes.NewReader(evsIn))
		if err != nil {
			return
		}
		samples, err := events.Read[events.Sample](bytes.NewReader(samplesIn))
		if err != nil {
			return
		}
		if len(evs) == 0 {
			return // FromDir refuses it as ErrNoEvents before judging
		}
		v, r, err := judgeRecords(wl, evs, samples, false, nil)
		if err != nil {
			return
		}
		if !slices.Contains(knownKinds, v.Kind) || v.Summary == "" {
			t.Fatalf("verdict %q with summary %q", v.Kind, v.Summary)
		}
		if r.Verdict.Kind != v.Kind {
			t.Fatalf("results verdict %q, returned %q", r.Verdict.Kind, v.Kind)
		}
	})
}

// firstLines returns the whole lines of b that fit in n bytes.
func firstLines(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	if i := bytes.LastIndexByte(b[:n], '\n'); i >= 0 {
		return b[:i+1]
	}
	return nil
}

// knownKinds are the seven verdict kinds.
var knownKinds = []results.VerdictKind{results.Healthy, results.Slow, results.ServerSerialized,
	results.StalledStreams, results.PacerStarvation, results.Deadlock, results.Errors}
