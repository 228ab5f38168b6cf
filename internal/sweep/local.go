package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/agentsim/agentsim/internal/shown"
	"github.com/agentsim/agentsim/results"
)

// Local runs a plan's runs on this machine, each as a subprocess running the per-index
// command a Kubernetes pod runs (`agentsim sweep cell --plan DIR/sweep.json --index N`), at
// most Parallel at once. Each subprocess has its own process group: an interrupt reaches the
// sweep alone, which passes it on to every run in flight and waits for them to record it.
type Local struct {
	// Plan is the plan, read from Dir.
	Plan *Plan
	Dir  string
	// Exe and Args start agentsim: Exe Args… sweep cell --plan … --index N. Env is the
	// subprocesses' environment (nil: this process's).
	Exe  string
	Args []string
	Env  []string
	// Parallel is how many runs may execute at once (≥ 1). With Auto, a run whose harness
	// lag distorted its figures halves it (down to 1) and is run again: the machine was
	// running more at once than it could without slowing the harness.
	Parallel int
	Auto     bool
	// Out receives one line per finished run, with an estimate of the wall time left.
	Out io.Writer
}

// Outcome says what Local.Run did.
type Outcome struct {
	// Finished lists the indices whose runs finished (whatever their verdict).
	Finished []int
	// Failed maps the indices whose command failed (a runtime or usage error) to why.
	Failed map[int]string
	// Interrupted lists the runs that were in flight when the sweep was interrupted; NotRun
	// those that never started.
	Interrupted []int
	NotRun      []int
	// Parallel is how many ran at once at the end; Lowered is set when Auto lowered it.
	Parallel int
	Lowered  bool

	ended, total int     // runs ended so far and to run, for the progress lines
	wallS        float64 // wall time of the runs that ended with results, in seconds
	timed        int     // how many those are
}

// leftS estimates the wall time left, in seconds, from the runs that ended with results: the
// runs not ended yet (those in flight among them) go parallel at once, each taking the mean
// wall time of those, so the sweep has as many more of them as it has waves of parallel
// left. false before any run has a wall time, and once none is left.
func (o *Outcome) leftS() (float64, bool) {
	rest := o.total - o.ended
	if o.timed == 0 || rest <= 0 {
		return 0, false
	}
	waves := (rest + o.Parallel - 1) / o.Parallel
	return float64(waves) * o.wallS / float64(o.timed), true
}

// left renders leftS for a progress line: ", ~3 min wall left", or "" without an estimate.
func (o *Outcome) left() string {
	s, ok := o.leftS()
	if !ok {
		return ""
	}
	return ", ~" + shown.Approx(s, 1) + " wall left"
}

// done is a finished subprocess.
type done struct {
	index int
	err   error
}

// Run executes the runs of pending (indices, in order) and returns what became of each. It
// stops starting runs when ctx is cancelled, interrupts those in flight, and returns once
// every subprocess it started has exited.
func (l *Local) Run(ctx context.Context, pending []int) *Outcome {
	o := &Outcome{Failed: map[int]string{}, Parallel: max(l.Parallel, 1), total: len(pending)}
	queue := append([]int(nil), pending...)
	again := map[int]bool{} // runs already run a second time after distorting lag
	results := make(chan done)
	running := 0
	for len(queue) > 0 || running > 0 {
		for running < o.Parallel && len(queue) > 0 && ctx.Err() == nil {
			i := queue[0]
			queue = queue[1:]
			running++
			go func(i int, rerun bool) { results <- l.runOne(ctx, i, rerun) }(i, again[i])
		}
		if running == 0 {
			break
		}
		d := <-results
		running--
		if again := l.finish(o, d, again); again {
			queue = append([]int{d.index}, queue...)
		}
	}
	o.NotRun = queue
	return o
}

// finish records a finished subprocess in o; it reports whether to run the index again.
func (l *Local) finish(o *Outcome, d done, again map[int]bool) bool {
	r := l.Plan.Runs[d.index]
	res, rerr := results.Read(filepath.Join(l.Dir, filepath.FromSlash(r.Dir)))
	o.ended++
	prefix := fmt.Sprintf("[%d/%d] run %d %s seed=%d", o.ended, o.total, d.index, l.Plan.Cell(r), r.Seed)
	switch {
	case rerr == nil && res.Interrupted:
		o.Interrupted = append(o.Interrupted, d.index)
		fmt.Fprintf(l.Out, "%s: interrupted\n", prefix)
		return false
	case d.err != nil || rerr != nil:
		why := "no results.json"
		if d.err != nil {
			why = d.err.Error()
		}
		o.Failed[d.index] = why
		fmt.Fprintf(l.Out, "%s: failed: %s (see %s)%s\n", prefix, why, l.logPath(d.index), o.left())
		return false
	}
	o.wallS += res.WallSeconds
	o.timed++
	if res.Harness != nil && res.Harness.Warning != "" && l.Auto && o.Parallel > 1 && !again[d.index] {
		o.Parallel = max(1, o.Parallel/2)
		o.Lowered = true
		again[d.index] = true
		o.total++
		fmt.Fprintf(l.Out, "%s: %s (%.1f s wall)\n", prefix, res.Verdict.Kind, res.WallSeconds)
		fmt.Fprintf(l.Out, "%s: the harness lag distorted it at %d runs at once; running it again, and the rest, %d at once%s\n",
			prefix, o.Parallel*2, o.Parallel, o.left())
		return true
	}
	fmt.Fprintf(l.Out, "%s: %s (%.1f s wall)%s\n", prefix, res.Verdict.Kind, res.WallSeconds, o.left())
	o.Finished = append(o.Finished, d.index)
	return false
}

// logPath is where index i's console output goes.
func (l *Local) logPath(i int) string {
	return filepath.Join(l.Dir, LogsDir, fmt.Sprintf("%04d.log", i))
}

// runOne runs index i's per-index command, its output to its log file; rerun replaces a
// finished run.
func (l *Local) runOne(ctx context.Context, i int, rerun bool) done {
	log, err := os.Create(l.logPath(i))
	if err != nil {
		return done{index: i, err: fmt.Errorf("create log: %w", err)}
	}
	defer log.Close()
	args := append(append([]string(nil), l.Args...), "sweep", "cell", "--plan", filepath.Join(l.Dir, PlanFile),
		"--index", strconv.Itoa(i))
	if rerun {
		args = append(args, "--again")
	}
	cmd := exec.CommandContext(ctx, l.Exe, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = l.Env, log, log
	ownGroup(cmd)
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = fmt.Errorf("exit %d", ee.ExitCode())
	}
	return done{index: i, err: err}
}
