package cpu

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"llmbench/kernels"
)

// The tests here check that workers never write one cache line together.

// TestBandsWholeLines checks that no two parts of the per-row path write one cache line
// of the output (16 float32s from a line-aligned dst) and that together they write
// every line, for small and large products, one token and many: bands of rows are
// whole lines of every token's outputs, and where a token's outputs start mid-line
// (rows not a multiple of 16) parts take runs of tokens that end on a line. F16's
// one- and two-token products (the half path) end in shorter bands (halfTail).
func TestBandsWholeLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	halves, tails := 0, 0
	for _, threads := range []int{1, 2, 3, 8} {
		c := New(threads)
		for _, rows := range []int{4, 9, 16, 40, 64, 172, 256, 2048, 5632} {
			for _, cs := range []struct {
				typ  kernels.DType
				cols int
				ns   []int
			}{{kernels.F32, 64, []int{1, 3, 7, 64, 100}}, {kernels.F16, 2048, []int{1, 2}}} {
				w := &kernels.Matrix{Type: cs.typ, Rows: rows, Cols: cs.cols}
				if cs.typ == kernels.F32 {
					for range rows {
						b, _ := randRow(rng, kernels.F32, cs.cols, 1)
						w.Data = append(w.Data, b...)
					}
				} else {
					w.Data = make([]byte, rows*cs.cols*2) // plans read no weights
				}
				for _, n := range cs.ns {
					x := make([]float32, n*cs.cols)
					dst := make([]float32, n*rows)
					parts, _ := c.plan(dst, w, x, n)
					j := c.job
					if j.kind != taskBand {
						if cs.typ == kernels.F32 {
							t.Fatalf("%d rows: kind %d, want the per-row path", rows, j.kind)
						}
						c.job = job{} // F16 on another path (LLMBENCH_CPU=avx2: small products)
						continue
					}
					if j.hk != nil {
						halves++
					}
					if j.tailParts > 0 {
						tails++
					}
					owner := map[int]int{} // line → the part that wrote it
					for p := range parts {
						r0, r1, t0, t1 := j.partRange(p)
						for tok := t0; tok < t1; tok++ {
							for r := r0; r < r1; r++ {
								line := (tok*rows + r) / 16
								if q, ok := owner[line]; ok && q != p {
									t.Fatalf("%s, threads %d, %d rows, %d tokens: parts %d and %d write line %d (band %d, token runs %d, tail %d×%d)", cs.typ, threads, rows, n, q, p, line, j.band, j.tband, j.tailParts, j.tail)
								}
								owner[line] = p
							}
						}
					}
					if len(owner) != (n*rows+15)/16 {
						t.Fatalf("%s, threads %d, %d rows, %d tokens: %d parts write %d lines of %d", cs.typ, threads, rows, n, parts, len(owner), (n*rows+15)/16)
					}
					c.job = job{}
				}
			}
		}
		c.Close()
	}
	if halves > 0 && tails == 0 { // the half path (not LLMBENCH_CPU=go)
		t.Error("no F16 product ended in shorter bands")
	}
}

// TestScratchApart checks that the workers' attention scratches, side by side in
// CPU.work, keep the slice headers every unit rewrites a cache line (64 bytes) from
// the next worker's.
func TestScratchApart(t *testing.T) {
	var s attnScratch
	end := unsafe.Offsetof(s.sum) + unsafe.Sizeof(s.sum)
	if gap := unsafe.Sizeof(s) - end; gap < 64 {
		t.Fatalf("attnScratch: %d bytes after the last slice header, want at least 64", gap)
	}
}

// TestSmallStepsPlanAsOneThread checks that a product too small for RunWork to split
// is planned on two threads as on one (the same parts, bands and token runs), since
// the caller runs every part anyway, and that a larger one is planned for both
// threads: stories260K's and TinyStories-656K's shapes, F32 rows and Q8_0 tiles.
func TestSmallStepsPlanAsOneThread(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	one, two := New(1), New(2)
	defer one.Close()
	defer two.Close()
	for _, v := range []struct {
		typ           kernels.DType
		rows, cols, n int
		split         bool
	}{
		{kernels.F32, 172, 64, 1, false}, {kernels.F32, 512, 64, 1, false}, {kernels.F32, 172, 64, 7, false},
		{kernels.Q8_0, 384, 128, 1, false}, {kernels.Q8_0, 128, 384, 64, false},
		{kernels.F32, 2048, 512, 1, true}, {kernels.F32, 172, 64, 64, true}, {kernels.Q8_0, 2048, 2048, 1, true},
	} {
		w := randMatrix(rng, v.typ, v.rows, v.cols)
		x := make([]float32, v.n*v.cols)
		dst := make([]float32, v.n*v.rows)
		plan := func(c *CPU) (int, job) {
			c.claimNext = 0
			parts, _ := c.plan(dst, w, x, v.n)
			j := c.job
			c.job = job{}
			return parts, j
		}
		p1, j1 := plan(one)
		p2, j2 := plan(two)
		same := p1 == p2 && j1.band == j2.band && j1.tband == j2.tband
		if same == v.split {
			t.Errorf("%s %dx%d, %d tokens: one thread %d parts (band %d, runs %d), two %d (band %d, runs %d); want them %s",
				v.typ, v.rows, v.cols, v.n, p1, j1.band, j1.tband, p2, j2.band, j2.tband, map[bool]string{false: "the same", true: "to differ"}[v.split])
		}
	}
}
