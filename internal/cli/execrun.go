package cli

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/procs"
	"github.com/agentsim/agentsim/internal/record"
	"github.com/agentsim/agentsim/internal/redact"
	"github.com/agentsim/agentsim/internal/wire"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/workloads"
)

// traceFile is the proxy's trace in an exec run directory.
const traceFile = "trace.jsonl"

// execRun is one `agentsim exec`: its server, proxy, watch and processes.
type execRun struct {
	c      *cobra.Command
	cfg    *execConfig
	w      *workloads.Workload
	spec   procs.Spec
	pinned bool     // the model was given (--model, --set model=, AGENTSIM_MODEL)
	env    []string // agentsim's environment
	// errOut is the command's stderr, which the processes' goroutines, the proxy's and the
	// command's write to at once.
	errOut io.Writer

	clk      *clock.Clock
	upstream string // the server's root URL
	info     results.Server
	dir      string
	proxy    *record.Proxy
	trace    *os.File // the proxy's trace, closed once the proxy is
	watch    *record.Watcher
	wallT0   time.Time

	mu      sync.Mutex
	stopped events.EndReason // why agentsim stopped the processes; "" while it has not
	exits   []procs.Exited
}

// run runs the exec and returns its exit.
func (r *execRun) run() error {
	stopServer, err := r.startServer()
	if err != nil {
		return err
	}
	defer stopServer()
	dir, discard, err := newRunDir(r.cfg.Out, r.cfg.Force, "exec", time.Now())
	if err != nil {
		return err
	}
	r.dir, r.spec.Dir = dir, dir
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		discard()
		return runtimeError(fmt.Errorf("exec: listen for the proxy: %w", err))
	}
	if err := r.startProxy(); err != nil {
		ln.Close()
		discard()
		return err
	}
	return r.serve(ln)
}

// startServer starts the embedded simulator on a loopback port, or checks --server, and sets
// the clock the run runs on.
func (r *execRun) startServer() (func(), error) {
	t := r.cfg.Target
	if t.Server != "" {
		for _, name := range simFlags {
			if r.c.Flags().Changed(name) {
				return nil, usageError(fmt.Errorf("--%s configures the embedded simulator and cannot be used with --server", name))
			}
		}
		r.upstream = strings.TrimSuffix(strings.TrimRight(t.Server, "/"), "/v1")
		clk, err := serverClock(r.c, r.upstream, t.APIKey)
		if err != nil {
			return nil, err
		}
		r.clk = clk
		r.info = results.Server{URL: redact.URL(r.upstream), Kind: results.External, Model: r.w.Model, ModelSource: "workload"}
		return func() {}, nil
	}
	cfg := t.sim()
	srv, clk, _, err := buildSimServer(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, runtimeError(fmt.Errorf("exec: listen for the simulator: %w", err))
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ctx, ln)
	}()
	r.clk, r.upstream = clk, "http://"+ln.Addr().String()
	r.info = results.Server{URL: r.upstream, Kind: results.Embedded, Profile: cfg.Profile, Fault: srv.Engine().Faults().Names(),
		Model: r.w.Model, ModelSource: "workload"}
	if prof, err := simserver.LoadProfile(cfg.Profile); err == nil && !r.pinned {
		r.w.Model, r.info.Model, r.info.ModelSource = prof.Model, prof.Model, "server"
	}
	return func() { cancel(); <-served }, nil
}

// startProxy creates the trace and the watch in the run directory and the proxy before them.
func (r *execRun) startProxy() error {
	up, _ := url.Parse(r.upstream)
	trace, err := os.OpenFile(filepath.Join(r.dir, traceFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return runtimeError(fmt.Errorf("exec: %w", err))
	}
	metrics := r.upstream + "/metrics"
	if len(r.cfg.Target.MetricsURLs) > 0 {
		metrics = r.cfg.Target.MetricsURLs[0]
	}
	r.watch, err = record.NewWatcher(record.WatchOptions{Dir: r.dir, Upstream: redact.URL(r.upstream), TraceFile: traceFile,
		MetricsURL: metrics, APIKey: r.cfg.Target.APIKey, Clock: r.clk, Out: r.c.OutOrStdout(), Workload: r.w, AgentOf: r.agentOf})
	if err != nil {
		trace.Close()
		return runtimeError(fmt.Errorf("exec: %w", err))
	}
	r.proxy, err = record.New(record.Options{Upstream: up, Trace: trace, Clock: r.clk, Log: r.errOut, Observer: r.watch})
	if err != nil {
		trace.Close()
		return usageError(err)
	}
	r.trace = trace
	return nil
}

// agentOf names the process of a session the router tagged: "3", or "3:<harness's session>".
func (r *execRun) agentOf(session string) (int, bool) {
	head, _, _ := strings.Cut(session, ":")
	n, err := strconv.Atoi(head)
	if err != nil || n < 0 || n >= r.w.Agents {
		return 0, false
	}
	return n, true
}

// agentPrefix is the path under which a process reaches the proxy: /agents/<agent>.
const agentPrefix = "/agents/"

// route strips a process's path prefix and tags its request with its agent; a request
// without the prefix passes as it came (its session is then inferred from its messages).
func (r *execRun) route(w http.ResponseWriter, req *http.Request) {
	if rest, ok := strings.CutPrefix(req.URL.Path, agentPrefix); ok {
		id, path, _ := strings.Cut(rest, "/")
		if n, err := strconv.Atoi(id); err == nil && n >= 0 && n < r.w.Agents {
			req.URL.Path, req.URL.RawPath = "/"+path, ""
			req.Header.Set(wire.AgentIDHeader, id)
			// A session the harness names stays its own, inside its process's.
			if s := req.Header.Get(wire.SessionIDHeader); s != "" {
				req.Header.Set(wire.SessionIDHeader, id+":"+s)
			}
		}
	}
	r.proxy.ServeHTTP(w, req)
}

// vars are agent's values, on the proxy at addr.
func (r *execRun) vars(addr string) func(int) procs.Vars {
	key := apiKey(r.cfg.Target.APIKey, r.env)
	return func(agent int) procs.Vars {
		root := fmt.Sprintf("http://%s%s%d", addr, agentPrefix, agent)
		return procs.Vars{URL: root, BaseURL: root + "/v1", Model: r.w.Model, APIKey: key}
	}
}

// offsets spreads the processes' starts uniformly over start_jitter, seeded by the workload.
func (r *execRun) offsets() []time.Duration {
	out := make([]time.Duration, r.w.Agents)
	if r.w.StartJitter <= 0 {
		return out
	}
	rng := rand.New(rand.NewPCG(uint64(r.w.Seed), 0x65786563))
	for i := range out {
		out[i] = time.Duration(rng.Int64N(int64(r.w.StartJitter)))
	}
	return out
}

// Started implements procs.Observer.
func (r *execRun) Started(s procs.Started) {
	r.watch.ProcessStarted(r.proxy.Now(), s.Agent, r.w.Agents, s.PID, strings.Join(s.Args, " "))
}

// Exited implements procs.Observer.
func (r *execRun) Exited(x procs.Exited) {
	r.mu.Lock()
	r.exits = append(r.exits, x)
	reason := events.EndReason("")
	if x.Stopped {
		reason = r.stopped
	}
	r.mu.Unlock()
	how := x.Describe()
	if x.LastErrLine != "" {
		how += fmt.Sprintf(" (stderr: %q)", redact.Text(x.LastErrLine))
	}
	if x.StartErr != nil && !x.Stopped {
		r.watch.ProcessExited(r.proxy.Now(), x.Agent, x.Code, "", how)
	} else if x.StartErr == nil {
		r.watch.ProcessExited(r.proxy.Now(), x.Agent, x.Code, reason, how)
	}
	fmt.Fprintf(r.errOut, "exec: agent %d %s after %s wall\n", x.Agent, how, results.Seconds(x.WallS))
}

var _ procs.Observer = (*execRun)(nil)

// lockedWriter serialises the writes of several goroutines to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
