package harness

import "github.com/agentsim/agentsim/events"

// Observer follows a run while it runs, for a console (the command line's status line,
// progress log and warnings, package internal/cli/console): the run tells it the warnings it
// gives and how it stands after each sample, and prints nothing itself. The notes the run
// records before it starts are Prepared's to say (Prepared.Said). Its methods are called one
// at a time, on the run's sampler goroutine, and must return quickly.
type Observer interface {
	// Warned is called with each warning the run gives while it runs (the watchdog's, the
	// lag's, the sampler's falling behind, the stream chunking's), as events.jsonl records it.
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
