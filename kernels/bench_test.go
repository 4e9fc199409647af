package kernels

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkVecDot measures each weight type's dot product over a 4096-element row
// (a 7B model's hidden size); the bytes are those of the weight row.
func BenchmarkVecDot(b *testing.B) {
	const n = 4096
	rng := rand.New(rand.NewPCG(1, 2))
	wf, xf := gaussian(rng, n, 0.02), gaussian(rng, n, 1)
	for _, ty := range weightTypes {
		tr := TraitsOf(ty)
		w := quantize(b, ty, wf)
		x := quantize(b, tr.VecDotType, xf)
		b.Run(ty.String(), func(b *testing.B) {
			b.SetBytes(int64(len(w)))
			var sink float32
			for b.Loop() {
				sink += tr.VecDot(n, w, x)
			}
			_ = sink
		})
	}
}

// BenchmarkToFloat measures dequantization of a 4096-element row per type.
func BenchmarkToFloat(b *testing.B) {
	const n = 4096
	rng := rand.New(rand.NewPCG(1, 2))
	wf := gaussian(rng, n, 0.02)
	y := make([]float32, n)
	for _, ty := range append(weightTypes, Q8_K) {
		tr := TraitsOf(ty)
		w := quantize(b, ty, wf)
		b.Run(ty.String(), func(b *testing.B) {
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				tr.ToFloat(w, y)
			}
		})
	}
}

// BenchmarkFromFloat measures quantization of a 4096-element row per type (the
// activation formats Q8_0, Q8_1 and Q8_K run once per token and layer).
func BenchmarkFromFloat(b *testing.B) {
	const n = 4096
	rng := rand.New(rand.NewPCG(1, 2))
	xf := gaussian(rng, n, 1)
	for _, ty := range append(weightTypes, Q8_1, Q8_K) {
		tr := TraitsOf(ty)
		nbytes, _ := ty.RowBytes(n)
		w := make([]byte, nbytes)
		b.Run(ty.String(), func(b *testing.B) {
			b.SetBytes(4 * n)
			for b.Loop() {
				tr.FromFloat(xf, w)
			}
		})
	}
}
