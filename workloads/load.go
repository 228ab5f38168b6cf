package workloads

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/viper"

	"github.com/agentsim/agentsim/internal/shown"
	"github.com/agentsim/agentsim/pacer"
)

// LoadOptions says which workload to load and what overrides it.
type LoadOptions struct {
	// Workload is a built-in name (see Names) or a file path; "" means DefaultWorkload. A
	// built-in wins over a file of the same name: write ./smoke to load the file.
	Workload string
	// Base, when set, is the workload file's content, read in place of the file or built-in
	// Workload names (which then only names it in messages): a command with a workload of
	// its own, such as replay's.
	Base []byte
	// ConfigFile is a file of workload keys that override the workload file's, with the same
	// keys; "" means none. ConfigSource names it in messages, as the caller knows it (the
	// command line's "--config FILE"); "" names it "config file FILE".
	ConfigFile, ConfigSource string
	// Env holds environment variables in os.Environ's "NAME=value" form. Variables named
	// EnvPrefix + a key (see EnvName) set that key; any other variable starting with EnvPrefix
	// is an error, except AGENTSIM_API_KEY. A command passes the variables its own flags did
	// not take (see the command layer's reading of the environment).
	Env []string
	// Overrides are --set key=value pairs and the flags that stand for them (--agents N is
	// --set agents=N), highest precedence, in command-line order: of two for one key, the
	// later wins.
	Overrides []Override
}

// Override sets one key from the command line.
type Override struct {
	// Key is a dotted key, e.g. "pacer.slots".
	Key string
	// Value is the text given, converted to the key's type: "16", "60s",
	// "{dist: exp, mean: 2s}".
	Value string
	// Source says where it was given, for messages, as the caller names it: the command line's
	// flag ("--set", or a flag that stands for the key, "--agents"), a test's setting
	// ("Config.Set"); "" when unknown.
	Source string
}

// String renders the override as it was given: its Source, then key=value ("--set
// pacer.slots=16"), or, for a Source that stands for the key itself, =value ("--agents=8");
// key=value alone when the Source is unknown. A long value is cut, as messages quote it.
func (o Override) String() string {
	v := shown.Elide(o.Value)
	switch {
	case o.Source == "":
		return o.Key + "=" + v
	case strings.TrimLeft(o.Source, "-") == o.Key:
		return o.Source + "=" + v
	}
	return o.Source + " " + o.Key + "=" + v
}

// alwaysIgnoredEnv are AGENTSIM_ variables other parts of agentsim read: the API key, which a
// command may take from the environment without Load ever seeing a workload key in it.
var alwaysIgnoredEnv = []string{"AGENTSIM_API_KEY"}

// layer is one level of the configuration chain, converted to typed values.
type layer struct {
	values    map[string]any // key → typed value
	overrides bool           // set with viper.Set (highest layer) rather than merged as config
}

// Load resolves a workload through the configuration chain — overrides > environment >
// --config file > workload YAML > built-in defaults — decodes it strictly and validates it.
// Every problem found, in any layer, is reported at once in a *ConfigError. Load reads only
// the files named and opts.Env; it is safe for concurrent use.
func Load(opts LoadOptions) (*Workload, error) {
	name := opts.Workload
	if name == "" {
		name = DefaultWorkload
	}
	var base *layer
	var problems []Problem
	if opts.Base != nil {
		l, ps := fileLayer("workload "+name, "", opts.Base)
		base, problems = &l, ps
	} else {
		base, problems = workloadLayer(name)
	}
	if base == nil {
		return nil, configError(problems)
	}
	source := opts.ConfigSource
	if source == "" {
		source = "config file " + opts.ConfigFile
	}
	config, ps := configLayer(opts.ConfigFile, source)
	problems = append(problems, ps...)
	env, ps := envLayer(opts.Env, alwaysIgnoredEnv)
	problems = append(problems, ps...)
	over, ps := overrideLayer(opts.Overrides)
	problems = append(problems, ps...)
	return stack(problems, true, *base, config, env, over)
}

// LoadRecorded resolves the config.yaml a run wrote (see Redacted) the way Load resolves a
// workload file: the built-in defaults beneath the file's keys, each key converted, the whole
// decoded strictly and validated, every problem reported at once in a *ConfigError. What
// Recorded appended is skipped: the command settings (top-level keys that are no workload key,
// valued "<redacted>", "" or a URL) and the reproduce section; any other unknown key is an
// error. Problems name no source: the caller knows the file.
func LoadRecorded(data []byte) (*Workload, error) {
	l, problems := recordedLayer(data)
	return stack(problems, false, l)
}

// stack resolves layers, lowest first, on the built-in defaults and validates the result,
// adding its problems to those the layers already had. live is a workload resolved for a run:
// a pacer kind named without some of its parameters takes the kind's defaults for them
// (pacer.Defaults), and a tools file is read and checked. A recorded configuration holds
// every parameter its run used, and takes none; the tools file it names may since have moved.
func stack(problems []Problem, live bool, layers ...layer) (*Workload, error) {
	dropStalePacerParams(layers)
	w, err := resolve(layers)
	if err != nil {
		return nil, &ConfigError{Problems: append(problems, Problem{Message: err.Error()})}
	}
	if live {
		w.Pacer = w.Pacer.WithDefaults(func(key string) bool {
			return slices.ContainsFunc(layers, func(l layer) bool { _, ok := l.values[key]; return ok })
		})
	}
	var ce *ConfigError
	if errors.As(w.Validate(), &ce) {
		problems = append(problems, ce.Problems...)
	}
	if live {
		problems = append(problems, w.Tools.checkFile()...)
	}
	if len(problems) > 0 {
		return nil, &ConfigError{Problems: problems}
	}
	return w, nil
}

// resolve stacks the layers in a fresh viper, lowest first, and decodes the result strictly.
func resolve(layers []layer) (*Workload, error) {
	v := viper.New()
	// Every key gets a default, so every key is seen by UnmarshalExact whichever layer sets it.
	// A map section has none: its entries' keys are set one by one.
	for _, k := range schema.keys {
		if k.kind != kindMap {
			v.SetDefault(k.key, k.def)
		}
	}
	for _, l := range layers {
		if l.overrides {
			for key, val := range l.values {
				v.Set(key, val)
			}
			continue
		}
		if err := v.MergeConfigMap(nest(l.values)); err != nil {
			return nil, err
		}
	}
	var w Workload
	if err := v.UnmarshalExact(&w, viper.DecodeHook(DecodeHook())); err != nil {
		return nil, fmt.Errorf("decode configuration: %w", err)
	}
	return &w, nil
}

// workloadLayer reads a built-in or a workload file. A nil layer means the workload could
// not be read at all, and the problem says why.
func workloadLayer(name string) (*layer, []Problem) {
	if data, ok := Builtin(name); ok {
		l, ps := fileLayer("workload "+name, "", data)
		return &l, ps
	}
	data, err := ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(name, `/\.`) {
		return nil, []Problem{{Source: "workload " + name, Message: fmt.Sprintf(
			"no built-in workload has that name (want one of %s) and no such file exists",
			strings.Join(Names(), ", "))}}
	}
	if err != nil {
		return nil, []Problem{{Source: name, Message: readError(err)}}
	}
	l, ps := fileLayer(name, filepath.Dir(name), data)
	if len(l.values) == 0 && len(ps) == 0 {
		// The defaults alone are no workload: an empty file is a wrong or truncated path.
		return nil, []Problem{{Source: name, Message: "the file sets no key: want a workload, " +
			"such as the output of agentsim workloads show smoke"}}
	}
	if _, set := l.values["name"]; !set {
		// A file that does not name itself is named after the file.
		stem := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
		l.values["name"] = unsafeNameChars.ReplaceAllString(stem, "-")
	}
	return &l, ps
}

// configLayer reads the config file (LoadOptions.ConfigFile) at path, its problems' source
// named source; an empty path is an empty layer.
func configLayer(path, source string) (layer, []Problem) {
	if path == "" {
		return layer{values: map[string]any{}}, nil
	}
	data, err := ReadFile(path)
	if err != nil {
		return layer{values: map[string]any{}}, []Problem{{Source: source, Message: readError(err)}}
	}
	return fileLayer(source, filepath.Dir(path), data)
}

var unsafeNameChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// readError says why a file could not be read: the system's reason, or readFile's own.
func readError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return "cannot read the file: " + pe.Err.Error()
	}
	return err.Error()
}

// nest turns {"pacer.slots": 30} into {"pacer": {"slots": 30}} for viper.MergeConfigMap.
func nest(flat map[string]any) map[string]any {
	root := map[string]any{}
	for key, val := range flat {
		m := root
		parts := strings.Split(key, ".")
		for _, p := range parts[:len(parts)-1] {
			sub, ok := m[p].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[p] = sub
			}
			m = sub
		}
		m[parts[len(parts)-1]] = val
	}
	return root
}

// dropStalePacerParams applies the rule that a layer naming a different pacer.kind discards
// the pacer parameters of the layers below it: they belonged to another design, and a pacer
// Config must leave the fields of other kinds at zero.
func dropStalePacerParams(layers []layer) {
	kind := Defaults().Pacer.Kind
	for i, l := range layers {
		k, ok := l.values["pacer.kind"].(string)
		if !ok || pacer.Kind(k) == kind {
			continue
		}
		kind = pacer.Kind(k)
		for _, below := range layers[:i] {
			for key := range below.values {
				if strings.HasPrefix(key, "pacer.") && key != "pacer.kind" {
					delete(below.values, key)
				}
			}
		}
	}
}
