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

// TestRMSNorm checks that four rows side by side and rows spread over the workers give
// one row at a time's bits, for every row count up to 70 (so every remainder of four
// and of the parts), row widths from a qwen3 head to a model row, and 1-3 threads.
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

// BenchmarkRMSNorm normalises a 512-token prompt's rows of 2048 (llama-1b).
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
	b.Run("ref", func(b *testing.B) {
		for b.Loop() {
			rmsNormRef(dst, x, w, 1e-5)
		}
	})
}
