package engine

import (
	"slices"
	"strings"
	"testing"

	"llmbench/engine/builtin"
)

// TestRollingWindowKeepsGreedyAnswers runs concurrent greedy requests under a rolling
// window shorter than prompt + output, so every sequence gives back its oldest blocks
// and reuses them as a ring, and checks each gets the tokens of a solo run on a
// contiguous cache with the same window as a mask (Session: the dense masked twin).
// Cases: prompts chunked with decodes, shared prefixes in the prefix cache, a pool
// small enough to preempt, partitioned rows; every step checks that no sequence holds
// more than its ring and that reference counts add up.
func TestRollingWindowKeepsGreedyAnswers(t *testing.T) {
	cases := []struct {
		name     string
		opts     Options
		shared   bool
		wantPre  bool
		poolSeqs int // pool sized for this many rings (0: the default)
		gen      int
	}{
		{"window24", Options{Window: 24, BlockSize: 8}, false, false, 0, 40},
		{"window24/shared-prefixes", Options{Window: 24, BlockSize: 8}, true, false, 0, 40},
		{"window17/preemption", Options{Window: 17, BlockSize: 4}, false, true, 3, 40},
		{"window40/partitions", Options{Window: 40, BlockSize: 16, Partitions: PartitionsOn, PartitionSize: 16}, false, false, 0, 48},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.opts
			o.MaxNumSeqs, o.MaxNumBatchedTokens = 16, 64
			if o.Partitions == 0 {
				o.Partitions = PartitionsOff
			}
			e := builtinEngine(t, o)
			if c.poolSeqs > 0 {
				e.Close()
				o.KVCacheMemory = poolFor(e, c.poolSeqs*WindowBlocks(o.Window, o.BlockSize)*o.BlockSize)
				e = builtinEngine(t, o)
			}
			kv := e.KVCache()
			if kv.Window != o.Window || !strings.Contains(kv.String(), "rolling window of") {
				t.Fatalf("KV cache info: %s", kv)
			}
			if c.poolSeqs == 0 && kv.Blocks != o.MaxNumSeqs*WindowBlocks(o.Window, o.BlockSize) {
				t.Errorf("default pool of %d blocks, want %d rings of %d", kv.Blocks, o.MaxNumSeqs, WindowBlocks(o.Window, o.BlockSize))
			}
			e.sched.beforeStep = func() { checkPool(t, e.sched) }
			prompts := testPrompts(e, 32, 11)
			if c.shared {
				prompts = sharedPrompts(e, 32, 4, 37, 9)
			}
			got := runAll(t, e, prompts, c.gen)
			st := e.SchedulerStats()
			t.Logf("pool %d blocks of %d; %d preemptions; %d of %d sequences rolled", kv.Blocks, kv.BlockSize, st.Preemptions, st.Rolled, len(prompts))
			long := 0
			for _, p := range prompts {
				if len(p)+c.gen > o.Window+o.BlockSize {
					long++
				}
			}
			if st.Rolled < int64(long) || long == 0 {
				t.Errorf("%d sequences rolled, want at least the %d longer than the window and a block", st.Rolled, long)
			}
			if c.shared && st.PrefixHitTokens == 0 {
				t.Error("no prompt token was found in the prefix cache (blocks the window gave back stay cached)")
			}
			if (st.Preemptions > 0) != c.wantPre {
				t.Errorf("%d preemptions; want some: %v", st.Preemptions, c.wantPre)
			}
			checkGreedy(t, e, prompts, got, c.gen)
			waitFor(t, "an idle scheduler", func() bool {
				st := e.SchedulerStats()
				return st.Running == 0 && st.Waiting == 0 && st.KVBlocksUsed == 0
			})
		})
	}
}

// TestRollingWindowChangesAnswers: the window is a real mask, so a solo run under a
// short window differs from one without past the window (else the test above proves
// nothing about the ring).
func TestRollingWindowChangesAnswers(t *testing.T) {
	full := builtinEngine(t, Options{})
	win := builtinEngine(t, Options{Window: 8, BlockSize: 4})
	prompt := testPrompts(full, 1, 3)[0]
	a, _ := soloGreedy(t, full, prompt, 40)
	b, _ := soloGreedy(t, win, prompt, 40)
	if slices.Equal(a, b) {
		t.Fatalf("a window of 8 changed none of 40 greedy tokens after a prompt of %d", len(prompt))
	}
	if _, err := LoadBytes(t.Context(), "builtin", builtin.Stories260K, Options{Window: -1}); err == nil || !strings.Contains(err.Error(), "rolling window of -1") {
		t.Errorf("a negative window: %v", err)
	}
}
