package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"llmbench/kernels"
)

// TestPrepareTilesOnce checks that Prepare makes a tiled matrix's copy, that the
// MatMuls after it make none (the tiling a load does is not paid again by the first
// request), and that they no longer read the matrix's own bytes (so the engine may
// release them): zeroing them after Prepare leaves the products unchanged. Types
// without a tile format report false and are multiplied from their bytes.
func TestPrepareTilesOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, typ := range []kernels.DType{kernels.Q4_0, kernels.Q8_0, kernels.Q4_K, kernels.Q6_K, kernels.F16, kernels.F32} {
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
		if got := c.Prepare(w); got != tiles {
			t.Fatalf("%s: Prepare = %v, want %v (tile format: %v, kernels %s)", typ, got, tiles, tiles, level)
		}
		if tiles {
			clear(w.Data) // MatMul must multiply the copy, not these bytes
		}
		made := c.tilings
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
		c.Close()
	}
}
