package calibrate

import (
	"bytes"
	"fmt"
	"strings"
	"time"
)

// YAML renders the fitted profile as a profile file whose comments say where every value came
// from: the server and the time, each fitted key with its standard error and source, the keys
// kept from the base and why, the engine kind's evidence and the fit's error per experiment.
func (f *Fit) YAML(d *Data, base string) ([]byte, error) {
	body, err := f.Profile.YAML()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# calibrated from %s (model %s) at %s by agentsim calibrate, in %s of experiments;\n",
		d.URL, d.Model, d.At.UTC().Format(time.RFC3339), d.Elapsed.Round(time.Second))
	fmt.Fprintf(&b, "# keys the experiments did not identify keep the values of profile %s.\n#\n", base)
	fmt.Fprintf(&b, "# engine: %s\n#\n", f.Evidence)
	if f.Speed != "" {
		fmt.Fprintf(&b, "# speed: %s\n#\n", f.Speed)
	}
	fmt.Fprintf(&b, "# fitted (value ± standard error: source):\n")
	for _, p := range f.Params {
		fmt.Fprintf(&b, "#   %s: %s ± %s: %s\n", p.Key, p.Value, p.SE, p.Source)
	}
	fmt.Fprintf(&b, "#\n# kept from %s:\n", base)
	for _, k := range f.Kept {
		fmt.Fprintf(&b, "#   %s\n", k)
	}
	fmt.Fprintf(&b, "#   every other key: not measured by the experiments\n#\n")
	fmt.Fprintf(&b, "# error of the fit per experiment (rms of relative errors; the server's own spread between repeats):\n")
	for _, e := range f.Errors {
		fmt.Fprintf(&b, "#   %s, %s, %d points: %s (spread %s)\n", e.Exp, e.What, e.Points, percent(e.RMS), percent(e.Spread))
	}
	if len(f.Notes) > 0 {
		fmt.Fprintf(&b, "#\n# notes:\n")
		for _, n := range f.Notes {
			fmt.Fprintf(&b, "#   %s\n", strings.ReplaceAll(n, "\n", " "))
		}
	}
	b.WriteString("\n")
	b.Write(annotate(body, f))
	return b.Bytes(), nil
}

// annotate marks each top-level key line of a profile's YAML that was fitted.
func annotate(body []byte, f *Fit) []byte {
	fitted := map[string]Param{}
	for _, p := range f.Params {
		fitted[p.Key] = p
	}
	lines := strings.Split(string(body), "\n")
	for i, l := range lines {
		key, _, ok := strings.Cut(l, ":")
		if !ok || strings.HasPrefix(l, " ") || strings.HasPrefix(l, "#") {
			continue
		}
		if p, ok := fitted[key]; ok {
			sep := " # "
			if strings.Contains(l, " #") {
				sep = "; "
			}
			lines[i] = l + sep + "fitted ± " + p.SE
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// Summary is the fit in a few lines, for the console.
func (f *Fit) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "engine %s: %s\n", f.Profile.EngineMode(), f.Evidence)
	if f.Speed != "" {
		fmt.Fprintf(&b, "speed: %s\n", f.Speed)
	}
	for _, p := range f.Params {
		fmt.Fprintf(&b, "  fitted %-28s %s ± %s\n", p.Key, p.Value, p.SE)
	}
	for _, k := range f.Kept {
		fmt.Fprintf(&b, "  kept   %s\n", k)
	}
	for _, e := range f.Errors {
		fmt.Fprintf(&b, "  error  %-16s %-30s %s over %d points (server's spread %s)\n", e.Exp, e.What, percent(e.RMS), e.Points, percent(e.Spread))
	}
	for _, n := range f.Notes {
		fmt.Fprintf(&b, "  note   %s\n", n)
	}
	return b.String()
}
