package diagnose

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentsim/agentsim/workloads"
)

func TestConfigFrom(t *testing.T) {
	cases := []struct {
		name   string
		modify func(w *workloads.Workload)
		want   Config
	}{
		// No timeout set: nothing wakes a silent request.
		{"no timeouts", func(w *workloads.Workload) {}, Config{Agents: 30, Rounds: 8, StallAfter: 2 * time.Minute,
			HangAfter: 10 * time.Minute, SlowAfter: time.Minute, PacerKind: "slots", PacerSlots: 30}},
		// Any one of the three timeouts arms them.
		{"idle timeout", func(w *workloads.Workload) { w.Request.Timeouts.Idle = time.Minute }, Config{Agents: 30, Rounds: 8,
			StallAfter: 2 * time.Minute, HangAfter: 10 * time.Minute, SlowAfter: time.Minute, Timeouts: workloads.Timeouts{Idle: time.Minute}, PacerKind: "slots", PacerSlots: 30}},
		// The slow threshold carries over.
		{"slow after", func(w *workloads.Workload) { w.Watchdog.SlowAfter = 5 * time.Minute }, Config{Agents: 30, Rounds: 8,
			StallAfter: 2 * time.Minute, HangAfter: 10 * time.Minute, SlowAfter: 5 * time.Minute, PacerKind: "slots", PacerSlots: 30}},
		// The pacer's leak switch and size carry over.
		{"leak", func(w *workloads.Workload) {
			w.Pacer.Slots, w.Pacer.LeakOnTimeout, w.Request.Timeouts.TTFT = 16, true, time.Second
		}, Config{Agents: 30, Rounds: 8, StallAfter: 2 * time.Minute, HangAfter: 10 * time.Minute, SlowAfter: time.Minute, Timeouts: workloads.Timeouts{TTFT: time.Second},
			PacerKind: "slots", PacerSlots: 16, LeakOnTimeout: true}},
	}
	for _, c := range cases {
		w, err := workloads.Load(workloads.LoadOptions{Workload: "ocbrowse"})
		if !assert.NoError(t, err) {
			return
		}
		c.modify(w)
		assert.Equal(t, c.want, ConfigFrom(w), c.name)
	}
}

func TestConfigDefaults(t *testing.T) {
	a := New(Config{})
	assert.Equal(t, 120.0, a.stallS, "StallAfter defaults to 120 s")
	assert.Equal(t, 600.0, a.hangS, "HangAfter defaults to 600 s")
	assert.Equal(t, 60.0, a.slowS, "SlowAfter defaults to 60 s")
}
