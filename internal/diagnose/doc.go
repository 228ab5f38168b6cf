// Package diagnose tells slow from stuck. An Analyzer is fed a run's events and samples in
// time order — live by the harness's watchdog, offline by FromDir from the run directory — and
// answers with one of the eight verdicts of results.VerdictKinds (docs/verdicts.md §2):
// healthy, slow, server-serialized, stalled-streams, pacer-starvation, deadlock, errors, or —
// watching a real harness only — harness-stopped, each with a one-line summary and evidence in
// explicit units.
//
// The analysis keeps the harness's own view primary: which requests are open and when each
// last received a byte, which agent holds which pacer permit, which agents wait for one and
// since when. Server gauges (decode_running, prefill_inflight, queued) are evidence beside it,
// never the only proof: servers refresh them lazily and sometimes report nothing at all.
//
// A run ends by being stopped — the watchdog, the end of the grace period or Ctrl-C cancels
// the requests in flight and the pacer waits — and the stop erases the evidence of a stuck
// run. So the verdict of a stopped run that was stuck (pacer-starvation, deadlock,
// stalled-streams) is the one judged just before the stop, live and from the files alike.
//
// Beside the verdict, Checks is fed the same records and gives the run's warnings — where
// the server's gauges, its outputs, its reasoning or its context window part from what the
// workload and the harness expected — and JudgeLag the warnings on the harness's and the
// simulator's lag, live and from the files alike, so that `agentsim diagnose` says what the run
// said.
//
// Every time is in simulated seconds since the run started, as events.jsonl and
// samples.jsonl record it.
package diagnose
