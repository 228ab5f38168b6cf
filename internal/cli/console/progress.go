package console

import (
	"fmt"
	"io"
	"time"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
)

// ProgressEvery is the wall time between two progress lines where the output is not a
// terminal (a CI log): often enough that a long run at speedup 1 is never silent for long,
// rarely enough that an hour's run prints a few hundred lines.
const ProgressEvery = 10 * time.Second

// progressLog prints the status line as whole lines, one every ProgressEvery of wall time,
// for an output that is not a terminal and so cannot hold a line redrawn in place. It is driven
// by the sampler: a line is printed at the first sample at least ProgressEvery after the last
// line (or the start).
type progressLog struct {
	out   io.Writer
	on    bool
	clk   *clock.Clock
	start time.Time // wall
	last  time.Time // wall time of the last line, or the start
}

func newProgressLog(out io.Writer, on bool, clk *clock.Clock) *progressLog {
	now := clk.WallNow()
	return &progressLog{out: out, on: on && out != nil, clk: clk, start: now, last: now}
}

// show prints the sample as a progress line when ProgressEvery of wall time has passed since
// the last one: "progress 10 s wall: t=    10s | agents: … | out 1234 tok streamed".
func (p *progressLog) show(smp events.Sample, simS float64, note string) {
	if !p.on {
		return
	}
	now := p.clk.WallNow()
	if now.Sub(p.last) < ProgressEvery {
		return
	}
	p.last = now
	line := fmt.Sprintf("progress %.0f s wall: %s", now.Sub(p.start).Seconds(), formatStatus(smp, simS))
	if note != "" {
		line += " | " + note
	}
	fmt.Fprintln(p.out, line)
}

// streamedTokens is the output tokens streamed so far: the usage of the finished requests
// plus, for each open one, one token per data chunk received (a close estimate: a server may
// pack several tokens into a chunk, and a stream's first and last chunks may carry none).
func streamedTokens(s events.Sample) int64 {
	return s.TokensOut + s.OpenChunks()
}
