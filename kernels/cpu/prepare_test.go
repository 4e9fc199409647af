package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"llmbench/kernels"
)

// TestPrepareTilesOnce checks that Prepare makes a tiled matrix's copy (or, for F16
// and BF16, a plain one), that the MatMuls after it make none (the tiling a load does
// is not paid again by the first request), and that they no longer read the matrix's
// own bytes (so the engine may release them): zeroing them after Prepare leaves the
// products unchanged. Types with neither report false and are multiplied from their
// bytes. A matrix whose Data is replaced after Prepare is multiplied from the new bytes.
func TestPrepareTilesOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, typ := range []kernels.DType{kernels.Q4_0, kernels.Q8_0, kernels.Q4_K, kernels.Q6_K, kernels.F16, kernels.BF16, kernels.F32} {
		c := New(2)
		rows, cols := 40, 512
		w := &kernels.Matrix{Type: typ, Rows: rows, Cols: cols}
		for range rows {
			b, _ := randRow(rng, typ, cols, 1)
			w.Data = append(w.Data, b...)
		}
		x := make([]float32, 3*cols)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		want := make([]float32, 3*rows)
		New(1).MatMul(want, &kernels.Matrix{Type: typ, Rows: rows, Cols: cols, Data: append([]byte(nil), w.Data...)}, x, 3)

		tiles := tileFormat(w) != nil
		copied := tiles || copiedType(typ)
		if got := c.Prepare(w); got != copied {
			t.Fatalf("%s: Prepare = %v, want %v (tile format: %v, kernels %s)", typ, got, copied, tiles, level)
		}
		if copied {
			clear(w.Data) // MatMul must multiply the copy, not these bytes
		}
		made := c.tilings
		if c.Prepare(w) != copied || c.tilings != made {
			t.Fatalf("%s: a second Prepare answered differently or copied again", typ)
		}
		if tiles && made != 1 {
			t.Fatalf("%s: Prepare made %d tiled copies, want 1", typ, made)
		}
		for _, n := range []int{1, 3} {
			got := make([]float32, n*rows)
			c.MatMul(got, w, x, n)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s n=%d: out[%d] = %g after Prepare, want %g", typ, n, i, got[i], want[i])
				}
			}
		}
		if c.tilings != made {
			t.Fatalf("%s: MatMul after Prepare made %d more tiled copies", typ, c.tilings-made)
		}
		if copiedType(typ) {
			w.Data = make([]byte, len(w.Data))
			for r := range rows {
				b, _ := randRow(rng, typ, cols, 1)
				copy(w.Data[r*len(b):], b)
			}
			New(1).MatMul(want, &kernels.Matrix{Type: typ, Rows: rows, Cols: cols, Data: append([]byte(nil), w.Data...)}, x, 3)
			got := make([]float32, 3*rows)
			c.MatMul(got, w, x, 3)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s: out[%d] = %g with Data replaced after Prepare, want %g (the new bytes')", typ, i, got[i], want[i])
				}
			}
		}
		c.Close()
	}
}

// TestRoPETable checks that ApplyRoPE's kept cos/sin table gives what a fresh backend
// computes, across calls that reuse it (the keys after the queries) and calls that
// must not (other positions, bases, scales or factors).
func TestRoPETable(t *testing.T) {
	c := New(1)
	defer c.Close()
	f := []float32{1, 2, 4, 8}
	calls := []struct {
		n, start int
		r        kernels.RoPE
	}{
		{3, 0, kernels.RoPE{Dims: 8, Base: 10000}},
		{3, 0, kernels.RoPE{Dims: 8, Base: 10000}},
		{1, 3, kernels.RoPE{Dims: 8, Base: 10000}},
		{1, 3, kernels.RoPE{Dims: 8, Base: 500000}},
		{1, 3, kernels.RoPE{Dims: 8, Base: 500000, FreqScale: 0.25}},
		{1, 3, kernels.RoPE{Dims: 8, Base: 500000, FreqScale: 0.25, Factors: f}},
		{1, 3, kernels.RoPE{Dims: 4, Base: 500000, NeoX: true}},
		{2, 3, kernels.RoPE{Dims: 4, Base: 500000, NeoX: true}},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i, k := range calls {
		x := make([]float32, k.n*2*8)
		for j := range x {
			x[j] = float32(rng.NormFloat64())
		}
		want := append([]float32(nil), x...)
		fresh := New(1)
		fresh.ApplyRoPE(want, k.n, k.start, 2, 8, &k.r)
		fresh.Close()
		c.ApplyRoPE(x, k.n, k.start, 2, 8, &k.r)
		for j := range x {
			if math.Float32bits(x[j]) != math.Float32bits(want[j]) {
				t.Fatalf("call %d: x[%d] = %g, fresh backend %g", i, j, x[j], want[j])
			}
		}
	}
}

// TestRepeatedActivations runs a layer's pattern of products three times — Q, K and V
// on the same activations h, then a down product on a wider g — changing h and g in
// place between layers. Every product must equal a fresh backend's; h's conversion must
// be reused within a layer once h is known to repeat (K and V from the second layer
// on); and g, never passed twice in a row, must not be kept (lastX never grows to it).
func TestRepeatedActivations(t *testing.T) {
	c := New(2)
	defer c.Close()
	const embd, ff, n = 128, 512, 3
	rng := rand.New(rand.NewPCG(7, 8))
	mk := func(rows, cols int) *kernels.Matrix {
		w := &kernels.Matrix{Type: kernels.Q8_0, Rows: rows, Cols: cols}
		for range rows {
			b, _ := randRow(rng, kernels.Q8_0, cols, 1)
			w.Data = append(w.Data, b...)
		}
		return w
	}
	wq, wk, wv, wd := mk(embd, embd), mk(64, embd), mk(64, embd), mk(embd, ff)
	h, g := make([]float32, n*embd), make([]float32, n*ff)
	check := func(w *kernels.Matrix, x []float32) {
		t.Helper()
		got, want := make([]float32, n*w.Rows), make([]float32, n*w.Rows)
		c.MatMul(got, w, x, n)
		fresh := New(1)
		fresh.MatMul(want, w, x, n)
		fresh.Close()
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("out[%d] = %g, fresh backend %g", i, got[i], want[i])
			}
		}
	}
	for layer := range 3 {
		for i := range h {
			h[i] = float32(rng.NormFloat64())
		}
		for i := range g {
			g[i] = float32(rng.NormFloat64())
		}
		gen := c.qGen
		check(wq, h)
		check(wk, h)
		check(wv, h)
		convs := c.qGen - gen
		if want := 1; layer > 0 && convs != want {
			t.Errorf("layer %d: h converted %d times for Q, K and V, want %d", layer, convs, want)
		}
		check(wd, g)
		if cap(c.lastX) >= len(g) {
			t.Fatalf("layer %d: lastX grew to %d floats for activations never repeated", layer, cap(c.lastX))
		}
	}
}

// TestRoPEReference checks ApplyRoPE against the rotation written out pair by pair in
// float64 angles rounded as the table rounds them: adjacent pairs and NeoX halves,
// rotating every dimension of the head or its first dims only (the rest untouched),
// bit for bit, on the assembly where the CPU has it (the last pairs of a head past a
// multiple of eight in Go). It fails with a NeoX pair taken from the wrong half.
func TestRoPEReference(t *testing.T) {
	c := New(1)
	defer c.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, v := range []struct {
		headDim, dims int
		neox          bool
	}{{16, 16, false}, {16, 16, true}, {64, 32, false}, {64, 32, true}, {8, 4, true}, {64, 64, false}, {12, 12, false}, {24, 20, false}, {64, 64, true}, {40, 40, true}, {128, 48, true}} {
		const n, heads, start = 5, 3, 7
		r := kernels.RoPE{Dims: v.dims, Base: 10000, NeoX: v.neox}
		x := make([]float32, n*heads*v.headDim)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		want := append([]float32(nil), x...)
		half := v.dims / 2
		thetaScale := float32(math.Pow(10000, -2.0/float64(v.dims)))
		for tok := range n {
			for h := range heads {
				w := want[(tok*heads+h)*v.headDim:][:v.headDim]
				theta := float32(start + tok)
				for i := range half {
					cos, sin := float32(math.Cos(float64(theta))), float32(math.Sin(float64(theta)))
					a, b := 2*i, 2*i+1
					if v.neox {
						a, b = i, i+half
					}
					x0, x1 := w[a], w[b]
					w[a], w[b] = x0*cos-x1*sin, x0*sin+x1*cos
					theta *= thetaScale
				}
			}
		}
		c.ApplyRoPE(x, n, start, heads, v.headDim, &r)
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: x[%d] = %g, want %g", v, i, x[i], want[i])
			}
		}
	}
}

// TestWarmWeights checks the bytes of copies Prepare keeps (tiledBytes: a replaced
// copy counted once, none after dropTiles) and that a product's job is warm (decode
// without software prefetch) while they take at most warmBytes, and not once they take
// more; the small matrix's one-token product is the same, bit for bit, either way.
func TestWarmWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	matrix := func(typ kernels.DType, rows, cols int) *kernels.Matrix {
		w := &kernels.Matrix{Type: typ, Rows: rows, Cols: cols}
		b, _ := randRow(rng, typ, cols, 1)
		for range rows {
			w.Data = append(w.Data, b...)
		}
		return w
	}
	c := New(2)
	defer c.Close()
	kept := func() int {
		n := 0
		for _, tl := range c.tiles {
			n += len(tl.data)
		}
		return n
	}
	small := matrix(kernels.F16, 64, 512)
	x := make([]float32, 512)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	c.Prepare(small)
	if c.tiledBytes != kept() || c.tiledBytes == 0 {
		t.Fatalf("tiledBytes %d, the copies take %d", c.tiledBytes, kept())
	}
	warm := func() bool {
		c.plan(make([]float32, small.Rows), small, x, 1)
		w := c.job.warm
		c.job = job{}
		return w
	}
	if !warm() {
		t.Fatalf("%d bytes of weights: not warm (warmBytes %d)", c.tiledBytes, warmBytes)
	}
	before := make([]float32, small.Rows)
	c.MatMul(before, small, x, 1)
	small.Data = append([]byte(nil), small.Data...) // replaced: copied again, counted once
	c.Prepare(small)
	if c.tiledBytes != kept() {
		t.Fatalf("after a replaced copy: tiledBytes %d, the copies take %d", c.tiledBytes, kept())
	}
	c.Prepare(matrix(kernels.F16, 2304, 2048)) // 9 MiB copied (at every level)
	if c.tiledBytes != kept() || c.tiledBytes <= warmBytes {
		t.Fatalf("tiledBytes %d, the copies take %d (want more than %d)", c.tiledBytes, kept(), warmBytes)
	}
	if warm() {
		t.Fatalf("%d bytes of weights: warm", c.tiledBytes)
	}
	after := make([]float32, small.Rows)
	c.MatMul(after, small, x, 1)
	for i := range after {
		if math.Float32bits(after[i]) != math.Float32bits(before[i]) {
			t.Fatalf("out[%d] = %g with the weights cold, %g warm", i, after[i], before[i])
		}
	}
	c.dropTiles()
	if c.tiledBytes != 0 {
		t.Fatalf("tiledBytes %d after dropTiles", c.tiledBytes)
	}
}
