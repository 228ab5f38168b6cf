package calibrate

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentsim/agentsim/workloads"
)

// Workload is calibrate check's held-out workload: Agents conversations at once, each of
// Rounds requests whose context grows by the reply and a new user turn every round, as a
// multi-agent harness's do.
type Workload struct {
	// Agents lists the concurrencies to run, one run each.
	Agents []int
	// Rounds is the requests per agent.
	Rounds int
	// First is the first user message's length, Turn each later one's, in agentsim's estimate;
	// Output each reply's, in server tokens.
	First, Turn, Output int
	// Seed makes the text.
	Seed int64
}

// DefaultWorkload is a multi-agent run with growing contexts that no experiment sends.
var DefaultWorkload = Workload{Agents: []int{1, 4, 8}, Rounds: 5, First: 600, Turn: 200, Output: 96, Seed: 11}

// Fresh is the workload with text no other run of the check sends to the same server: its
// own per concurrency and per server run (the twin's run takes run 0's, which its simulator
// has not seen). Otherwise a prefix cache answers a repeat from the run before, and the
// server's "own spread" is its cache.
func (w Workload) Fresh(agents, run int) Workload {
	w.Seed += int64(1000*agents + run)
	return w
}

// Flush sends n short requests of fresh text at once and waits for them to end, so that a run
// starts from the server's state the twin starts from. A server whose idle slots keep their KV
// in one unified pool (llama-server's --kv-unified) reads every cell up to the last one in use,
// masked or not, for every token it computes, so what the run before left in idle slots is
// read by the next run's prompts (docs/calibrate.md §3). n fresh prompts at once take every
// slot, each of which lets go of what it held, as the twin's slots do when its profile keeps
// idle slots' KV (kv_idle_slots, docs/engine.md §3); a twin that keeps none loses nothing. A flush request that fails changes
// nothing the run measures; the run reports the server's failures itself.
func Flush(ctx context.Context, c *Client, n int, seed int64) {
	n = min(n, MaxFlush)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			text, est := prompt(seed, i, shortPrompt)
			c.Send(ctx, Request{Messages: []string{fmt.Sprintf("flush %d %s", seed, text)}, Estimate: est + 2, MaxTokens: 1})
		})
	}
	wg.Wait()
}

// The reference request: a fresh prompt of ReferencePrompt tokens (agentsim's estimate),
// alone, with ReferenceOutput tokens out, a shape calibrate's experiments measure (the
// context experiment's first point, the next-turn probe's first message).
const (
	ReferencePrompt = 1024
	ReferenceOutput = 64
)

// Reference sends the reference request and returns what it showed. calibrate check sends it
// before each run, to the server and to the twin, between two flushes (the first so that it
// finds the server as the calibration's points did, the second so that the run does): where
// the twin's fit saw the server, the twin's error on it is the fit's own there plus how far the
// server's speed has moved since it was calibrated, which the workload's errors carry too
// (docs/calibrate.md §3).
func Reference(ctx context.Context, c *Client, seed int64) Obs {
	text, est := prompt(seed, 0, ReferencePrompt)
	return c.Send(ctx, Request{Messages: []string{"reference " + text}, Estimate: est + 1, MaxTokens: ReferenceOutput})
}

// ReferenceLine compares the reference requests sent to the server with those sent to the
// twin: TTFT and TPOT, the server's median and range over its requests, the twin's median,
// and the twin's error against the server's median.
func ReferenceLine(server, twin []Obs) string {
	ok := func(obs []Obs) []Obs {
		var kept []Obs
		for _, o := range obs {
			if o.OK() && len(o.Chunks) > 1 {
				kept = append(kept, o)
			}
		}
		return kept
	}
	s, tw := ok(server), ok(twin)
	head := fmt.Sprintf("reference (a fresh %d-token prompt alone after a flush, %d tokens out, before each run; a shape the calibration measured)", ReferencePrompt, ReferenceOutput)
	if len(s) == 0 || len(tw) == 0 {
		return fmt.Sprintf("%s: %d of %d server and %d of %d twin requests completed: no comparison", head, len(s), len(server), len(tw), len(twin))
	}
	figure := func(name string, of func(o *Obs) time.Duration) string {
		sm, tm := median(s, of), median(tw, of)
		lo, hi := of(&s[0]), of(&s[0])
		for i := range s {
			lo, hi = min(lo, of(&s[i])), max(hi, of(&s[i]))
		}
		return fmt.Sprintf("%s server %s (%s–%s over %d), twin %s (%+.1f %%)", name, sm.Round(10*time.Microsecond),
			lo.Round(10*time.Microsecond), hi.Round(10*time.Microsecond), len(s), tm.Round(10*time.Microsecond), 100*(tm.Seconds()/sm.Seconds()-1))
	}
	return head + ": " + figure("TTFT", (*Obs).TTFT) + "; " + figure("TPOT", (*Obs).TPOT) +
		": an error here is the fit's own on a shape it saw, or the server moved since it was calibrated (its speed, or the KV cells its attention spans); either is in the figures above too"
}

// MaxFlush bounds a flush's requests: llama-server's slots (-np) are a few to a few dozen, and
// a server with hundreds of sequences keeps a paged KV, which idle requests do not slow.
const MaxFlush = 64

// Figures are one run's latencies (p50 and p90 of TTFT, ITL, TPOT, e2e) and its output
// throughput, tokens per second.
type Figures struct {
	Agents               int
	TTFT, ITL, TPOT, E2E [2]time.Duration // p50, p90
	Throughput           float64
	Requests, Failed     int
	FirstError           string
}

// RunWorkload runs the workload at one concurrency on the client.
func RunWorkload(ctx context.Context, c *Client, w Workload, agents int) Figures {
	start := c.Clock.Now()
	var mu sync.Mutex
	var obs []Obs
	var wg sync.WaitGroup
	for a := range agents {
		wg.Go(func() {
			msgs := []string{workloads.Text(w.Seed, a, 0, "check-first", w.First)}
			est := w.First + messageFraming + promptPriming
			for round := range w.Rounds {
				o := c.Send(ctx, Request{Messages: slices.Clone(msgs), Estimate: est, MaxTokens: w.Output})
				mu.Lock()
				obs = append(obs, o)
				mu.Unlock()
				if !o.OK() {
					return
				}
				msgs = append(msgs, workloads.Text(w.Seed, a, round, "check-reply", w.Output), workloads.Text(w.Seed, a, round, "check-turn", w.Turn))
				est += w.Output + w.Turn + 2*messageFraming
			}
		})
	}
	wg.Wait()
	return figuresOf(obs, agents, c.Clock.Since(start))
}

// figuresOf summarizes a run's requests.
func figuresOf(obs []Obs, agents int, took time.Duration) Figures {
	f := Figures{Agents: agents, Requests: len(obs)}
	var ttft, itl, tpot, e2e []time.Duration
	tokens := 0
	for i := range obs {
		o := &obs[i]
		if !o.OK() {
			f.Failed++
			if f.FirstError == "" {
				f.FirstError = o.Err
			}
			continue
		}
		ttft, e2e, tpot = append(ttft, o.TTFT()), append(e2e, o.Done.Sub(o.Start)), append(tpot, o.TPOT())
		for j := 1; j < len(o.Chunks); j++ {
			itl = append(itl, o.Chunks[j].Sub(o.Chunks[j-1]))
		}
		tokens += o.Tokens()
	}
	f.TTFT, f.ITL, f.TPOT, f.E2E = quantiles(ttft), quantiles(itl), quantiles(tpot), quantiles(e2e)
	f.Throughput = float64(tokens) / took.Seconds()
	return f
}

// quantiles are the p50 and p90 of v.
func quantiles(v []time.Duration) [2]time.Duration {
	if len(v) == 0 {
		return [2]time.Duration{}
	}
	slices.Sort(v)
	at := func(q float64) time.Duration { return v[min(int(q*float64(len(v))), len(v)-1)] }
	return [2]time.Duration{at(0.5), at(0.9)}
}

// figure names one compared figure and reads it.
type figure struct {
	name string
	get  func(Figures) float64
}

// figures are the compared figures, in the table's order.
var figures = []figure{
	{"TTFT p50", func(f Figures) float64 { return f.TTFT[0].Seconds() }},
	{"TTFT p90", func(f Figures) float64 { return f.TTFT[1].Seconds() }},
	{"ITL p50", func(f Figures) float64 { return f.ITL[0].Seconds() }},
	{"ITL p90", func(f Figures) float64 { return f.ITL[1].Seconds() }},
	{"TPOT p50", func(f Figures) float64 { return f.TPOT[0].Seconds() }},
	{"TPOT p90", func(f Figures) float64 { return f.TPOT[1].Seconds() }},
	{"e2e p50", func(f Figures) float64 { return f.E2E[0].Seconds() }},
	{"e2e p90", func(f Figures) float64 { return f.E2E[1].Seconds() }},
	{"throughput", func(f Figures) float64 { return f.Throughput }},
}

// Row is one figure of a check: the server's two runs, the twin's, the twin's error against
// the server's mean and the server's own spread (|run 1 − run 2| / mean).
type Row struct {
	Agents           int
	Figure           string
	Server1, Server2 float64
	Twin             float64
	Error, Spread    float64
}

// Inside reports whether the twin's error is within the server's own spread.
func (r Row) Inside() bool { return math.Abs(r.Error) <= r.Spread }

// Compare builds the rows of one concurrency.
func Compare(s1, s2, twin Figures) []Row {
	rows := make([]Row, len(figures))
	for i, fg := range figures {
		a, b, t := fg.get(s1), fg.get(s2), fg.get(twin)
		mean := (a + b) / 2
		rows[i] = Row{Agents: s1.Agents, Figure: fg.name, Server1: a, Server2: b, Twin: t,
			Error: (t - mean) / mean, Spread: math.Abs(a-b) / mean}
	}
	return rows
}

// ReferenceRows are one concurrency's reference rows ("ref TTFT", "ref TPOT"): the reference
// requests sent before the server's two runs and before the twin's (Reference), compared as
// the workload's figures are; none when one of them did not complete. Beside that
// concurrency's rows they tell how far the twin is off where its fit saw the server, at the
// time the rows were measured.
func ReferenceRows(agents int, s1, s2, twin Obs) []Row {
	if !s1.OK() || !s2.OK() || !twin.OK() || len(s1.Chunks) < 2 || len(s2.Chunks) < 2 || len(twin.Chunks) < 2 {
		return nil
	}
	var rows []Row
	for _, fg := range []struct {
		name string
		of   func(o *Obs) time.Duration
	}{{"ref TTFT", (*Obs).TTFT}, {"ref TPOT", (*Obs).TPOT}} {
		a, b, t := fg.of(&s1).Seconds(), fg.of(&s2).Seconds(), fg.of(&twin).Seconds()
		mean := (a + b) / 2
		rows = append(rows, Row{Agents: agents, Figure: fg.name, Server1: a, Server2: b, Twin: t,
			Error: (t - mean) / mean, Spread: math.Abs(a-b) / mean})
	}
	return rows
}

// columns are the check table's: each header, its width, and whether it is right-aligned.
var columns = []struct {
	name  string
	width int
	right bool
}{
	{"agents", 6, false}, {"figure", 10, false}, {"server 1", 12, true}, {"server 2", 12, true}, {"twin", 12, true},
	{"error", 8, true}, {"direction", 9, false}, {"spread", 7, true}, {"inside", 6, false},
}

// PrintRows prints a check's table: seconds for latencies, tokens per second for throughput.
// Every column has a header, and columns are two spaces apart (a cell holds at most one space
// in a row), so the table reads the same by eye and split on runs of spaces.
func PrintRows(w io.Writer, rows []Row) {
	line := func(cells []string) {
		out := make([]string, len(cells))
		for i, c := range cells {
			if columns[i].right {
				out[i] = fmt.Sprintf("%*s", columns[i].width, c)
			} else {
				out[i] = fmt.Sprintf("%-*s", columns[i].width, c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(strings.Join(out, "  "), " "))
	}
	header := make([]string, len(columns))
	for i, c := range columns {
		header[i] = c.name
	}
	line(header)
	for _, r := range rows {
		unit := func(v float64) string {
			if r.Figure == "throughput" {
				return fmt.Sprintf("%.1f tok/s", v)
			}
			return seconds(v).Round(time.Microsecond).String()
		}
		dir := "faster"
		if (r.Error > 0) != (r.Figure == "throughput") {
			dir = "slower"
		}
		if r.Error == 0 {
			dir = "equal"
		}
		inside := "no"
		if r.Inside() {
			inside = "yes"
		}
		line([]string{fmt.Sprint(r.Agents), r.Figure, unit(r.Server1), unit(r.Server2), unit(r.Twin),
			fmt.Sprintf("%+.1f%%", 100*r.Error), dir, fmt.Sprintf("%.1f%%", 100*r.Spread), inside})
	}
}

// FailureLine says how many requests of a run failed, "" when none did.
func (f Figures) FailureLine(who string) string {
	if f.Failed == 0 {
		return ""
	}
	return fmt.Sprintf("%s, %d agents: %d of %d requests failed, first: %s", who, f.Agents, f.Failed, f.Requests, strings.TrimSpace(f.FirstError))
}
