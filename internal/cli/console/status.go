package console

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

// statusLine prints one live line on a terminal, at most once a wall second.
type statusLine struct {
	out   io.Writer
	on    bool
	clk   *clock.Clock
	last  time.Time
	width int
}

func newStatusLine(out io.Writer, on bool, clk *clock.Clock) *statusLine {
	return &statusLine{out: out, on: on && out != nil, clk: clk}
}

func (s *statusLine) show(smp events.Sample, simS float64, note string) {
	if !s.on || s.clk.WallNow().Sub(s.last) < time.Second {
		return
	}
	s.last = s.clk.WallNow()
	line := formatStatus(smp, simS)
	if note != "" {
		line += " | " + note
	}
	pad := max(s.width-len(line), 0)
	s.width = len(line)
	fmt.Fprintf(s.out, "\r%s%s", line, strings.Repeat(" ", pad))
}

func (s *statusLine) clear() {
	if s.on && s.width > 0 {
		fmt.Fprintf(s.out, "\r%s\r", strings.Repeat(" ", s.width))
	}
}

// formatStatus renders a sample as the live status line.
func formatStatus(s events.Sample, simS float64) string {
	var states []string
	for st, n := range s.Agents {
		if n > 0 {
			states = append(states, fmt.Sprintf("%s %d", st, n))
		}
	}
	sort.Strings(states)
	line := fmt.Sprintf("t=%6.0fs | agents: %s | in flight %d, oldest silence %.0f s | out %d tok streamed",
		simS, strings.Join(states, ", "), s.InFlight, s.OldestSilenceS, streamedTokens(s))
	if v, ok := s.Server[events.DecodeRunning]; ok {
		line += fmt.Sprintf(" | decode_running %.0f", v)
	}
	return line
}
