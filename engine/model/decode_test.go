package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"llmbench/kernels"
	"llmbench/kernels/cpu"
)

// decodeSetup loads stories260K with a prefilled context of 16 tokens.
func decodeSetup(tb testing.TB, flash bool) (*Model, kernels.Backend, *State, *Cache, func()) {
	tb.Helper()
	m := openStories(tb)
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
	return m, be, st, cache, func() { be.Close() }
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

// batchSetup prefills nseq caches of stories260K with distinct 16-token prompts.
func batchSetup(tb testing.TB, nseq int) (*Model, kernels.Backend, []*Cache, func()) {
	tb.Helper()
	m := openStories(tb)
	be := cpu.New(2)
	st := m.NewState(16)
	caches := make([]*Cache, nseq)
	var err error
	for s := range caches {
		if caches[s], err = m.NewCache(256, kernels.F16); err != nil {
			tb.Fatal(err)
		}
		prompt := make([]int32, 16)
		for i := range prompt {
			prompt[i] = int32(10 + 7*s + i)
		}
		if _, err := m.Forward(be, st, caches[s], prompt, 0, false); err != nil {
			tb.Fatal(err)
		}
	}
	return m, be, caches, func() { be.Close() }
}

// TestBatchedDecodeAllocatesNothing checks that a steady batched decode step of four
// sequences allocates nothing.
func TestBatchedDecodeAllocatesNothing(t *testing.T) {
	m, be, caches, done := batchSetup(t, 4)
	defer done()
	st := m.NewState(16)
	seqs := make([]Seq, len(caches))
	toks := []int32{42, 43, 44, 45}
	for i, c := range caches {
		seqs[i] = Seq{Cache: c, Start: 16, Tokens: toks[i : i+1], Logits: true}
	}
	for range 8 {
		if _, err := m.ForwardBatch(be, st, seqs); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(50, func() {
		if _, err := m.ForwardBatch(be, st, seqs); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per batched decode step, want 0", allocs)
	}
}

// TestForwardBatchMatchesForward runs decode steps and prompt chunks of several
// sequences in one batch and compares each sequence's logits with those of a pass on
// its own, and the caches they leave.
func TestForwardBatchMatchesForward(t *testing.T) {
	m, be, solo, done := batchSetup(t, 3)
	defer done()
	_, _, batched, done2 := batchSetup(t, 3)
	defer done2()
	// Sequence 0 decodes one token, 1 reads a 5-token chunk without logits, 2 reads a
	// 3-token chunk and wants logits.
	parts := []Seq{
		{Start: 16, Tokens: []int32{42}, Logits: true},
		{Start: 16, Tokens: []int32{3, 4, 5, 6, 7}},
		{Start: 16, Tokens: []int32{50, 51, 52}, Logits: true},
	}
	st := m.NewState(16)
	var want [][]float32
	for i, p := range parts {
		out, err := m.Forward(be, st, solo[i], p.Tokens, p.Start, false)
		if err != nil {
			t.Fatal(err)
		}
		if p.Logits {
			want = append(want, append([]float32(nil), out...))
		}
	}
	seqs := append([]Seq(nil), parts...)
	for i := range seqs {
		seqs[i].Cache = batched[i]
	}
	got, err := m.ForwardBatch(be, st, seqs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want)*m.Vocab {
		t.Fatalf("%d logits, want %d rows of %d", len(got), len(want), m.Vocab)
	}
	for r, w := range want {
		g := got[r*m.Vocab : (r+1)*m.Vocab]
		for i := range w {
			if d := math.Abs(float64(g[i] - w[i])); d > 1e-3*(1+math.Abs(float64(w[i]))) {
				t.Fatalf("row %d logit %d: batched %v, alone %v", r, i, g[i], w[i])
			}
		}
	}
	// The next decode step of sequence 1 sees the same cache either way.
	a, err := m.Forward(be, st, solo[1], []int32{9}, 21, false)
	if err != nil {
		t.Fatal(err)
	}
	a = append([]float32(nil), a...)
	b, err := m.Forward(be, st, batched[1], []int32{9}, 21, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if d := math.Abs(float64(a[i] - b[i])); d > 1e-3*(1+math.Abs(float64(a[i]))) {
			t.Fatalf("after the batch, logit %d: %v vs %v", i, b[i], a[i])
		}
	}
}

func TestForwardBatchErrors(t *testing.T) {
	m, be, caches, done := batchSetup(t, 2)
	defer done()
	st := m.NewState(4)
	cases := map[string][]Seq{
		"empty batch":    nil,
		"no tokens":      {{Cache: caches[0], Start: 16}},
		"over the state": {{Cache: caches[0], Start: 16, Tokens: make([]int32, 3)}, {Cache: caches[1], Start: 16, Tokens: make([]int32, 2)}},
		"past context":   {{Cache: caches[0], Start: 255, Tokens: make([]int32, 2)}},
		"bad token":      {{Cache: caches[0], Start: 16, Tokens: []int32{-1}}},
		"short table":    {{Cache: caches[0], Start: 0, Tokens: make([]int32, 2), Blocks: []int32{}}},
		"block outside":  {{Cache: caches[0], Start: 0, Tokens: make([]int32, 2), Blocks: []int32{1}}},
	}
	for name, seqs := range cases {
		if _, err := m.ForwardBatch(be, st, seqs); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestPagedForwardMatchesContiguous runs three sequences through one shared pool of
// small blocks, each through a random block table, and checks every step's logits
// equal, bit for bit, those of the same batches on contiguous caches of their own.
func TestPagedForwardMatchesContiguous(t *testing.T) {
	m := openStories(t)
	be := cpu.New(2)
	defer be.Close()
	for _, typ := range []kernels.DType{kernels.F32, kernels.F16} {
		const bs, nseq, ctx = 4, 3, 40
		pool, err := m.NewPagedCache(nseq*ctx/bs+5, bs, typ)
		if err != nil {
			t.Fatal(err)
		}
		perm := rand.New(rand.NewPCG(1, 2)).Perm(pool.Blocks)
		var own []*Cache
		tables := make([][]int32, nseq)
		for s := range nseq {
			c, err := m.NewCache(ctx, typ)
			if err != nil {
				t.Fatal(err)
			}
			own = append(own, c)
			for _, b := range perm[s*ctx/bs : (s+1)*ctx/bs] {
				tables[s] = append(tables[s], int32(b))
			}
		}
		st := m.NewState(32)
		pos := make([]int, nseq)
		for step := range 12 {
			var a, b []Seq
			for s := range nseq {
				n := 1
				if step == 0 {
					n = 5 + 3*s // prompt chunks of different lengths first
				}
				toks := make([]int32, n)
				for i := range toks {
					toks[i] = int32(3 + (7*s+11*step+i)%400)
				}
				a = append(a, Seq{Cache: own[s], Start: pos[s], Tokens: toks, Logits: true})
				b = append(b, Seq{Cache: pool, Start: pos[s], Tokens: toks, Blocks: tables[s], Logits: true})
				pos[s] += n
			}
			want, err := m.ForwardBatch(be, st, a)
			if err != nil {
				t.Fatal(err)
			}
			want = append([]float32(nil), want...)
			got, err := m.ForwardBatch(be, st, b)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s step %d: logit %d is %v paged, %v contiguous", typ, step, i, got[i], want[i])
				}
			}
		}
	}
}

// TestLastLayerRunsOutputRowsOnly checks the last layer's gather: a batch whose rows
// mostly need no logits (a prompt chunk without logits, a decode step, a drafted run
// wanting every row's logits, a chunk wanting its last) gives, bit for bit, the rows
// of a pass that computes every row to the end, and leaves the same caches.
func TestLastLayerRunsOutputRowsOnly(t *testing.T) {
	m, be, gathered, done := batchSetup(t, 4)
	defer done()
	_, _, full, done2 := batchSetup(t, 4)
	defer done2()
	parts := []Seq{
		{Start: 16, Tokens: []int32{3, 4, 5, 6, 7}},
		{Start: 16, Tokens: []int32{42}, Logits: true},
		{Start: 16, Tokens: []int32{60, 61, 62}, AllLogits: true},
		{Start: 16, Tokens: []int32{50, 51, 52, 53}, Logits: true},
	}
	wantRows := []int{5, 6, 7, 8, 12} // rows of the full pass that carry logits
	run := func(caches []*Cache, all bool) []float32 {
		seqs := append([]Seq(nil), parts...)
		for i := range seqs {
			seqs[i].Cache = caches[i]
		}
		out, err := m.forward(be, m.NewState(16), seqs, all)
		if err != nil {
			t.Fatal(err)
		}
		return append([]float32(nil), out...)
	}
	got, all := run(gathered, false), run(full, true)
	if len(got) != len(wantRows)*m.Vocab {
		t.Fatalf("%d logits, want %d rows", len(got), len(wantRows))
	}
	for j, r := range wantRows {
		for i := range m.Vocab {
			if g, w := got[j*m.Vocab+i], all[r*m.Vocab+i]; math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("logits row %d (batch row %d), logit %d: %v, the full pass %v", j, r, i, g, w)
			}
		}
	}
	for s := range parts { // the caches match: the next step of each sequence agrees
		st := m.NewState(16)
		next := 16 + len(parts[s].Tokens)
		a, err := m.Forward(be, st, gathered[s], []int32{9}, next, false)
		if err != nil {
			t.Fatal(err)
		}
		a = append([]float32(nil), a...)
		b, err := m.Forward(be, st, full[s], []int32{9}, next, false)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("sequence %d's next step, logit %d: %v vs %v", s, i, a[i], b[i])
			}
		}
	}
}
