package model

import (
	"testing"

	"llmbench/engine/gguf"
	"llmbench/kernels"
	"llmbench/kernels/cpu"
)

// decodeSetup loads stories260K with a prefilled context of 16 tokens.
func decodeSetup(tb testing.TB, flash bool) (*Model, kernels.Backend, *State, *Cache, func()) {
	tb.Helper()
	f, err := gguf.Open("../builtin/stories260K.gguf")
	if err != nil {
		tb.Fatal(err)
	}
	m, err := FromGGUF(f)
	if err != nil {
		tb.Fatal(err)
	}
	be := cpu.New(2)
	st := m.NewState(16)
	st.Flash = flash
	cache, err := m.NewCache(256, kernels.F16)
	if err != nil {
		tb.Fatal(err)
	}
	prompt := make([]int32, 16)
	for i := range prompt {
		prompt[i] = int32(10 + i)
	}
	if _, err := m.Forward(be, st, cache, prompt, 0, false); err != nil {
		tb.Fatal(err)
	}
	return m, be, st, cache, func() { be.Close(); f.Close() }
}

// TestDecodeStepAllocatesNothing checks that a steady-state decode step (one token
// through every layer, KV append, attention and logits) allocates nothing.
func TestDecodeStepAllocatesNothing(t *testing.T) {
	for _, flash := range []bool{false, true} {
		m, be, st, cache, done := decodeSetup(t, flash)
		pos := 16
		tok := []int32{42}
		// Warm up so per-worker scratch has reached its size for this context.
		for range 8 {
			if _, err := m.Forward(be, st, cache, tok, pos, false); err != nil {
				t.Fatal(err)
			}
		}
		allocs := testing.AllocsPerRun(50, func() {
			if _, err := m.Forward(be, st, cache, tok, pos, false); err != nil {
				t.Fatal(err)
			}
		})
		done()
		if allocs != 0 {
			t.Errorf("flash=%v: %v allocations per decode step, want 0", flash, allocs)
		}
	}
}

// BenchmarkDecodeStep times one decode step of stories260K at position 16.
func BenchmarkDecodeStep(b *testing.B) {
	m, be, st, cache, done := decodeSetup(b, false)
	defer done()
	tok := []int32{42}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Forward(be, st, cache, tok, 16, false); err != nil {
			b.Fatal(err)
		}
	}
}
