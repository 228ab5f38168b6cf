package harness

import "github.com/agentsim/agentsim/events"

// Observer follows a run while it runs, for a console (the command line's status line,
// progress log and warnings, package internal/cli/console): the run tells it what it says and
// how it stands after each sample, and prints nothing itself. Its methods are called one at a
// time, on the goroutine that calls Run and then on the run's sampler, and must return
// quickly.
type Observer interface {
	// Warned is called with each note the run records before it starts (the model chosen,
	// the context window) and each warning it gives while it runs (the watchdog's, the lag's,
	// the sampler's falling behind, the stream chunking's), as events.jsonl records them.
	Warned(msg string)
	// Ticked is called after each sample the sampler takes on its interval (not the run's
	// first and last samples), with the sample, the simulated seconds since the run started,
	// and the watchdog's note on stalled streams ("stalled-streams: 2 silent ≥ stall_after";
	// "" when none).
	Ticked(s events.Sample, elapsedS float64, note string)
	// Stopped is called once, when the sampler stops, before the run's last sample.
	Stopped()
}

// unobserved is the Observer of a run that has none.
type unobserved struct{}

func (unobserved) Warned(string)                         {}
func (unobserved) Ticked(events.Sample, float64, string) {}
func (unobserved) Stopped()                              {}

// observer is the run's Observer, or one that ignores everything when it has none.
func (o *Options) observer() Observer {
	if o.Observer == nil {
		return unobserved{}
	}
	return o.Observer
}
