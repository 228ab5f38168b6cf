package diagnose

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/rundir"
	"github.com/agentsim/agentsim/results"
	"github.com/agentsim/agentsim/workloads"
)

// record writes w's records up to until into dir as a run would — events.jsonl and
// samples.jsonl through events.Log and events.Writer, stamped by the clock in a synctest bubble, and
// config.yaml as the harness writes it — and feeds the very same records to a live Analyzer,
// returning its verdict at the last record.
func record(t *testing.T, dir string, w *world, wl *workloads.Workload, until float64) (live results.Verdict) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.Real()
		start := clk.Now()
		evLog, err := events.CreateLog(filepath.Join(dir, rundir.Events), clk, start)
		require.NoError(t, err)
		smLog, err := events.Create[events.Sample](filepath.Join(dir, rundir.Samples))
		require.NoError(t, err)
		a := New(ConfigFrom(wl))
		evs, samples := w.sorted(), w.samples(until)
		sleepTo := func(ts float64) {
			time.Sleep(time.Duration(ts*1e9) - clk.Since(start))
		}
		i := 0
		for _, s := range samples {
			for ; i < len(evs) && evs[i].TS <= s.TS; i++ {
				e := evs[i]
				sleepTo(e.TS)
				evLog.Stamp(&e)
				evLog.Write(e)
				a.Event(e)
			}
			sleepTo(s.TS)
			s.TS = evLog.Since()
			smLog.Write(s)
			a.Sample(s)
		}
		require.NoError(t, evLog.Close())
		require.NoError(t, smLog.Close())
		live = a.Verdict(a.LastS())
	})
	b, err := wl.Redacted(map[string]string{"server": "http://127.0.0.1:30000", "api_key": "secret"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, rundir.Config), b, 0o644))
	return live
}

// workloadFor returns a valid workload with the scenario's agents, pacer and timeouts.
func workloadFor(cfg Config) *workloads.Workload {
	w := workloads.Defaults()
	w.Name, w.Agents, w.Rounds = "synthetic-test", cfg.Agents, 4
	w.Pacer.Kind, w.Pacer.Slots, w.Pacer.LeakOnTimeout = cfg.PacerKind, cfg.PacerSlots, cfg.LeakOnTimeout
	w.Request.Timeouts = cfg.Timeouts
	w.Watchdog.StallAfter, w.Watchdog.HangAfter = 120*time.Second, 600*time.Second
	return &w
}

func TestFromDirMatchesLive(t *testing.T) {
	cases := []struct {
		name  string
		world func() (*world, Config, float64)
		want  results.VerdictKind
	}{
		// The incident: a wedge that starves the pacer.
		{"wedge starves the pacer", wedgeStarvation, results.PacerStarvation},
		// Leaked permits, named the same way from the files.
		{"leak on timeout", leakOnTimeout, results.PacerStarvation},
		// The watchdog stops the starved run: the cancellations that follow do not hide it.
		{"starvation, then the stop", func() (*world, Config, float64) {
			w, c, at := wedgeStarvation()
			return w.stop(at), c, at + 1
		}, results.PacerStarvation},
		// A finished run with 20 % errors.
		{"errors", func() (*world, Config, float64) { w, c := withErrors(); return w, c, 0 }, results.Errors},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, cfg, until := c.world()
			if until == 0 {
				until = lastTime(w) + 1
			}
			dir := t.TempDir()
			wl := workloadFor(cfg)
			live := record(t, dir, w, wl, until)
			require.Equal(t, c.want, live.Kind, "live: %s %v", live.Summary, live.Evidence)

			got, res, err := FromDir(dir)
			require.NoError(t, err)
			assert.Equal(t, live, got, "FromDir(%s) and the live Analyzer disagree", c.name)
			assert.Equal(t, got, res.Verdict)
			assert.Equal(t, "synthetic-test", res.Workload)
			assert.Equal(t, cfg.Agents, res.Agents)
			assert.Equal(t, cfg.Agents*4, res.Rounds.Planned)
			assert.InDelta(t, until, res.SimSeconds, 0.75)
		})
	}
}

func TestFromDirErrors(t *testing.T) {
	good := func(t *testing.T) string {
		w, cfg, _ := leakOnTimeout()
		dir := t.TempDir()
		record(t, dir, w, workloadFor(cfg), 50)
		return dir
	}
	cases := []struct {
		name  string
		spoil func(dir string) error
		want  string // in the error
	}{
		// No config.yaml.
		{"config missing", func(dir string) error { return os.Remove(filepath.Join(dir, rundir.Config)) }, "config.yaml: no such file"},
		// config.yaml that is not YAML.
		{"config malformed", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, rundir.Config), []byte("agents: [1,\n"), 0o644)
		}, "parse " + "%s/config.yaml"},
		// config.yaml with a value the workload schema refuses.
		{"config invalid", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, rundir.Config), []byte("agents: 0\n"), 0o644)
		}, "config.yaml: "},
		// An empty config.yaml.
		{"config empty", func(dir string) error { return os.WriteFile(filepath.Join(dir, rundir.Config), nil, 0o644) }, "config.yaml: the file is empty"},
		// No events.jsonl.
		{"events missing", func(dir string) error { return os.Remove(filepath.Join(dir, rundir.Events)) }, "events.jsonl: no such file"},
		// A malformed line in the middle of events.jsonl.
		{"events malformed", func(dir string) error { return prepend(filepath.Join(dir, rundir.Events), "{oops\n") }, "events.jsonl line 1"},
		// No samples.jsonl.
		{"samples missing", func(dir string) error { return os.Remove(filepath.Join(dir, rundir.Samples)) }, "samples.jsonl: no such file"},
		// A malformed line in the middle of samples.jsonl.
		{"samples malformed", func(dir string) error { return prepend(filepath.Join(dir, rundir.Samples), "[]\n") }, "samples.jsonl line 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := good(t)
			require.NoError(t, c.spoil(dir))
			_, _, err := FromDir(dir)
			require.Error(t, err)
			want := c.want
			if want == "parse %s/config.yaml" {
				want = "parse " + dir + "/config.yaml"
			}
			assert.Contains(t, err.Error(), want)
		})
	}
}

// A run killed mid-write leaves a last line cut short: it is ignored.
func TestFromDirToleratesCutLastLine(t *testing.T) {
	w, cfg, _ := leakOnTimeout()
	dir := t.TempDir()
	record(t, dir, w, workloadFor(cfg), 300)
	for _, f := range []string{rundir.Events, rundir.Samples} {
		fh, err := os.OpenFile(filepath.Join(dir, f), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = fh.WriteString(`{"t_s": 300.1, "ev`)
		require.NoError(t, err)
		require.NoError(t, fh.Close())
	}
	v, _, err := FromDir(dir)
	require.NoError(t, err)
	assert.Equal(t, results.PacerStarvation, v.Kind)
}

func prepend(path, line string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(line), b...), 0o644)
}
