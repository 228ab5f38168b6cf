package cli

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/simserver"
)

// serveCmd is `agentsim serve`: the simulated inference server on its own.
type serveCmd struct {
	env      []string       // the process environment, as Execute read it
	settings *pflag.FlagSet // the flags bound to v
	v        *viper.Viper
}

// serveConfig is serve's settings, decoded once from its flags and the environment.
type serveConfig struct {
	Addr        string   `mapstructure:"addr"`
	Profile     string   `mapstructure:"profile"`
	Faults      []string `mapstructure:"fault"`
	FaultParams []string `mapstructure:"fault-param"`
	Speedup     float64  `mapstructure:"speedup"`
	Seed        uint64   `mapstructure:"seed"`
	AccessLog   string   `mapstructure:"access-log"`
	APIKey      string   `mapstructure:"api-key"`
	// ServedModelNames are the model names the server answers to; empty means the profile's.
	ServedModelNames []string      `mapstructure:"served-model-name"`
	ReadTimeout      time.Duration `mapstructure:"read-timeout"`
	// ReasoningField names the chat reasoning delta's field: reasoning_content or reasoning.
	ReasoningField string `mapstructure:"reasoning-field"`
	// Print shows the profile resolved, as YAML, instead of serving.
	Print bool `mapstructure:"print"`
}

func (s *serveCmd) command() *cobra.Command {
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run the simulated OpenAI-compatible inference server",
		Long: `Run the simulated inference server alone, for other clients and harnesses. It speaks the
OpenAI chat-completions API (streaming and not) on POST /v1/chat/completions and the Responses
API on POST /v1/responses (docs/responses.md), lists its model on
GET /v1/models, exposes SGLang- and vLLM-named Prometheus metrics on GET /metrics and answers
GET /health. Faults reproduce the ways real stacks wedge (see --fault).`,
		Args: cobra.NoArgs,
		RunE: s.run,
	}
	f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	f.String("addr", "127.0.0.1:30000", "address to listen on (host:port; port 0 picks a free one)")
	f.String("profile", simserver.DefaultProfile, fmt.Sprintf("engine profile: one of %s, or a profile YAML file (see --print)", strings.Join(simserver.ProfileNames(), ", ")))
	f.Bool("print", false, "print the profile resolved, as a profile YAML file with every key and its unit, and exit")
	f.StringSlice("fault", nil, fmt.Sprintf("fault(s) to inject, comma-separated: %v", simserver.FaultNames()))
	f.StringArray("fault-param", nil, "fault parameter name.key=value (or key=value with one fault); repeatable")
	f.Float64("speedup", 1, "simulated time passes this many times faster than wall time (1–1000000)")
	f.Uint64("seed", 1, "seed for every random decision (output lengths, faults)")
	f.String("access-log", "", "append one model-gateway-style line per request to this file (latency in µs)")
	f.String("api-key", "", "require this bearer token on /v1/* (or set AGENTSIM_API_KEY); never printed")
	f.StringSlice("served-model-name", nil, "model name(s) requests may name, comma-separated (default: the profile's model); others get 404")
	f.Duration("read-timeout", simserver.DefaultReadTimeout, "longest a client may take to send a request's headers and body, in wall time; slower ones get 408")
	f.String("reasoning-field", simserver.FieldReasoningContent, fmt.Sprintf("the chat completions field of reasoning deltas and messages: %s (DeepSeek, SGLang) or %s (newer vLLM; the OpenAI Agents SDK reads only this one)",
		simserver.FieldReasoningContent, simserver.FieldReasoning))
	c.Flags().AddFlagSet(f)
	s.settings, s.v = f, newViper(f)
	return c
}

func (s *serveCmd) run(c *cobra.Command, _ []string) error {
	var sc serveConfig
	problems, _ := loadSettings(s.settings, s.v, s.env, &sc)
	if err := configError(problems); err != nil {
		return err
	}
	cfg := simConfig{
		Profile: sc.Profile, Faults: sc.Faults, FaultParams: sc.FaultParams, faultFlags: serveFaultFlags,
		Speedup: sc.Speedup, Seed: sc.Seed, APIKey: sc.APIKey,
		ServedModelNames: sc.ServedModelNames, ReadTimeout: sc.ReadTimeout, ReasoningField: sc.ReasoningField,
	}
	if sc.Print {
		prof, err := simserver.LoadProfile(sc.Profile)
		if err != nil {
			return usageError(fmt.Errorf("--profile: %w", err))
		}
		out, err := prof.YAML()
		if err != nil {
			return runtimeError(err)
		}
		_, err = c.OutOrStdout().Write(out)
		return err
	}
	if sc.ReadTimeout <= 0 {
		return usageError(fmt.Errorf("--read-timeout: %s is not allowed: want a duration > 0, e.g. 30s", sc.ReadTimeout))
	}
	if f := sc.ReasoningField; f != simserver.FieldReasoningContent && f != simserver.FieldReasoning {
		return usageError(fmt.Errorf("--reasoning-field: %q is not allowed: want %s or %s", f, simserver.FieldReasoningContent, simserver.FieldReasoning))
	}
	if path := sc.AccessLog; path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return runtimeError(fmt.Errorf("open access log: %w", err))
		}
		defer f.Close()
		cfg.AccessLog = f
	}
	srv, _, desc, err := buildSimServer(cfg)
	if err != nil {
		return err
	}
	ln, err := listen("--addr", sc.Addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.OutOrStdout(), "agentsim serve: listening on http://%s (%s)\n", ln.Addr(), desc)
	if allInterfaces(ln.Addr()) {
		open := "with an API key"
		if sc.APIKey == "" {
			open = "without an API key: anyone who can reach it can use it"
		}
		fmt.Fprintf(c.ErrOrStderr(), "agentsim serve: warning: listening on all interfaces (%s), %s; use --addr 127.0.0.1:PORT to serve this machine only\n", ln.Addr(), open)
	}
	if sc.AccessLog != "" && sc.Speedup != 1 {
		fmt.Fprintf(c.OutOrStdout(), "agentsim serve: access log times are simulated: they start at the wall clock's time now and run %g× as fast; latencies are simulated too, so they match the timestamps\n", sc.Speedup)
	}
	if err := srv.Serve(c.Context(), ln); err != nil && !errors.Is(err, net.ErrClosed) {
		return runtimeError(err)
	}
	fmt.Fprintln(c.OutOrStdout(), "agentsim serve: stopped")
	return nil
}

// allInterfaces reports whether addr is a wildcard address (0.0.0.0, ::), which serves every
// network the machine is on.
func allInterfaces(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsUnspecified()
}

// simConfig is how the embedded or standalone simulator is configured from flags.
type simConfig struct {
	Profile     string
	Faults      []string
	FaultParams []string
	// faultFlags are the flags that gave Faults and FaultParams, which their problems name.
	faultFlags faultFlags
	Speedup    float64
	// SpeedupMax makes the clock Adjustable, starting at Speedup: a --speedup max run
	// (harness.MaxPace).
	SpeedupMax bool
	Seed       uint64
	APIKey     string
	AccessLog  io.Writer
	// ServedModelNames are the model names requests may use; nil means the profile's model.
	ServedModelNames []string
	// ReadTimeout bounds receiving one request, in wall time; 0 means the simulator's default.
	ReadTimeout time.Duration
	// ReasoningField is simserver.Options.ReasoningField; "" means the simulator's default.
	ReasoningField string
}

// buildSimServer validates a simulator configuration and builds the server and its clock;
// configuration errors are usage errors. It also returns a one-line description for the
// operator.
func buildSimServer(cfg simConfig) (*simserver.Server, *clock.Clock, string, error) {
	prof, err := simserver.LoadProfile(cfg.Profile)
	if err != nil {
		return nil, nil, "", usageError(fmt.Errorf("profile: %w", err))
	}
	faults, err := simserver.ParseFaults(cfg.Faults, cfg.FaultParams, cfg.Seed)
	if err != nil {
		return nil, nil, "", usageError(cfg.faultFlags.named(err))
	}
	newClock := clock.New
	if cfg.SpeedupMax {
		newClock = clock.Adjustable
	}
	clk, err := newClock(cfg.Speedup)
	if err != nil {
		return nil, nil, "", usageError(fmt.Errorf("--speedup: %w", err))
	}
	var served []string
	if len(cfg.ServedModelNames) > 0 {
		served = cfg.ServedModelNames
	}
	srv, err := simserver.New(simserver.Options{Profile: prof, Faults: faults, Clock: clk, APIKey: cfg.APIKey,
		AccessLog: cfg.AccessLog, ServedModelNames: served, ReadTimeout: cfg.ReadTimeout, ReasoningField: cfg.ReasoningField})
	if err != nil {
		return nil, nil, "", usageError(err)
	}
	names := served
	if names == nil {
		names = []string{prof.Model}
	}
	desc := fmt.Sprintf("model %s, profile %s, faults %s, speedup %g, seed %d", strings.Join(names, ","), prof.Name, faults, cfg.Speedup, cfg.Seed)
	return srv, clk, desc, nil
}
