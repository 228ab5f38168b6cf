package engine

import (
	"sync/atomic"
	"time"
)

// liveStats are the engine's current gauges and running totals.
type liveStats struct {
	prefillQueued   atomic.Int64 // waiting for or in prefill
	prefillRunning  atomic.Int64 // in the current prefill step
	prefillInflight atomic.Int64 // prefilled, KV transfer not complete (pinned included)
	transferQueue   atomic.Int64 // KV transfers in progress
	decodeWaiting   atomic.Int64 // in decode, waiting for a slot or KV
	decodeRunning   atomic.Int64
	decodePaused    atomic.Int64
	decodeWedged    atomic.Int64
	kvUsed          atomic.Int64 // decode KV tokens allocated

	promptTokens      atomic.Int64
	cachedTokens      atomic.Int64
	generated         atomic.Int64
	retracted         atomic.Int64
	timedOut          atomic.Int64
	timedOutBootstrap atomic.Int64
	kvFailed          atomic.Int64
	recomputedTokens  atomic.Int64
	finished          atomic.Int64
	aborted           atomic.Int64
}

// queued is how many requests wait for a KV reservation, for prefill or for a decode slot.
func (e *Engine) queued() int64 {
	return e.preallocWaiting.Load() + e.stats.prefillQueued.Load() + e.stats.decodeWaiting.Load()
}

// Stats is a snapshot of the engine for metrics.
type Stats struct {
	// Live gauges, exact at the time of the snapshot. PreallocQueued waits for the decode
	// engine to reserve its KV (disaggregated).
	PreallocQueued                                                int
	PrefillQueued, PrefillRunning, PrefillInflight, TransferQueue int
	DecodeWaiting, DecodeRunning, DecodePaused, DecodeWedged      int
	KVUsedTokens, KVCapacityTokens                                int
	// Totals since start.
	PromptTokens, CachedTokens, GeneratedTokens int64
	Retracted, Finished, Aborted                int64
	// TimedOut counts the requests aborted by the bootstrap or waiting timeout;
	// RecomputedTokens the context tokens retracted requests recomputed before decoding again.
	TimedOut, RecomputedTokens int64
	// TimedOutBootstrap is the part of TimedOut that the bootstrap timeout aborted.
	TimedOutBootstrap int64
	// KVFailed counts the requests failed because the KV pool overflowed (KVFullFail).
	KVFailed int64
	// Crashed says the scheduler has died (retract-crash).
	Crashed bool
	// Logged is what the SGLang-named gauges show: refreshed only on prefill batches and
	// every DecodeLogInterval decode steps.
	Logged LoggedStats
}

// LoggedStats are the gauges as SGLang last logged them.
type LoggedStats struct {
	// Prefill side, refreshed on each prefill batch.
	PrefillRunning, PrefillQueue, PrefillInflight, PrefillPrealloc int
	PrefillInputTokens                                             int
	CacheHitRate                                                   float64
	// Decode side, refreshed every DecodeLogInterval steps.
	DecodeRunning, DecodeQueue, DecodeTransfer, DecodePrealloc int
	TokenUsage                                                 float64 // KV used / capacity, 0–1
	GenThroughput                                              float64 // tokens per simulated second since the previous log
	DecodeSumSeqLens                                           int
	// DecodeRetracted is how many requests were retracted since the previous decode log.
	DecodeRetracted int

	lastGenerated int64
	lastRetracted int64
	lastLog       time.Time
}

// Stats returns a snapshot of the engine's gauges and totals.
func (e *Engine) Stats() Stats {
	s := &e.stats
	e.loggedMu.Lock()
	logged := e.logged
	e.loggedMu.Unlock()
	return Stats{
		PreallocQueued: int(e.preallocWaiting.Load()),
		PrefillQueued:  int(s.prefillQueued.Load()), PrefillRunning: int(s.prefillRunning.Load()),
		PrefillInflight: int(s.prefillInflight.Load()), TransferQueue: int(s.transferQueue.Load()),
		DecodeWaiting: int(s.decodeWaiting.Load()), DecodeRunning: int(s.decodeRunning.Load()),
		DecodePaused: int(s.decodePaused.Load()), DecodeWedged: int(s.decodeWedged.Load()),
		KVUsedTokens: int(s.kvUsed.Load()), KVCapacityTokens: e.prof.KVCapacityTokens,
		PromptTokens: s.promptTokens.Load(), CachedTokens: s.cachedTokens.Load(),
		GeneratedTokens: s.generated.Load(), Retracted: s.retracted.Load(),
		Finished: s.finished.Load(), Aborted: s.aborted.Load(),
		TimedOut: s.timedOut.Load(), TimedOutBootstrap: s.timedOutBootstrap.Load(), RecomputedTokens: s.recomputedTokens.Load(), KVFailed: s.kvFailed.Load(), Crashed: e.crashed.Load(),
		Logged: logged,
	}
}

// logPrefill refreshes the prefill-side logged gauges after a prefill batch.
func (e *Engine) logPrefill(batch int, chunks []int) {
	input := 0
	for _, c := range chunks {
		input += c
	}
	s := &e.stats
	hit := 0.0
	if p := s.promptTokens.Load(); p > 0 {
		hit = float64(s.cachedTokens.Load()) / float64(p)
	}
	e.loggedMu.Lock()
	l := &e.logged
	l.PrefillRunning, l.PrefillInputTokens, l.CacheHitRate = batch, input, hit
	l.PrefillQueue = int(s.prefillQueued.Load()) // what the step left waiting
	l.PrefillInflight = int(s.prefillInflight.Load())
	l.PrefillPrealloc = int(e.preallocWaiting.Load())
	e.loggedMu.Unlock()
}

// logDecode refreshes the decode-side logged gauges at simulated time now. The decode loop
// passes the scheduled end of its last step, not the clock's reading: when the loop catches up
// a lag (see timeline), steps run back to back in little clock time, and a rate over clock
// time would read a burst of many times the engine's speed.
func (e *Engine) logDecode(now time.Time, running, waiting int) {
	s := &e.stats
	gen := s.generated.Load()
	e.loggedMu.Lock()
	l := &e.logged
	if dt := now.Sub(l.lastLog).Seconds(); !l.lastLog.IsZero() && dt > 0 {
		l.GenThroughput = float64(gen-l.lastGenerated) / dt
	}
	if running == 0 {
		l.GenThroughput = 0
	}
	l.lastGenerated, l.lastLog = gen, now
	l.DecodeRunning, l.DecodeQueue = running, waiting
	l.DecodeTransfer = int(s.transferQueue.Load())
	l.DecodePrealloc = int(e.preallocWaiting.Load())
	l.TokenUsage = float64(s.kvUsed.Load()) / float64(e.prof.KVCapacityTokens)
	l.DecodeSumSeqLens = int(s.kvUsed.Load())
	retracted := s.retracted.Load()
	l.DecodeRetracted, l.lastRetracted = int(retracted-l.lastRetracted), retracted
	e.loggedMu.Unlock()
}
