package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"llmbench/kernels"
)

// randMatrix returns a rows×cols matrix of typ with random weights.
func randMatrix(rng *rand.Rand, typ kernels.DType, rows, cols int) *kernels.Matrix {
	w := &kernels.Matrix{Type: typ, Rows: rows, Cols: cols}
	for range rows {
		b, _ := randRow(rng, typ, cols, 0.5)
		w.Data = append(w.Data, b...)
	}
	return w
}

// TestMatMulSharedMatchesMatMul checks that MatMulShared's outputs equal one MatMul
// per matrix bit for bit, for every weight type and path (one token, a few, a tail of
// rows), runs of one type and mixed types: Q4_K_M's Q4_K Q and K with a Q6_K V (one
// step, each type with its own regrouped activations) and F16 with Q8_0 (two steps).
func TestMatMulSharedMatchesMatMul(t *testing.T) {
	type set struct {
		types []kernels.DType
		rows  []int
	}
	var sets []set
	for _, typ := range dotTypes {
		sets = append(sets, set{[]kernels.DType{typ, typ, typ}, []int{128, 32, 48}})
		sets = append(sets, set{[]kernels.DType{typ, typ}, []int{37, 64}})
	}
	sets = append(sets, set{[]kernels.DType{kernels.Q4_K, kernels.Q4_K, kernels.Q6_K}, []int{64, 16, 16}},
		set{[]kernels.DType{kernels.F16, kernels.Q8_0, kernels.Q8_0}, []int{32, 32, 16}})
	const cols = 512
	for _, threads := range []int{1, 2, 3} {
		c := New(threads)
		for si, s := range sets {
			rng := rand.New(rand.NewPCG(uint64(si), 7))
			ws := make([]*kernels.Matrix, len(s.types))
			for i, typ := range s.types {
				ws[i] = randMatrix(rng, typ, s.rows[i], cols)
			}
			for _, n := range []int{1, 2, 5} {
				x := make([]float32, n*cols)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				want := make([][]float32, len(ws))
				got := make([][]float32, len(ws))
				for i, w := range ws {
					want[i] = make([]float32, n*w.Rows)
					c.MatMul(want[i], w, x, n)
					got[i] = make([]float32, n*w.Rows)
				}
				c.MatMulShared(got, ws, x, n)
				for i := range ws {
					for r := range want[i] {
						if math.Float32bits(got[i][r]) != math.Float32bits(want[i][r]) {
							t.Fatalf("%v threads=%d n=%d: matrix %d (%s) output %d = %g, MatMul %g",
								s.types, threads, n, i, ws[i].Type, r, got[i][r], want[i][r])
						}
					}
				}
			}
		}
		c.Close()
	}
}

// TestMatMulSharedOneStep checks that MatMulShared hands matrices that take the same
// activations to the workers as one step: three products each too small to split
// alone (K and V in decode) run as one parallel step, where one MatMul each runs none.
func TestMatMulSharedOneStep(t *testing.T) {
	for _, types := range [][3]kernels.DType{
		{kernels.Q8_0, kernels.Q8_0, kernels.Q8_0},
		{kernels.F16, kernels.F16, kernels.F16},
		{kernels.Q4_K, kernels.Q4_K, kernels.Q6_K}, // Q4_K_M's Q, K and V: one activation format
	} {
		t.Run(fmt.Sprint(types), func(t *testing.T) {
			c := New(2)
			defer c.Close()
			rng := rand.New(rand.NewPCG(3, 4))
			const cols = 2048
			// Each alone below minParallelWork and all three above; for the block types any
			// two below too, so that a third matrix left out of the step shows.
			rows := 2 * minParallelWork / cols / 3
			if types[0].BlockSize() > 1 {
				rows = 3 * tileWorkDiv * minParallelWork / cols / 8
			}
			ws := []*kernels.Matrix{randMatrix(rng, types[0], rows, cols), randMatrix(rng, types[1], rows, cols), randMatrix(rng, types[2], rows, cols)}
			x := make([]float32, cols)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			dst := [][]float32{make([]float32, rows), make([]float32, rows), make([]float32, rows)}
			for i, w := range ws {
				c.MatMul(dst[i], w, x, 1) // tiles made, activations converted
			}
			before := c.pool.splits
			for i, w := range ws {
				c.MatMul(dst[i], w, x, 1)
			}
			if d := c.pool.splits - before; d != 0 {
				t.Fatalf("one MatMul each: %d parallel steps, want 0 (each below minParallelWork)", d)
			}
			before = c.pool.splits
			c.MatMulShared(dst, ws, x, 1)
			if d := c.pool.splits - before; d != 1 {
				t.Fatalf("MatMulShared: %d parallel steps, want 1", d)
			}
		})
	}
}

// TestOwnActsFollowInputs checks that one-token tiled products, whose workers each
// regroup the activations into a buffer of their own (tileActs), never read a
// regrouping left from an earlier product: the inputs change in place and between
// slices, the matrices between tile types, widths and MatMul and MatMulShared, the
// tokens between one and four (a regrouping of fewer tokens over one of more must
// clear the slots the earlier one filled, actPad), and every output must equal the
// one-thread product of that input alone.
func TestOwnActsFollowInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	// 2048 rows: enough multiply-adds for RunWork to split the product.
	ws := []*kernels.Matrix{randMatrix(rng, kernels.Q4_0, 2048, 512), randMatrix(rng, kernels.Q8_0, 2048, 512),
		randMatrix(rng, kernels.Q4_0, 2048, 1024), randMatrix(rng, kernels.Q4_K, 2048, 512)}
	want := func(w *kernels.Matrix, x []float32, n int) []float32 {
		c := New(1)
		defer c.Close()
		out := make([]float32, n*w.Rows)
		c.MatMul(out, w, x, n)
		return out
	}
	for _, threads := range []int{2, 3} {
		c := New(threads)
		xa, xb := make([]float32, 4*1024), make([]float32, 4*1024)
		for step := range 35 {
			n := []int{1, 1, 3, 1, 2, 4, 1}[step%7]
			x := xa
			if step%3 == 2 {
				x = xb
			}
			if step%2 == 0 { // new values in place
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
			}
			w := ws[step%len(ws)]
			if step%5 == 4 { // the same input through MatMulShared, with its twin
				outs := [][]float32{make([]float32, n*w.Rows), make([]float32, n*ws[0].Rows)}
				other := ws[0]
				if w.Cols != other.Cols {
					other = ws[2]
				}
				c.MatMulShared(outs, []*kernels.Matrix{w, other}, x[:n*w.Cols], n)
				for k, m := range []*kernels.Matrix{w, other} {
					if !slices.Equal(outs[k], want(m, x[:n*m.Cols], n)) {
						t.Fatalf("threads %d, step %d: shared product %d differs from the product alone", threads, step, k)
					}
				}
				continue
			}
			out := make([]float32, n*w.Rows)
			c.MatMul(out, w, x[:n*w.Cols], n)
			if !slices.Equal(out, want(w, x[:n*w.Cols], n)) {
				t.Fatalf("threads %d, step %d (%s %dx%d, %d tokens): differs from the product alone", threads, step, w.Type, w.Rows, w.Cols, n)
			}
		}
		c.Close()
	}
}
