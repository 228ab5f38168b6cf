package workloads

import (
	"errors"
	"fmt"
	"time"
)

// Timeouts is the per-request timeout policy, in simulated time; 0 means none.
type Timeouts struct {
	// Request bounds the whole request, from send to the last byte.
	Request time.Duration `mapstructure:"timeout" yaml:"timeout"`
	// TTFT bounds the time from send to the first streamed token (reasoning or content).
	TTFT time.Duration `mapstructure:"ttft_timeout" yaml:"ttft_timeout"`
	// Idle bounds the silence between two stream chunks.
	Idle time.Duration `mapstructure:"idle_timeout" yaml:"idle_timeout"`
}

// Armed reports whether any timeout is set, so that a silent request ends by itself.
func (t Timeouts) Armed() bool { return t.Request > 0 || t.TTFT > 0 || t.Idle > 0 }

// Validate checks that no timeout is negative and returns every problem at once (nil when t is
// valid), each naming its key: request.timeout, request.ttft_timeout, request.idle_timeout.
func (t Timeouts) Validate() error {
	var errs []error
	for _, f := range []struct {
		key string
		d   time.Duration
	}{{"request.timeout", t.Request}, {"request.ttft_timeout", t.TTFT}, {"request.idle_timeout", t.Idle}} {
		if f.d < 0 {
			errs = append(errs, fmt.Errorf("%s: %v is not allowed: want a duration ≥ 0 (0 means none)", f.key, f.d))
		}
	}
	return errors.Join(errs...)
}
