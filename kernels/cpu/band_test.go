package cpu

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"llmbench/kernels"
)

// The tests here check that workers never write one cache line together.

// TestBandsWholeLines checks that the row bands of the per-row path start on whole
// cache lines of the output (multiples of 16 float32 rows), so the workers never
// write one line of dst together, for small and large products alike.
func TestBandsWholeLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, threads := range []int{1, 2, 3, 8} {
		c := New(threads)
		for _, rows := range []int{4, 16, 40, 64, 172, 256, 2048, 5632} {
			const cols = 64
			w := &kernels.Matrix{Type: kernels.F32, Rows: rows, Cols: cols}
			for range rows {
				b, _ := randRow(rng, kernels.F32, cols, 1)
				w.Data = append(w.Data, b...)
			}
			for _, n := range []int{1, 3} {
				x := make([]float32, n*cols)
				dst := make([]float32, n*rows)
				c.plan(dst, w, x, n)
				if j := c.job; j.kind == taskBand && j.band%16 != 0 {
					t.Errorf("threads %d, %d rows, %d tokens: bands of %d rows", threads, rows, n, j.band)
				}
				c.job = job{}
			}
		}
		c.Close()
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
