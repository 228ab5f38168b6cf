package diagnose

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// FromDir re-derives the verdict of the run recorded in dir from its events.jsonl,
// samples.jsonl and config.yaml alone (read by rundir.Open), feeding them in time order to the same Analyzer the
// live watchdog uses and judging at the last record's time. It returns the verdict and the
// results those files support (counts, latencies, tokens, gauges, rounds planned, simulated
// duration; not the command, server or wall time), with the run's warnings judged beside the
// verdict as the run judged them (Checks, JudgeLag). The warnings that hold the run against
// what the harness measured of its server — the source of its gen_tok_s, its stream counters,
// the lag, the window fitted to, a replay's comparison — take those from results.json, whose
// measured parts the results returned then carry; without a readable results.json (a killed
// run has none) those warnings are not judged. A missing or malformed file is an error
// naming it; a directory that holds no run (empty, foreign, a compare or sweep directory) is
// an ErrNotRunDir error saying what it is, and an events.jsonl without events an error saying
// the run recorded none. An events.jsonl cut short of its samples (see cutFile) is judged up
// to its last event, and the verdict says so first.
func FromDir(dir string) (results.Verdict, *results.Results, error) {
	if err := checkRunDir(dir); err != nil {
		return results.Verdict{}, nil, err
	}
	run, err := rundir.Open(dir, rundir.Options{Samples: true})
	if err != nil {
		return results.Verdict{}, nil, err
	}
	recorded, err := results.Read(dir)
	if err != nil {
		recorded = nil // the warnings that need it are not judged
	}
	r, err := derive(run, recorded)
	if err != nil {
		return results.Verdict{}, nil, err
	}
	return r.Verdict, r, nil
}

// Derive judges the records of run, as FromDir does once it has read them: it is the
// rundir.Options.Derive of the readers that take a run's results from its records when
// results.json is missing. run needs its workload, events and samples.
func Derive(run *rundir.Run) (*results.Results, error) { return derive(run, run.Results) }

// derive is Derive with the results.json the run wrote, or nil when it has none.
func derive(run *rundir.Run, recorded *results.Results) (*results.Results, error) {
	if len(run.Events) == 0 {
		return nil, fmt.Errorf("%w: %s holds no event: the run recorded nothing (it ended before its first "+
			"second was written, or the file was emptied); there is nothing to judge", ErrNoEvents, filepath.Join(run.Dir, rundir.Events))
	}
	_, r, err := judgeRecords(run.Workload, run.Events, run.Samples, run.Proxy, recorded)
	return r, err
}

// judgeRecords is FromDir on records already read: it checks them against the workload (see
// checkRecords), then judges them, and their warnings with what recorded (results.json; nil
// when there is none) says the harness measured. proxy says the records are a recording
// proxy's (record --watch): its agents are the sessions it saw, as many as the harness had.
func judgeRecords(w *workloads.Workload, evs []events.Event, samples []events.Sample, proxy bool, recorded *results.Results) (results.Verdict, *results.Results, error) {
	cfg := ConfigFrom(w)
	agents := w.Agents
	if proxy {
		cfg.Proxy, cfg.Agents, cfg.Rounds = true, 0, 0
		agents = math.MaxInt32
	}
	if err := checkRecords(evs, samples, agents); err != nil {
		return results.Verdict{}, nil, err
	}
	cutS, warning, cut := cutFile(evs, samples)
	if cut {
		samples = slices.DeleteFunc(slices.Clone(samples), func(s events.Sample) bool { return s.TS > cutS })
	}
	a, c := New(cfg), NewChecks(0)
	if recorded != nil {
		c = NewChecks(recorded.Server.FitWindow)
	}
	feed(evs, samples, a, c)
	end := a.LastS()
	r := &results.Results{Workload: w.Name}
	a.Fill(r, end)
	if !proxy { // a proxy's rounds are the requests it saw, planned by no one
		r.Rounds.Planned = w.Agents * w.Rounds
	}
	measured(r, recorded)
	r.Warnings = c.Warnings(r, w)
	if r.Harness != nil {
		if r.SpeedupAchieved != nil {
			JudgeLagAtMax(r.Harness, r.Speedup, w.Watchdog.StallAfter, r.Latency.E2E.P50)
		} else {
			JudgeLag(r.Harness, r.Speedup, w.Watchdog.StallAfter, r.Latency.E2E.P50)
		}
		a.Doubt(r)
	}
	if cut {
		r.Verdict.Summary += fmt.Sprintf(" (judged up to t=%s: %s is cut)", secs(cutS), rundir.Events)
		r.Verdict.Evidence = append([]string{warning}, r.Verdict.Evidence...)
	}
	return r.Verdict, r, nil
}

// measured copies into r, judged from the files, what recorded (results.json; nil when there
// is none) says the harness measured of the run's server and could not re-derive: the server
// and its gauges' sources, the speedup, the server's stream counters, the lag, whether the
// rounds were replayed, and a replay's comparison.
func measured(r, recorded *results.Results) {
	if recorded == nil {
		return
	}
	gauges := r.Server.Gauges
	r.Command, r.Server, r.Speedup = recorded.Command, recorded.Server, recorded.Speedup
	r.Server.Gauges = gauges
	r.Stream.Server, r.Rounds.Scripted, r.Replay = recorded.Stream.Server, recorded.Rounds.Scripted, recorded.Replay
	if h := recorded.Harness; h != nil {
		c := *h
		r.Harness = &c
	}
}

// Replay feeds evs and samples to a in time order — at equal times, events first — and
// returns the time of the last record, in simulated seconds. It leaves its arguments as they
// are.
func Replay(a *Analyzer, evs []events.Event, samples []events.Sample) float64 {
	feed(evs, samples, a)
	return a.LastS()
}

// recordSink takes a run's records in time order: an Analyzer, Checks.
type recordSink interface {
	Event(events.Event)
	Sample(events.Sample)
}

// feed feeds evs and samples to every sink in time order — at equal times, events first — and
// leaves its arguments as they are.
func feed(evs []events.Event, samples []events.Sample, sinks ...recordSink) {
	evs = slices.Clone(evs)
	samples = slices.Clone(samples)
	// events.jsonl is written in stamping order, which concurrent agents can swap by a hair.
	slices.SortStableFunc(evs, func(x, y events.Event) int { return cmp.Compare(x.TS, y.TS) })
	slices.SortStableFunc(samples, func(x, y events.Sample) int { return cmp.Compare(x.TS, y.TS) })
	i, j := 0, 0
	for i < len(evs) || j < len(samples) {
		if j == len(samples) || (i < len(evs) && evs[i].TS <= samples[j].TS) {
			for _, s := range sinks {
				s.Event(evs[i])
			}
			i++
		} else {
			for _, s := range sinks {
				s.Sample(samples[j])
			}
			j++
		}
	}
}
