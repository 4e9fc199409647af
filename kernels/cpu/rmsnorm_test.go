package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// rmsNormRef is RMSNorm one row at a time, the float64 sum in element order (ggml's).
func rmsNormRef(dst, x, weight []float32, eps float32) {
	d := len(weight)
	for r := 0; r+d <= len(x); r += d {
		var ss float64
		for _, v := range x[r : r+d] {
			ss += float64(v * v)
		}
		scale := float32(1 / math.Sqrt(float64(float32(ss/float64(d))+eps)))
		for j, v := range x[r : r+d] {
			dst[r+j] = v * scale * weight[j]
		}
	}
}

// TestRMSNorm checks that rows spread over the workers give one row at a time's bits
// (the sum in element order), for every row count up to 70 (every remainder of the
// parts), row widths from a qwen3 head to a model row, and 1-3 threads.
func TestRMSNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, threads := range []int{1, 2, 3} {
		c := New(threads)
		for _, d := range []int{7, 64, 2048} {
			w := make([]float32, d)
			for i := range w {
				w[i] = float32(r.NormFloat64())
			}
			for rows := 1; rows <= 70; rows++ {
				x := make([]float32, rows*d+d/2) // a partial row at the end is left alone
				for i := range x {
					x[i] = float32(r.NormFloat64() * 3)
				}
				got, want := make([]float32, len(x)), make([]float32, len(x))
				c.RMSNorm(got, x, w, 1e-5)
				rmsNormRef(want, x, w, 1e-5)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("threads %d, d %d, rows %d: element %d = %v, want %v", threads, d, rows, i, got[i], want[i])
					}
				}
			}
		}
		c.Close()
	}
}

// TestMeanSquareInOrder checks meanSquare against the sum in element order: on a row
// built so that the fast sum rounds (over n, to float32) the other way from the
// element-order one, which only the check against the rounding boundary catches, and
// on rows whose squares span the float32 range (the fast and in-order float64 sums
// differ on most of them), including zeros, subnormals, infinities and NaNs.
func TestMeanSquareInOrder(t *testing.T) {
	// 1 + 2⁻²⁴ is exactly the midpoint between two float32s (ties to even: 1); every
	// 2⁻⁵⁴ after it is lost in element order (a quarter of 1's float64 ulp), but summed
	// apart from the 1 in the fast chains they lift the sum above the midpoint.
	row := make([]float32, 2048)
	row[0], row[1] = 1, 0x1p-12
	for i := 2; i < len(row); i++ {
		row[i] = 0x1p-27
	}
	want := meanSquareInOrder(row)
	if want != 0x1p-11 {
		t.Fatalf("in order: %g, want 2⁻¹¹", want)
	}
	for name, sum := range map[string]func([]float32) float64{"go": sumSquaresGo, level: sumSquares} {
		if fast := float32(sum(row) / float64(len(row))); fast == want {
			t.Fatalf("%s: the fast sum rounds as the in-order one (%g): the row does not test the fallback", name, fast)
		}
	}
	if got := meanSquare(row); got != want {
		t.Fatalf("meanSquare = %g, want the in-order %g", got, want)
	}
	r := rand.New(rand.NewPCG(5, 6))
	specials := []float32{0, float32(math.Copysign(0, -1)), 0x1p-149, float32(math.Inf(1)), float32(math.NaN()), math.MaxFloat32}
	differ := 0
	for range 4000 {
		n := 1 + r.IntN(300)
		row := make([]float32, n)
		for i := range row {
			row[i] = float32(math.Ldexp(r.Float64()+0.5, r.IntN(140)-75))
			if r.IntN(500) == 0 {
				row[i] = specials[r.IntN(len(specials))]
			}
		}
		want := meanSquareInOrder(row)
		if got := meanSquare(row); math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("row %v: meanSquare %g, in order %g", row, got, want)
		}
		var s float64
		for _, v := range row {
			s += float64(v * v)
		}
		if sumSquares(row) != s {
			differ++
		}
	}
	if differ < 1000 {
		t.Fatalf("the fast sum differed from the in-order one on only %d of 4000 rows: the rows do not test the bound", differ)
	}
}

// BenchmarkRMSNorm normalises a 512-token prompt's rows of 2048 (llama-1b), and one
// row (a decode step's).
func BenchmarkRMSNorm(b *testing.B) {
	x, w := make([]float32, 512*2048), make([]float32, 2048)
	for i := range x {
		x[i] = float32(i%97) - 48
	}
	for i := range w {
		w[i] = 1
	}
	dst := make([]float32, len(x))
	for _, threads := range []int{1, 2} {
		c := New(threads)
		b.Run(map[int]string{1: "t1", 2: "t2"}[threads], func(b *testing.B) {
			for b.Loop() {
				c.RMSNorm(dst, x, w, 1e-5)
			}
		})
		c.Close()
	}
	b.Run("row", func(b *testing.B) {
		for b.Loop() {
			rmsNormRows(dst, x, w, 1e-5, 0, 1)
		}
	})
	b.Run("ref", func(b *testing.B) {
		for b.Loop() {
			rmsNormRef(dst, x, w, 1e-5)
		}
	})
}
