package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/buildinfo"
	"github.com/agentsim/agentsim/internal/procs"
	"github.com/agentsim/agentsim/internal/redact"
	"github.com/agentsim/agentsim/results"
)

// serve runs the proxy on ln and the processes against it until the run ends, then stops
// them, writes results.json and returns the run's exit.
func (r *execRun) serve(ln net.Listener) error {
	addr := ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(r.route), ReadHeaderTimeout: time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	ctx, stopWatch := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		r.watch.Run(ctx, r.proxy)
	}()
	r.spec.Vars, r.spec.Offsets = r.vars(addr), r.offsets()
	sup, err := procs.New(r.spec, r.clk, r)
	if err != nil {
		stopWatch()
		_ = srv.Close()
		<-watched
		return runtimeError(fmt.Errorf("exec: %w", err))
	}
	r.wallT0 = time.Now()
	r.watch.Note(r.proxy.Now(), events.RunStart, "", fmt.Sprintf("exec: %s of %q against %s (%s); agentsim %s",
		processes(r.w.Agents), strings.Join(r.spec.Command, " "), r.info.URL, faultsText(r.info.Fault), buildinfo.Read()))
	fmt.Fprintf(r.errOut, "exec: %s of %s against %s (%s, speedup %g); proxy http://%s; run directory %s\n",
		processes(r.w.Agents), strings.Join(r.spec.Command, " "), r.info.URL, faultsText(r.info.Fault), r.clk.Speedup(), addr, r.dir)
	sup.Start()
	reason := r.wait(sup)
	r.stop(sup, reason)
	_ = srv.Close() // ends the streams still in flight: recorded as cancelled
	<-served
	stopWatch()
	<-watched
	return r.finish(reason)
}

// wait returns why the run ends: "" when every process exited, else duration, watchdog or
// interrupted.
func (r *execRun) wait(sup *procs.Supervisor) events.EndReason {
	tick := r.clk.NewTicker(r.w.SampleInterval)
	defer tick.Stop()
	var deadline <-chan time.Time
	if r.w.Duration > 0 {
		t := r.clk.NewTimer(r.w.Duration)
		defer t.Stop()
		deadline = t.C
	}
	for {
		select {
		case <-sup.Done():
			return ""
		case <-r.c.Context().Done():
			return events.EndInterrupted
		case <-deadline:
			return events.EndDuration
		case <-tick.C:
			if st := r.watch.Stall(r.proxy.Now()); st.Hang {
				fmt.Fprintf(r.errOut, "exec: watchdog: ending the run: %s\n", st.Message)
				return events.EndWatchdog
			}
		}
	}
}

// stop records why the run stops and stops the processes still running.
func (r *execRun) stop(sup *procs.Supervisor, reason events.EndReason) {
	if reason != "" {
		r.mu.Lock()
		r.stopped = reason
		r.mu.Unlock()
		r.watch.Note(r.proxy.Now(), events.Stop, reason, fmt.Sprintf("exec: %s: stopping the processes (SIGTERM, then SIGKILL after %s)", reason, r.spec.Grace))
	}
	sup.Stop()
}

// finish closes the proxy and the watch, writes results.json, prints the verdict and returns
// the exit: a run whose every process failed before sending a request is a runtime error
// about the command, not a verdict about a server.
func (r *execRun) finish(reason events.EndReason) error {
	proxyErr := r.proxy.Close()
	now := r.proxy.Now()
	r.watch.Note(now, events.RunEnd, "", "")
	res := &results.Results{Command: "exec", Workload: r.w.Name, Server: r.info, Speedup: r.clk.Speedup(),
		WallSeconds: time.Since(r.wallT0).Seconds(), Interrupted: reason == events.EndInterrupted}
	r.watch.Fill(res, now)
	res.Rounds.Planned = 0
	err := errors.Join(proxyErr, r.trace.Close(), r.watch.Close(), results.Write(r.dir, res))
	if err != nil {
		return runtimeError(fmt.Errorf("exec: %w", err))
	}
	if e := r.failedAtOnce(); e != nil {
		return e
	}
	out := r.c.OutOrStdout()
	fmt.Fprintf(out, "verdict: %s — %s\n", res.Verdict.Kind, res.Verdict.Summary)
	for _, e := range res.Verdict.Evidence {
		fmt.Fprintf(out, "  %s\n", e)
	}
	fmt.Fprintf(out, "exec: %s, %d requests (%d ok), wall %s, simulated %s; run directory %s\n",
		processes(r.w.Agents), res.Requests.Sent, res.Requests.OK, results.Seconds(res.WallSeconds), results.Seconds(res.SimSeconds), r.dir)
	return verdictExit(res)
}

// failedAtOnce is the error of a run in which no process sent a request and some failed (or
// could not start): the command is wrong, not the server.
func (r *execRun) failedAtOnce() error {
	if r.proxy.Recorded() > 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.exits {
		if x.StartErr != nil && !x.Stopped {
			return runtimeError(fmt.Errorf("exec: agent %d: %s", x.Agent, x.Describe()))
		}
		if !x.Stopped && (x.Code != 0 || x.Signal != "") {
			line := ""
			if x.LastErrLine != "" {
				line = fmt.Sprintf("; its stderr ends %q (%s)", redact.Text(x.LastErrLine), procs.ErrFile(r.dir, x.Agent))
			}
			return runtimeError(fmt.Errorf("exec: agent %d %s after %s wall without sending a request to %s: the command failed, not the server%s",
				x.Agent, x.Describe(), results.Seconds(x.WallS), "OPENAI_BASE_URL", line))
		}
	}
	if len(r.exits) == r.w.Agents && r.stopped == "" {
		return runtimeError(errors.New("exec: every process exited without sending a request: does the command read OPENAI_BASE_URL (or use {base_url})? Nothing ran, so there is no verdict"))
	}
	return nil
}

// faultsText names the simulator's faults, "no fault" when none.
func faultsText(f []string) string {
	if len(f) == 0 {
		return "no fault"
	}
	return "faults " + strings.Join(f, ",")
}

// processes counts processes: "1 process", "4 processes".
func processes(n int) string {
	if n == 1 {
		return "1 process"
	}
	return fmt.Sprintf("%d processes", n)
}
