package cli

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/harness"
	"github.com/agentsim/agentsim/internal/redact"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/simserver"
	"github.com/agentsim/agentsim/workloads"
)

// target is the server a command talks to: an external URL, or the embedded simulator the
// command started and must stop.
type target struct {
	info harness.Target
	// clock is the embedded simulator's; for an external server, nil until prepare adopts the
	// speedup it advertises.
	clock  *clock.Clock
	client *http.Client // nil: the harness's default
	stop   func()
}

// prepare settles the run of o with the server (harness.Prepare: the model, the context fit,
// the speedup) before anything runs, and fills in o the target, its client, the clock the run
// runs on and what was prepared, saying on stderr when the clock is an agentsim server's
// speedup. The error is the harness's, marked with its exit code.
func (t *target) prepare(c *cobra.Command, o *harness.Options) (*harness.Prepared, error) {
	o.Target, o.Clock, o.HTTPClient = t.info, t.clock, t.client
	p, err := harness.Prepare(c.Context(), *o)
	if err != nil {
		return nil, harnessError(err)
	}
	o.Clock, o.Prepared = p.Clock, p
	t.adopt(c, p)
	return p, nil
}

// adopt takes the clock p settled for the target's runs, saying on stderr when it is the
// speedup an agentsim server advertises.
func (t *target) adopt(c *cobra.Command, p *harness.Prepared) {
	t.clock = p.Clock
	if p.Adopted {
		sayAdopted(c, t.info.URL, p.Clock.Speedup())
	}
}

// targetConfig is the settings that pick the server (run, bench, compare): see addServerFlags.
type targetConfig struct {
	Server         string   `mapstructure:"server"`
	APIKey         string   `mapstructure:"api-key"`
	MetricsURLs    []string `mapstructure:"metrics-url"`
	SimProfile     string   `mapstructure:"sim-profile"`
	SimFaults      []string `mapstructure:"sim-fault"`
	SimFaultParams []string `mapstructure:"sim-fault-param"`
	Speedup        string   `mapstructure:"speedup"` // a number, or "max" (see speedupSetting)
	SimSeed        uint64   `mapstructure:"sim-seed"`
}

// sim is the embedded simulator's configuration.
func (t targetConfig) sim() simConfig {
	speedup, adaptive, _ := speedupSetting(t.Speedup) // check refused a speedup it cannot read
	return simConfig{Profile: t.SimProfile, Faults: t.SimFaults, FaultParams: t.SimFaultParams, faultFlags: simFaultFlags,
		Speedup: speedup, SpeedupMax: adaptive, Seed: t.SimSeed}
}

// maxStartSpeedup is the speedup a --speedup max run starts at, before its controller has
// measured the machine (harness.MaxPace).
const maxStartSpeedup = 20

// speedupSetting reads --speedup: a number from 1 to 1000000, or "max" (the embedded
// simulator's clock then adapts to the machine, starting at maxStartSpeedup; docs/speed.md).
func speedupSetting(v string) (speedup float64, adaptive bool, err error) {
	if strings.EqualFold(strings.TrimSpace(v), "max") {
		return maxStartSpeedup, true, nil
	}
	s, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err == nil {
		err = clock.ValidateSpeedup(s)
	}
	return s, false, err
}

// simFlags are the flags that configure the embedded simulator.
var simFlags = []string{"sim-profile", "sim-fault", "sim-fault-param", "speedup", "sim-seed"}

// startTarget returns the external server named by --server, refusing simulator-only flags
// given on the command line, or starts the embedded simulator in this process (see
// simserver.Local: no sockets, so thousands of agents cost no file descriptors).
func startTarget(c *cobra.Command, t targetConfig) (*target, error) {
	if err := configError(t.check(c.Flags())); err != nil {
		return nil, err
	}
	if url := strings.TrimSuffix(strings.TrimRight(t.Server, "/"), "/v1"); url != "" {
		for _, name := range simFlags {
			if c.Flags().Changed(name) {
				if name == "speedup" {
					return nil, usageError(fmt.Errorf("--speedup applies only to the embedded simulator (against an agentsim server the run adopts the speedup it advertises): drop --speedup, or drop --server to use the simulator"))
				}
				return nil, usageError(fmt.Errorf("--%s configures the embedded simulator and cannot be used with --server", name))
			}
		}
		info := harness.Target{URL: url, Kind: results.External, APIKey: t.APIKey, MetricsURLs: t.MetricsURLs}
		return &target{info: info, stop: func() {}}, nil
	}
	cfg := t.sim()
	srv, clk, _, err := buildSimServer(cfg)
	if err != nil {
		return nil, err
	}
	local, err := srv.ServeLocal()
	if err != nil {
		return nil, runtimeError(fmt.Errorf("embedded simulator: %w", err))
	}
	info := harness.Target{URL: simserver.LocalURL, Kind: results.Embedded, Profile: cfg.Profile, Faults: srv.Engine().Faults().Names(),
		APIKey: t.APIKey, MetricsURLs: t.MetricsURLs, SimLag: srv.Engine()}
	return &target{info: info, clock: clk, client: local.Client(), stop: local.Close}, nil
}

// check returns the problems of the target settings that can be found before anything
// starts: URLs that are not http(s)://host URLs, a speedup out of range. Each names the
// setting as the user gave it (see settingSource) and shows its value, credentials redacted.
func (t targetConfig) check(flags *pflag.FlagSet) []workloads.Problem {
	var problems []workloads.Problem
	add := func(name, shown, want string) {
		src := settingSource(flags, name)
		problems = append(problems, workloads.Problem{Key: name,
			Message: fmt.Sprintf("%s: %s is not allowed: want %s", src, shown, want)})
	}
	if t.Server != "" {
		if want := urlWant(t.Server, "the server's base URL"); want != "" {
			add("server", shownURL(t.Server), want)
		}
	}
	for _, m := range t.MetricsURLs {
		if want := urlWant(m, "a Prometheus /metrics URL"); want != "" {
			add("metrics-url", shownURL(m), want)
		}
	}
	if _, _, err := speedupSetting(t.Speedup); err != nil {
		shown := strconv.Quote(t.Speedup)
		if s, err := strconv.ParseFloat(strings.TrimSpace(t.Speedup), 64); err == nil {
			shown = strconv.FormatFloat(s, 'g', -1, 64)
		}
		add("speedup", shown, "a number from 1 to 1000000 (times faster than wall time), or max")
	}
	if t.Server != "" {
		return problems // the simulator's settings are refused with --server by startTarget
	}
	if _, err := simserver.LoadProfile(t.SimProfile); errors.Is(err, simserver.ErrUnknownProfile) {
		add("sim-profile", strconv.Quote(t.SimProfile), "one of "+strings.Join(simserver.ProfileNames(), ", ")+", or a profile YAML file")
	} else if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			problems = append(problems, workloads.Problem{Key: "sim-profile", Message: settingSource(flags, "sim-profile") + ": " + line})
		}
	}
	if _, err := simserver.ParseFaults(t.SimFaults, t.SimFaultParams, t.SimSeed); err != nil {
		for _, line := range strings.Split(simFaultFlags.named(err).Error(), "\n") {
			problems = append(problems, workloads.Problem{Key: "sim-fault", Message: line})
		}
	}
	return problems
}

// shownURL quotes a URL setting for a message, credentials masked even when it lacks the
// scheme that lets redact recognise a URL.
func shownURL(raw string) string {
	if strings.Contains(raw, "://") {
		return strconv.Quote(redact.Text(raw))
	}
	return strconv.Quote(strings.TrimPrefix(redact.URL("http://"+raw), "http://"))
}

// urlWant says what an http(s) URL setting wants when raw is not one, or "" when it is. A
// missing scheme gets the URL it probably meant.
func urlWant(raw, what string) string {
	u, err := url.Parse(raw)
	switch {
	case !strings.Contains(raw, "://"):
		return fmt.Sprintf("%s with its scheme, such as %s", what, redact.URL("http://"+raw))
	case err != nil:
		return fmt.Sprintf("%s, such as http://127.0.0.1:8000 (%s)", what, redact.Text(errors.Unwrap(err).Error()))
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("%s with scheme http or https, such as http://127.0.0.1:8000", what)
	case u.Host == "":
		return fmt.Sprintf("%s naming a host, such as http://127.0.0.1:8000", what)
	}
	return ""
}

// settingSource names a setting as the user gave it: its flag when the command line set it
// ("--speedup"), else its environment variable ("AGENTSIM_SPEEDUP"), the only other way a
// setting gets a value other than its default.
func settingSource(flags *pflag.FlagSet, name string) string {
	if f := flags.Lookup(name); f != nil && f.Changed {
		return "--" + name
	}
	return workloads.EnvName(name)
}

// faultFlags are the flags that give the simulator's faults and their parameters: serve's
// own, or those of a command that embeds the simulator.
type faultFlags struct{ name, param string }

var (
	serveFaultFlags = faultFlags{"--fault", "--fault-param"}
	simFaultFlags   = faultFlags{"--sim-fault", "--sim-fault-param"}
)

// named says, in each problem of the faults err holds (simserver.ParseFaults: a
// *simserver.FaultError), the flag that gave the value: `--sim-fault "nope": unknown fault; …`.
// Its other problems are kept as they are, and all of err when f names no flag.
func (f faultFlags) named(err error) error {
	if err == nil || f == (faultFlags{}) {
		return err
	}
	all := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		all = j.Unwrap()
	}
	out := make([]error, len(all))
	for i, e := range all {
		var fe *simserver.FaultError
		switch {
		case !errors.As(e, &fe):
			out[i] = e
		case fe.Param != "":
			out[i] = fmt.Errorf("%s %q: %w", f.param, fe.Param, fe.Err)
		default:
			out[i] = fmt.Errorf("%s %q: %w", f.name, fe.Name, fe.Err)
		}
	}
	return errors.Join(out...)
}
