package serving

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
}

// PrefixHitRate returns the share of looked-up prompt tokens found in the prefix
// cache, in percent (0 when nothing was looked up).
func (s *EngineStats) PrefixHitRate() float64 {
	if s.PrefixQueries <= 0 {
		return 0
	}
	return 100 * float64(s.PrefixHits) / float64(s.PrefixQueries)
}

// Since returns s with its counters taken as the difference from an earlier reading.
func (s EngineStats) Since(before EngineStats) EngineStats {
	s.PrefixQueries -= before.PrefixQueries
	s.PrefixHits -= before.PrefixHits
	s.Preemptions -= before.Preemptions
	return s
}
