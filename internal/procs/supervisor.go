package procs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/agentsim/agentsim/clock"
)

// Started says a process started.
type Started struct {
	Agent int
	PID   int
	// Args is its command line, placeholders replaced.
	Args []string
}

// Exited says how a process ended, or that it could not start.
type Exited struct {
	Agent int
	// Code is its exit status; −1 when a signal ended it (Signal names it) or it never
	// started (StartErr says why).
	Code     int
	Signal   string
	StartErr error
	// Stopped is set when the supervisor's Stop signalled it.
	Stopped bool
	// LastErrLine is the last non-empty line of its stderr, "" when it wrote none.
	LastErrLine string
	// WallS is how long it ran, in wall seconds.
	WallS float64
}

// Describe says in a few words how the process ended.
func (e Exited) Describe() string {
	switch {
	case e.StartErr != nil:
		return "could not start: " + e.StartErr.Error()
	case e.Signal != "" && e.Stopped:
		return "stopped by agentsim (" + e.Signal + ")"
	case e.Signal != "":
		return "killed by " + e.Signal
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

// Observer is told of each process's start and end; calls come from the processes' own
// goroutines, concurrently.
type Observer interface {
	Started(Started)
	Exited(Exited)
}

// Supervisor runs the processes of a Spec. Start it once; Stop is safe to call at any time
// and more than once.
type Supervisor struct {
	spec  Spec
	clk   *clock.Clock
	obs   Observer
	wall  *clock.Clock // the grace period passes in wall time
	ctx   context.Context
	abort context.CancelFunc // ends the waits of processes not started yet
	wg    sync.WaitGroup
	done  chan struct{}

	mu       sync.Mutex
	running  map[int]*exec.Cmd
	stopping bool
}

// New returns a Supervisor for spec; its start offsets pass on clk.
func New(spec Spec, clk *clock.Clock, obs Observer) (*Supervisor, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if spec.Grace <= 0 {
		spec.Grace = DefaultGrace
	}
	if err := os.MkdirAll(filepath.Join(spec.Dir, "procs"), 0o755); err != nil {
		return nil, fmt.Errorf("create the processes' directory: %w", err)
	}
	ctx, abort := context.WithCancel(context.Background())
	return &Supervisor{spec: spec, clk: clk, obs: obs, wall: clock.Real(), ctx: ctx, abort: abort,
		done: make(chan struct{}), running: map[int]*exec.Cmd{}}, nil
}

// Start starts every agent at its offset, each on a goroutine of its own that ends when its
// process has exited; Done is closed once all have.
func (s *Supervisor) Start() {
	for i := 0; i < s.spec.Agents; i++ {
		s.wg.Add(1)
		go s.agent(i)
	}
	go func() {
		s.wg.Wait()
		close(s.done)
	}()
}

// Done is closed once every process has exited (or was never started because of Stop).
func (s *Supervisor) Done() <-chan struct{} { return s.done }

// agent waits for i's offset, runs its process and reports its end.
func (s *Supervisor) agent(i int) {
	defer s.wg.Done()
	if s.spec.Offsets != nil && s.spec.Offsets[i] > 0 {
		if s.clk.Sleep(s.ctx, s.spec.Offsets[i]) != nil {
			return // stopped before it started
		}
	}
	// The parent-death signal is sent when the thread that started the process ends, not
	// the agentsim process: the thread stays this goroutine's until the process has exited.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s.obs.Exited(s.run(i))
}

// run starts agent i's process and waits for it.
func (s *Supervisor) run(i int) Exited {
	v := s.spec.Vars(i)
	args := s.spec.Args(i, v)
	ex := Exited{Agent: i, Code: -1}
	cmd, closeFiles, err := s.command(i, args, v)
	if err != nil {
		ex.StartErr = err
		return ex
	}
	defer closeFiles()
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		ex.StartErr, ex.Stopped = errors.New("the run stopped before its start"), true
		return ex
	}
	start := s.wall.Now()
	err = cmd.Start()
	if err == nil {
		s.running[i] = cmd
	}
	s.mu.Unlock()
	if err != nil {
		ex.StartErr = err
		return ex
	}
	s.obs.Started(Started{Agent: i, PID: cmd.Process.Pid, Args: args})
	_ = cmd.Wait() // a non-zero status is in ProcessState, not a failure of the supervision
	s.mu.Lock()
	delete(s.running, i)
	ex.Stopped = s.stopping
	s.mu.Unlock()
	ex.WallS = s.wall.Since(start).Seconds()
	ex.Code, ex.Signal = exitStatus(cmd)
	ex.LastErrLine = lastLine(ErrFile(s.spec.Dir, i))
	return ex
}

// command builds agent i's process: its directory, files, environment and process group.
func (s *Supervisor) command(i int, args []string, v Vars) (*exec.Cmd, func(), error) {
	dir := WorkDir(s.spec.Dir, i)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	out, err := os.Create(OutFile(s.spec.Dir, i))
	if err != nil {
		return nil, nil, err
	}
	errf, err := os.Create(ErrFile(s.spec.Dir, i))
	if err != nil {
		out.Close()
		return nil, nil, err
	}
	rest := make([]string, len(args)-1)
	for k, a := range args[1:] {
		rest[k] = pathArg(a)
	}
	cmd := exec.Command(program(args[0]), rest...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, s.spec.Environ(i, v), out, errf
	cmd.SysProcAttr = sysProcAttr()
	return cmd, func() { out.Close(); errf.Close() }, nil
}

// program resolves a program named by a relative path ("./harness") against this process's
// working directory, where Validate found it, rather than the agent's, where the process
// starts; a bare name is looked up on PATH as it is.
func program(name string) string {
	if filepath.IsAbs(name) || !strings.ContainsAny(name, "/"+string(filepath.Separator)) {
		return name
	}
	if abs, err := filepath.Abs(name); err == nil {
		return abs
	}
	return name
}

// pathArg makes an argument that names an existing file or directory relative to this
// process's working directory ("scripts/harness.mjs", "./config.toml") absolute: the process
// starts in its own directory, where the relative name would name nothing. Other arguments —
// flags, words, paths that do not exist here — are passed as they are.
func pathArg(a string) string {
	if a == "" || filepath.IsAbs(a) || strings.HasPrefix(a, "-") {
		return a
	}
	if _, err := os.Stat(a); err != nil {
		return a
	}
	if abs, err := filepath.Abs(a); err == nil {
		return abs
	}
	return a
}

// exitStatus returns the process's exit status, or −1 and the signal that ended it.
func exitStatus(cmd *exec.Cmd) (int, string) {
	st := cmd.ProcessState
	if st == nil {
		return -1, ""
	}
	if sig := signalOf(st); sig != "" {
		return -1, sig
	}
	return st.ExitCode(), ""
}

// Stop ends the run's processes: agents not started yet never start; every running process
// group gets SIGTERM, and SIGKILL once grace has passed without its exit. It returns when
// every process has exited.
func (s *Supervisor) Stop() {
	s.mu.Lock()
	first := !s.stopping
	s.stopping = true
	running := make([]*exec.Cmd, 0, len(s.running))
	for _, c := range s.running {
		running = append(running, c)
	}
	s.mu.Unlock()
	s.abort()
	if first {
		for _, c := range running {
			terminate(c.Process)
		}
	}
	t := s.wall.NewTimer(s.spec.Grace)
	defer t.Stop()
	select {
	case <-s.done:
		return
	case <-t.C:
	}
	s.mu.Lock()
	for _, c := range s.running {
		kill(c.Process)
	}
	s.mu.Unlock()
	<-s.done
}

// lastLine returns the last non-empty line of the file at path, from its last 4 KiB.
func lastLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 4096
	if st, err := f.Stat(); err == nil && st.Size() > tail {
		_, _ = f.Seek(-tail, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	lines := bytes.Split(bytes.TrimRight(b, "\r\n\t "), []byte("\n"))
	last := strings.TrimSpace(string(lines[len(lines)-1]))
	if len(last) > 300 {
		last = last[:300] + "…"
	}
	return last
}
