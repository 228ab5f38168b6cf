package results

// Stream is what the response streams carried, as the harness received them (any server),
// and, from a server that counts its own chunks (agentsim's simulator), as the server wrote
// them. docs/files.md §3 and docs/engine.md §1 describe what a chunk is.
type Stream struct {
	// Frames counts the SSE data frames every request received, ended or still open: role,
	// token, finish, usage and [DONE] frames alike (the events' chunks).
	Frames int64 `json:"frames"`
	// FramesPerSecond is Frames per simulated second (sim_seconds); FramesPerWallSecond is
	// Frames per wall second (wall_seconds), 0 when the wall time is unknown (a run judged
	// from its files).
	FramesPerSecond     float64 `json:"frames_per_second"`
	FramesPerWallSecond float64 `json:"frames_per_wall_second"`
	// TokenFrames counts the data frames of the successful requests that carried a reasoning
	// or content token (the events' token_chunks): not the role frame, a finish frame without
	// text, the usage frame or [DONE]. TokensPerChunk is those requests' output tokens (their
	// usage, reasoning included) ÷ TokenFrames, in tokens per frame; 0 when no successful
	// request counted any.
	TokenFrames    int64   `json:"token_frames"`
	TokensPerChunk float64 `json:"tokens_per_chunk"`
	// Server is the server's own count; nil when its /metrics has none.
	Server *ServerStream `json:"server,omitempty"`
}

// ServerStream is the simulator's own count of the token chunks it wrote while the run
// scraped it — the growth of its agentsim_stream_* counters from the first scrape to the last,
// which, for a server other clients also use, counts their chunks too — and the profile
// settings they are judged against.
type ServerStream struct {
	// Chunks counts the chunks that carried tokens (agentsim_stream_chunks_total); Tokens the
	// tokens they carried (agentsim_stream_chunk_tokens_total); TokensPerChunk is their ratio,
	// in tokens per chunk (0 without chunks).
	Chunks         int64   `json:"chunks"`
	Tokens         int64   `json:"tokens"`
	TokensPerChunk float64 `json:"tokens_per_chunk"`
	// Behind counts the chunks written while more tokens were already waiting: the writer had
	// fallen behind the engine and the client got those tokens late
	// (agentsim_stream_chunks_behind_total).
	Behind int64 `json:"behind"`
	// Coalesced counts the chunks that carried more than StreamInterval tokens
	// (agentsim_stream_chunks_coalesced_total).
	Coalesced int64 `json:"coalesced"`
	// StreamInterval is the tokens a chunk carries (the profile's stream_interval, at least 1;
	// agentsim_stream_interval_tokens); CoalesceTokens the most a chunk carries when the
	// writer has fallen behind (stream_coalesce_tokens, at least StreamInterval;
	// agentsim_stream_coalesce_tokens). Both in tokens.
	StreamInterval int `json:"stream_interval"`
	CoalesceTokens int `json:"coalesce_tokens"`
}

// CoalescingAsked reports whether the profile asks for coalescing: a limit above the stream
// interval, as raw-throughput runs set it. Otherwise every chunk carries StreamInterval tokens
// and a chunk written behind is a deviation from the profile.
func (s ServerStream) CoalescingAsked() bool { return s.CoalesceTokens > s.StreamInterval }

// stream is the Builder's account of the frames received, over simSeconds of simulated time
// and wallSeconds of wall time (either 0: its rate is 0).
func (b *Builder) stream(simSeconds, wallSeconds float64) Stream {
	s := Stream{Frames: b.frames(), TokenFrames: b.okTokenFrames}
	if simSeconds > 0 {
		s.FramesPerSecond = float64(s.Frames) / simSeconds
	}
	if wallSeconds > 0 {
		s.FramesPerWallSecond = float64(s.Frames) / wallSeconds
	}
	if b.okTokenFrames > 0 {
		s.TokensPerChunk = float64(b.okFrameTokens) / float64(b.okTokenFrames)
	}
	return s
}
