package serving

import (
	"time"

	"llmbench/engine"
	"llmbench/workloads/metrics"
)

// EngineStats is what an in-process engine says about one serving run: its KV cache
// and the scheduler's prefix-cache and preemption counters over the measured part
// (warm-up requests excluded). Units: bytes, tokens, blocks, counts.
type EngineStats struct {
	KVCacheType   string `json:"kv_cache_type"`       // f16, q8_0 or f32
	KVBlockSize   int    `json:"kv_cache_block_size"` // tokens per block
	KVBlocks      int    `json:"kv_cache_blocks"`
	KVBytes       int64  `json:"kv_cache_bytes"`
	KVSavedVsF16  int64  `json:"kv_cache_saved_vs_f16_bytes"` // negative: f32 costs more
	KVSavedVsF32  int64  `json:"kv_cache_saved_vs_f32_bytes"`
	PrefixCache   bool   `json:"prefix_cache"`
	PrefixQueries int64  `json:"prefix_cache_queries"` // prompt tokens looked up
	PrefixHits    int64  `json:"prefix_cache_hits"`    // prompt tokens found cached
	Preemptions   int64  `json:"num_preemptions"`
	// DecodeSteps counts the engine's decode steps over the measured part, and
	// DecodeStepMeanMs and DecodeStepMedianMs give their duration in milliseconds: the
	// time between two tokens of a sequence as the engine measured it, to read the
	// client's ITL against. Since fills them from Steps.
	DecodeSteps        int64   `json:"decode_steps"`
	DecodeStepMeanMs   float64 `json:"decode_step_mean_ms"`
	DecodeStepMedianMs float64 `json:"decode_step_median_ms"`
	// Steps is the engine's histogram of decode step durations (not saved).
	Steps engine.StepTimes `json:"-"`
	// WeightBytes is the model's weights (the tensors of its file).
	WeightBytes int64 `json:"weight_bytes,omitempty"`
	// Speculative decoding: the draft's proposals and those accepted, and the
	// (sequence, step) pairs that gave tokens and those tokens, over the measured part;
	// the draft's weights and KV cache (0 without a draft).
	DraftedTokens    int64 `json:"draft_tokens,omitempty"`
	AcceptedTokens   int64 `json:"draft_accepted_tokens,omitempty"`
	SeqSteps         int64 `json:"seq_steps,omitempty"`
	SeqTokens        int64 `json:"seq_step_tokens,omitempty"`
	DraftWeightBytes int64 `json:"draft_weight_bytes,omitempty"`
	DraftKVBytes     int64 `json:"draft_kv_cache_bytes,omitempty"`
}

// AcceptanceRate returns the share of the draft's proposals the model accepted, in
// percent (0 without proposals).
func (s *EngineStats) AcceptanceRate() float64 {
	if s.DraftedTokens <= 0 {
		return 0
	}
	return 100 * float64(s.AcceptedTokens) / float64(s.DraftedTokens)
}

// TokensPerStep returns the tokens a sequence got per model step (1 without a
// draft; 0 when no step gave tokens).
func (s *EngineStats) TokensPerStep() float64 {
	if s.SeqSteps <= 0 {
		return 0
	}
	return float64(s.SeqTokens) / float64(s.SeqSteps)
}

// MemoryBytes returns the engine's memory: the model's weights and KV cache, and the
// draft's.
func (s *EngineStats) MemoryBytes() int64 {
	return s.WeightBytes + s.KVBytes + s.DraftWeightBytes + s.DraftKVBytes
}

// PrefixHitRate returns the share of looked-up prompt tokens found in the prefix
// cache, in percent (0 when nothing was looked up).
func (s *EngineStats) PrefixHitRate() float64 {
	if s.PrefixQueries <= 0 {
		return 0
	}
	return 100 * float64(s.PrefixHits) / float64(s.PrefixQueries)
}

// Since returns s with its counters and decode steps taken as the difference from an
// earlier reading.
func (s EngineStats) Since(before EngineStats) EngineStats {
	s.PrefixQueries -= before.PrefixQueries
	s.PrefixHits -= before.PrefixHits
	s.Preemptions -= before.Preemptions
	s.DraftedTokens -= before.DraftedTokens
	s.AcceptedTokens -= before.AcceptedTokens
	s.SeqSteps -= before.SeqSteps
	s.SeqTokens -= before.SeqTokens
	s.Steps = s.Steps.Sub(before.Steps)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	s.DecodeSteps, s.DecodeStepMeanMs, s.DecodeStepMedianMs = s.Steps.N, ms(s.Steps.Mean()), ms(s.Steps.Median())
	return s
}

// inprocTimes times an in-process request's tokens into its record, as a client of a
// server streaming text would see them but without the delivery: each token is timed
// when the engine emitted it (engine.Token.At, moved onto the run clock), not when the
// client took it. The tokens the engine emitted at one instant (the accepted proposals
// and the model's token of one speculative-decoding step) go out together in one
// chunk, as a server streams them; a token that carries no text (the first bytes of a
// character) goes out with the next one that does. So TTFT is the first chunk with
// text and the ITL gaps are between chunks (ChunkTokens counts their tokens when one
// carries more than one, for the per-token ITL).
type inprocTimes struct {
	rec     *metrics.Record
	now     func() time.Duration
	wall    time.Time     // the engine-clock instant of rec.Start
	last    time.Duration // the latest token, on the run clock
	prev    time.Duration // the latest chunk
	pending int32         // tokens since the latest chunk
	text    bool          // a pending token carries text
	chunks  int
	multi   bool // a chunk carried more than one token
}

// start stamps rec.Start.
func (t *inprocTimes) start(rec *metrics.Record, now func() time.Duration) {
	t.rec, t.now = rec, now
	rec.Start = now()
	t.wall = time.Now()
}

// token takes one emitted token. The pending tokens leave as a chunk when this one
// was emitted later than they were and one of them carries text.
func (t *inprocTimes) token(tok engine.Token) {
	at := t.now()
	if !tok.At.IsZero() { // a Generator that stamps nothing is timed on arrival
		at = t.rec.Start + tok.At.Sub(t.wall)
	}
	if t.text && at != t.last {
		t.chunk(t.last, true)
	}
	t.last = at
	t.pending++
	t.text = t.text || tok.Text != ""
	t.rec.Stream.Tokens(at, 1)
}

// chunk closes a chunk of the pending tokens at time at.
func (t *inprocTimes) chunk(at time.Duration, text bool) {
	r := t.rec
	if t.chunks == 0 {
		r.TTFT = at - r.Start
	} else {
		r.ITL = append(r.ITL, at-t.prev)
		r.ChunkTokens = append(r.ChunkTokens, t.pending)
	}
	if text && r.TTFTContent == 0 {
		r.TTFTContent = at - r.Start
	}
	t.multi = t.multi || t.pending > 1
	r.Latency = at - r.Start
	t.chunks++
	t.prev, t.pending, t.text = at, 0, false
}

// finish sends the tokens still pending as the last chunk.
func (t *inprocTimes) finish() {
	if t.pending > 0 {
		t.chunk(t.last, t.text)
	}
	if !t.multi {
		t.rec.ChunkTokens = nil // one token per chunk
	}
}
