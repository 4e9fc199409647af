package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"llmbench/engine/synth"
	"llmbench/kernels"
)

// headDim64 writes a small synthetic llama (F32 weights, two heads of 64 over one KV
// head, so that a Q8_0 cache applies) and returns its path.
func headDim64(t *testing.T) string {
	return writeSynth(t, "F32", 5, synth.Shape{Name: "kv-test", Arch: "llama", Vocab: 1024, Embd: 128, Layers: 2,
		Heads: 2, HeadsKV: 1, FF: 256, Context: 512, RopeBase: 10000, RMSEps: 1e-5, Tied: true, Tok: synth.VocabSPM})
}

// writeSynth writes a synthetic model of shape in type typ (seeded) into the test's
// temporary folder and returns its path.
func writeSynth(t *testing.T, typ string, seed uint64, shape synth.Shape) string {
	t.Helper()
	ft, err := synth.ParseFileType(typ)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), shape.Name+".gguf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := synth.Write(context.Background(), f, synth.Spec{Type: ft, Seed: seed, Shape: shape}, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKVCacheTypes runs concurrent greedy requests sharing prefixes through a pool
// small enough to preempt, for each KV cache type, and checks each gets the tokens of
// a solo run with the same cache type; and that the pool reports the memory of its
// type (F32 twice F16, Q8_0 34 bytes per 32 values).
func TestKVCacheTypes(t *testing.T) {
	path := headDim64(t)
	var f16PerToken int64
	for _, typ := range []kernels.DType{kernels.F16, kernels.F32, kernels.Q8_0} {
		t.Run(typ.String(), func(t *testing.T) {
			opts := Options{Threads: 2, MaxNumSeqs: 8, MaxNumBatchedTokens: 64, BlockSize: 8, KVType: typ, KVTypeSet: true}
			probe, err := Load(context.Background(), path, opts)
			if err != nil {
				t.Fatal(err)
			}
			per := probe.Model.KVBytesPerToken(typ)
			probe.Close()
			opts.KVCacheMemory = 3 * 96 * per
			e, err := Load(context.Background(), path, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			kv := e.KVCache()
			if kv.Type != typ || kv.Tokens() != 3*96 || kv.Bytes() != opts.KVCacheMemory {
				t.Fatalf("pool %+v, want %s of %d tokens", kv, typ, 3*96)
			}
			switch typ {
			case kernels.F16:
				f16PerToken = per
			case kernels.F32:
				if per != 2*f16PerToken || kv.SavedVs(kernels.F16) != -kv.Bytes()/2 {
					t.Errorf("F32: %d bytes/token (F16 %d), saves %d vs F16", per, f16PerToken, kv.SavedVs(kernels.F16))
				}
			case kernels.Q8_0:
				if per != f16PerToken*34/64 || kv.SavedVs(kernels.F16) != int64(kv.Tokens())*(f16PerToken-per) {
					t.Errorf("Q8_0: %d bytes/token (F16 %d), saves %d vs F16", per, f16PerToken, kv.SavedVs(kernels.F16))
				}
			}
			e.sched.beforeStep = func() { checkPool(t, e.sched) }
			prompts := sharedPrompts(e, 16, 3, 24, 8)
			got := runAll(t, e, prompts, 24)
			st := e.SchedulerStats()
			t.Logf("%s: %s; %d preemptions, %d of %d prompt tokens hit", typ, kv, st.Preemptions, st.PrefixHitTokens, st.PrefixQueryTokens)
			if st.Preemptions == 0 || st.PrefixHitTokens == 0 {
				t.Errorf("the run did not exercise preemption (%d) and prefix sharing (%d)", st.Preemptions, st.PrefixHitTokens)
			}
			checkGreedy(t, e, prompts, got, 24)
			if b := e.sched.cache.Bytes(); b != kv.Bytes() {
				t.Errorf("the pool holds %d bytes, reported %d", b, kv.Bytes())
			}
		})
	}
}

// TestSizeKVCache covers the pool's sizing rules: the default (max-num-seqs ×
// seq-context, capped by a share of the memory available, lowering the context of a
// request), explicit bytes, a share of the memory available, and bad sizes.
func TestSizeKVCache(t *testing.T) {
	m := builtinEngine(t, Options{}).Model
	per := m.KVBytesPerToken(kernels.F16)
	base := Options{KVType: kernels.F16, MaxNumSeqs: 4, SeqContext: 512}
	cases := []struct {
		name       string
		opts       func(*Options)
		avail      int64
		blocks     int
		seqContext int
		sizing     string
		err        string
	}{
		{"default", func(*Options) {}, 1 << 40, 4 * 512 / 16, 512, "sized for 4 sequences of 512 tokens", ""},
		{"default capped", func(*Options) {}, 400 * per, 100 / 16, 96, "sized to 25 % of", ""},
		{"default, memory unknown", func(*Options) {}, 0, 4 * 512 / 16, 512, "sized for 4", ""},
		{"bytes", func(o *Options) { o.KVCacheMemory = 100*16*per + 5; o.BlockSize = 16 }, 0, 100, 512, "--kv-cache-memory", ""},
		{"bytes, blocks of 32", func(o *Options) { o.KVCacheMemory = 8 * 32 * per; o.BlockSize = 32 }, 0, 8, 256, "--kv-cache-memory", ""},
		{"share", func(o *Options) { o.KVCacheFraction = 0.5 }, 64 * 16 * per, 32, 512, "sized to 50 %", ""},
		{"share, memory unknown", func(o *Options) { o.KVCacheFraction = 0.5 }, 0, 0, 0, "", "available memory is unknown"},
		{"share above 1", func(o *Options) { o.KVCacheFraction = 1.5 }, 1 << 30, 0, 0, "", "want 0 to 1"},
		{"less than a block", func(o *Options) { o.KVCacheMemory = 15 * per }, 0, 0, 0, "", "holds no block"},
		{"negative", func(o *Options) { o.KVCacheMemory = -1 }, 0, 0, 0, "", "KV cache memory -1"},
		{"q4_0", func(o *Options) { o.KVType = kernels.Q4_0 }, 0, 0, 0, "", "not supported"},
		{"q8_0, heads of 8", func(o *Options) { o.KVType = kernels.Q8_0 }, 0, 0, 0, "", "multiple of 32"},
	}
	for _, c := range cases {
		o := base
		c.opts(&o)
		k, err := sizeKVCache(m, &o, c.avail)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case k.Blocks != c.blocks || o.SeqContext != c.seqContext || !strings.Contains(k.Sizing, c.sizing):
			t.Errorf("%s: %d blocks, context %d, %q; want %d, %d, %q", c.name, k.Blocks, o.SeqContext, k.Sizing, c.blocks, c.seqContext, c.sizing)
		}
	}
}
