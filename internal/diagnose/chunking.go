package diagnose

import (
	"fmt"

	"github.com/agentsim/agentsim/internal/plural"
	"github.com/agentsim/agentsim/results"
)

// streamWarning says when the simulator's chunking departed from its profile although the
// profile did not ask for coalescing: chunks written behind the engine (the stream writers
// could not keep up, so clients got tokens late) or carrying more than stream_interval
// tokens. Chunking follows stream_interval at every speedup the machine keeps up with; where
// it cannot, the deviation is measured and said (docs/engine.md §1), never silent.
func streamWarning(r *results.Results) []string {
	w := chunkingWarning(r.Stream.Server, r.Server.Kind, r.Speedup, "wrote", fmt.Sprintf("the harness measured %s tokens per chunk (the server %s)",
		perChunk(r.Stream.TokensPerChunk), perChunk(serverPerChunk(r.Stream.Server))))
	if w == "" {
		return nil
	}
	return []string{w}
}

// LiveChunkingWarning is the stream warning the harness gives while the run goes, from the
// server's count so far srv, on a server of kind at speedup; "" when there is nothing to say
// (see chunkingWarning).
func LiveChunkingWarning(srv *results.ServerStream, kind results.ServerKind, speedup float64) string {
	return chunkingWarning(srv, kind, speedup, "has written", fmt.Sprintf("the server's %s tokens per chunk so far", perChunk(serverPerChunk(srv))))
}

// serverPerChunk is the server's tokens per chunk; 0 without a server count.
func serverPerChunk(srv *results.ServerStream) float64 {
	if srv == nil {
		return 0
	}
	return srv.TokensPerChunk
}

// chunkingWarning is the stream warning for the server's count srv, or "" when there is
// nothing to say: no count, coalescing asked for, or no chunk above stream_interval. Chunks
// written behind the engine, one token each, are counted (srv.Behind) but not warned about
// here: how late they went out is the simulator's lag, which the lag warning judges against
// the run's latencies and stall_after (pace.go). A chunk is behind as soon as the next token is
// generated before it is written, a fraction of a step at high speedups, so the count alone
// says little about what the lateness did to the run. wrote is the verb's tense; measured says
// the tokens per chunk seen.
func chunkingWarning(srv *results.ServerStream, kind results.ServerKind, speedup float64, wrote, measured string) string {
	if srv == nil || srv.CoalescingAsked() || srv.Coalesced == 0 {
		return ""
	}
	msg := fmt.Sprintf("stream chunking: the simulator %s %s of its %s chunks (%s) with more than the profile's stream_interval of %s, which does not ask for coalescing",
		wrote, results.Count(srv.Coalesced), results.Count(srv.Chunks), percent(srv.Coalesced, srv.Chunks), plural.Of(srv.StreamInterval, "token"))
	msg += fmt.Sprintf("; the profile asks for %s per chunk, %s", plural.Of(srv.StreamInterval, "token"), measured)
	switch {
	case speedup > 1 && kind == results.External: // an agentsim serve whose speedup the run adopted
		msg += fmt.Sprintf("; at --speedup %g the machine cannot keep up with the streams, serve the simulator at a lower --speedup", speedup)
	case speedup > 1:
		msg += fmt.Sprintf("; at --speedup %g the machine cannot keep up with the streams, use a lower --speedup", speedup)
	default:
		msg += "; at wall speed the harness read the streams more slowly than the engine made tokens (a loaded machine)"
	}
	return msg
}

// percent renders part of whole as a percentage, "25 %", never rounding a part to 0: "<0.1 %".
func percent(part, whole int64) string {
	p := 100 * float64(part) / float64(max(whole, 1))
	if part > 0 && p < 0.05 {
		return "<0.1 %"
	}
	return results.Figure(p) + " %"
}

// perChunk renders tokens per chunk with two decimals: 1.00, 3.47.
func perChunk(v float64) string { return fmt.Sprintf("%.2f", v) }
