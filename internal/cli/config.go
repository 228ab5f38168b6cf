package cli

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/internal/shown"
	"github.com/agentsim/agentsim/workloads"
)

// A command's configuration comes in two parts, each with one owner:
//
//   - its settings — which server, which workload file, where to write — are its flags
//     (--server, --speedup, --out…), with AGENTSIM_<FLAG> variables beneath them
//     (AGENTSIM_SERVER, AGENTSIM_SPEEDUP, AGENTSIM_API_KEY). The command binds them to its own
//     viper in one call and decodes them once into a typed struct (loadSettings).
//   - the workload's keys, which workloads.Load resolves through its chain: built-in defaults
//     < workload file < --config file < AGENTSIM_<KEY> environment < --set and the flags that
//     stand for it (--agents N is --set agents=N). Of a flag and --set for one key, the later
//     on the command line wins.
//
// The environment is read once, by Execute, and split once per command by loadSettings: a
// variable naming one of the command's settings goes to that setting, even where it also
// names a workload key (compare's AGENTSIM_SAMPLE_INTERVAL is its --sample-interval); every
// other one goes to workloads.Load, which reads it as a workload key or reports it as unknown.
// Commands that load no workload (bench, serve, diagnose) leave the other variables alone.

// newViper returns a command's own viper with its settings flags bound to keys of the same
// name.
func newViper(settings *pflag.FlagSet) *viper.Viper {
	v := viper.New()
	if err := v.BindPFlags(settings); err != nil {
		panic(err) // only on a programming error: a nil flag set
	}
	return v
}

// loadSettings applies the environment's AGENTSIM_<FLAG> variables to the settings flags the
// command line left unset, then decodes every setting once into cfg (a pointer to a struct
// whose mapstructure tags are the flag names; a flag without a field is an error). It returns
// the problems with the environment's values and the variables that name no setting, for
// workloads.Load.
func loadSettings(settings *pflag.FlagSet, v *viper.Viper, env []string, cfg any) ([]workloads.Problem, []string) {
	var problems []workloads.Problem
	var rest []string
	byEnv := map[string]*pflag.Flag{}
	settings.VisitAll(func(f *pflag.Flag) { byEnv[workloads.EnvName(f.Name)] = f })
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		f, ok := byEnv[name]
		if !ok {
			if strings.HasPrefix(name, workloads.EnvPrefix) {
				rest = append(rest, kv)
			}
			continue
		}
		if f.Changed {
			continue // the command line wins
		}
		if err := f.Value.Set(val); err != nil {
			problems = append(problems, workloads.Problem{Source: name + "=" + val, Key: f.Name,
				Message: fmt.Sprintf("%s: %q is not allowed: want %s", f.Name, val, typeWant(f.Value.Type()))})
		}
	}
	problems = append(problems, emptyArrayValues(settings)...)
	if err := v.UnmarshalExact(cfg); err != nil {
		panic(fmt.Sprintf("decode settings: %v", err)) // a flag without its field: a programming error
	}
	return problems, rest
}

// emptyArrayValues returns a problem for each repeatable flag given an empty value (--grid ""):
// viper reads such a flag through its text, where an empty value is lost, so the command would
// run as if the flag were not given.
func emptyArrayValues(settings *pflag.FlagSet) []workloads.Problem {
	var problems []workloads.Problem
	settings.VisitAll(func(f *pflag.Flag) {
		sv, ok := f.Value.(pflag.SliceValue)
		if !f.Changed || !ok || f.Value.Type() != "stringArray" {
			return
		}
		// GetSlice, not GetStringArray: that too goes through the text.
		if slices.Contains(sv.GetSlice(), "") {
			problems = append(problems, workloads.Problem{Source: "--" + f.Name, Key: f.Name,
				Message: fmt.Sprintf(`"" is not allowed: want %s`, f.Usage)})
		}
	})
	return problems
}

// unreported returns the problems of ps whose key has none in reported: a setting whose
// value could not even be read is not judged again on the zero it was left with.
func unreported(ps, reported []workloads.Problem) []workloads.Problem {
	var out []workloads.Problem
	for _, p := range ps {
		if !slices.ContainsFunc(reported, func(r workloads.Problem) bool { return r.Key == p.Key }) {
			out = append(out, p)
		}
	}
	return out
}

// flagError is how a command reports a flag pflag could not parse: a value its type does not
// take is named with the flag and what the type allows, as a value from the environment is
// (pflag's own message names the Go parser: `strconv.ParseUint: parsing "-1"`). Every other
// parsing error is pflag's, and a usage error.
func flagError(_ *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	if errors.As(err, &iv) {
		f := iv.GetFlag()
		want := typeWant(f.Value.Type())
		if errors.Is(err, strconv.ErrRange) {
			want = rangeWant(f.Value.Type())
		}
		err = fmt.Errorf("--%s: %q is not allowed: want %s", f.Name, shown.Elide(iv.GetValue()), want)
	}
	return usageError(err)
}

// rangeWant says what a flag of pflag type typ accepts, to a value of its type out of range.
func rangeWant(typ string) string {
	switch typ {
	case "int", "int64":
		return fmt.Sprintf("an integer from %d to %d", math.MinInt64, math.MaxInt64)
	case "uint64":
		return fmt.Sprintf("a whole number from 0 to %d", uint64(math.MaxUint64))
	case "float64":
		return "a finite number"
	}
	return typeWant(typ)
}

// typeWant says what a flag of pflag type typ accepts.
func typeWant(typ string) string {
	switch typ {
	case "int", "int64":
		return "an integer"
	case "uint64":
		return "a whole number ≥ 0"
	case "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "duration":
		return "a duration such as 750ms or 2s"
	case "intSlice":
		return "comma-separated integers"
	case "string", "stringSlice", "stringArray":
		return "text"
	}
	return "a " + typ // a type of agentsim's own, named for people (key=value)
}

// overrides are the workload keys the command line sets: --set key=value and the flags that
// stand for it, in command-line order, so that of two for one key the later wins.
type overrides struct {
	list     []workloads.Override
	problems []workloads.Problem // --set arguments without "="
}

// shortcuts are the workload keys with a flag of their own: --agents 8 is --set agents=8.
var shortcuts = []struct{ key, usage string }{
	{"agents", "number of agents"},
	{"rounds", "rounds per agent"},
	{"duration", "end new rounds after this simulated time (0s: no limit, the rounds alone end the run)"},
	{"seed", "seed for text, lengths and timing"},
	{"model", "model name to send (default: the workload's, or the one model the server serves)"},
}

// addFlags adds --set and the shortcut flags, each typed as its workload key.
func (o *overrides) addFlags(f *pflag.FlagSet) {
	for _, s := range shortcuts {
		f.Var(&keyFlag{o: o, key: s.key}, s.key,
			fmt.Sprintf("%s (overrides the workload; same as --set %s=…)", s.usage, s.key))
	}
	f.Var(&setFlag{o}, "set", "override any workload key: key=value (repeatable), e.g. pacer.slots=16; "+
		"of --set and a flag for the same key, the later one wins")
}

// keyFlag is a flag that sets one workload key.
type keyFlag struct {
	o     *overrides
	key   string
	value string
}

func (k *keyFlag) Set(v string) error {
	k.value = v
	k.o.list = append(k.o.list, workloads.Override{Key: k.key, Value: v, Source: "--" + k.key})
	return nil
}
func (k *keyFlag) String() string { return k.value }
func (k *keyFlag) Type() string   { return workloads.KeyType(k.key) }

// setFlag is --set key=value, repeatable.
type setFlag struct{ o *overrides }

func (s *setFlag) Set(v string) error {
	key, val, ok := strings.Cut(v, "=")
	if !ok {
		s.o.problems = append(s.o.problems, workloads.Problem{Source: "--set " + v,
			Message: fmt.Sprintf("%q is not allowed: want key=value, e.g. pacer.slots=16", v)})
		return nil
	}
	s.o.list = append(s.o.list, workloads.Override{Key: strings.TrimSpace(key), Value: val, Source: "--set"})
	return nil
}
func (s *setFlag) String() string { return "" }
func (s *setFlag) Type() string   { return "key=value" }

// loadWorkload resolves the workload named by the settings through workloads.Load, with the
// environment variables no setting took and the command line's overrides. problems are those
// found before (in the settings' environment); all are reported at once as a usage error.
func loadWorkload(problems []workloads.Problem, name, configFile string, env []string, o *overrides) (*workloads.Workload, error) {
	return loadWith(problems, workloads.LoadOptions{Workload: name, ConfigFile: configFile, Env: env}, o)
}

// loadWith is loadWorkload with every load option given; the overrides are o's.
func loadWith(problems []workloads.Problem, opts workloads.LoadOptions, o *overrides) (*workloads.Workload, error) {
	problems = slices.Concat(problems, o.problems)
	opts.Overrides, opts.ConfigSource = o.list, configSource(opts.ConfigFile)
	w, err := workloads.Load(opts)
	var ce *workloads.ConfigError
	switch {
	case errors.As(err, &ce):
		problems = append(problems, ce.Problems...)
	case err != nil:
		return nil, usageError(err)
	}
	if err := configError(problems); err != nil {
		return nil, err
	}
	return w, nil
}

// configSource names the --config file in messages.
func configSource(path string) string { return "--config " + path }

// configError is nil without problems, else a usage error listing them: one problem on its
// own, several one per indented line under a header.
func configError(problems []workloads.Problem) error {
	switch len(problems) {
	case 0:
		return nil
	case 1:
		return usageError(&workloads.ConfigError{Problems: problems})
	}
	lines := make([]string, len(problems))
	for i, p := range problems {
		lines[i] = "  " + p.String()
	}
	return usageError(fmt.Errorf("invalid configuration, %d problems:\n%s", len(lines), strings.Join(lines, "\n")))
}
