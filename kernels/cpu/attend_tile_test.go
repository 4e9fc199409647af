package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"llmbench/kernels"
)

// The tile helpers must give, bit for bit, what the one-row helpers give row by row
// (the attention paths' results may not depend on whether a tile or a row was
// computed): checked at this CPU's level, and again under LLMBENCH_CPU=avx2 and =go by
// make test.

func TestTileScoresMatchRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, hd := range []int{4, 8, 12, 16, 24, 64, 128} {
		for _, n := range []int{0, 1, 2, 3, 7, 64} {
			stride := 3*hd + 8
			q := randF32(rng, hd)
			k32 := randF32(rng, n*stride+hd)
			k16 := make([]uint16, len(k32))
			for i, v := range k32 {
				k16[i] = kernels.F32ToF16(v)
			}
			scale := float32(1 / math.Sqrt(float64(hd)))
			got, want := make([]float32, n), make([]float32, n)
			scoresF16s(got, q, k16, stride, scale)
			for i := range want {
				want[i] = dotF16s(q, k16[i*stride:][:hd]) * scale
			}
			sameBits(t, "scores f16", hd, n, got, want)
			scoresF32s(got, q, k32, stride, scale)
			for i := range want {
				want[i] = dotF32s(q, k32[i*stride:][:hd]) * scale
			}
			sameBits(t, "scores f32", hd, n, got, want)
		}
	}
}

func TestTileAccumMatchesRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, hd := range []int{4, 8, 12, 16, 24, 40, 64, 128} {
		for _, n := range []int{0, 1, 2, 5, 64} {
			stride := 2*hd + 16
			w := randF32(rng, n)
			v32 := randF32(rng, n*stride+hd)
			v16 := make([]uint16, len(v32))
			for i, x := range v32 {
				v16[i] = kernels.F32ToF16(x)
			}
			start := randF32(rng, hd)
			got, want := append([]float32(nil), start...), append([]float32(nil), start...)
			accumF16s(got, w, v16, stride)
			for i, x := range w {
				axpyF16s(want, x, v16[i*stride:][:hd])
			}
			sameBits(t, "accum f16", hd, n, got, want)
			got, want = append(got[:0], start...), append(want[:0], start...)
			accumF32s(got, w, v32, stride)
			for i, x := range w {
				axpyF32s(want, x, v32[i*stride:][:hd])
			}
			sameBits(t, "accum f32", hd, n, got, want)
		}
	}
}

// TestExpSubMatchesExp32 runs the tile exponential over a sweep of float32 bit
// patterns (every sign and exponent, so both ends of exp32's range and its special
// cases) and the values around its bounds, against exp32 of each difference.
func TestExpSubMatchesExp32(t *testing.T) {
	var xs []float32
	for b := uint32(0); b < 1<<32-4099; b += 4099 {
		xs = append(xs, math.Float32frombits(b))
	}
	for _, v := range []float32{expLo, expHi, 0, -1, 1, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		xs = append(xs, v, math.Nextafter32(v, -200), math.Nextafter32(v, 200))
	}
	for _, m := range []float32{0, 3.5, -7.25} {
		got := append([]float32(nil), xs...)
		expSubs(got, m)
		for i, x := range xs {
			want := exp32(x - m)
			if math.Float32bits(got[i]) != math.Float32bits(want) && !(got[i] != got[i] && want != want) {
				t.Fatalf("exp(%g − %g): tile %g (%#x), exp32 %g (%#x)", x, m, got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
			}
		}
	}
}

func randF32(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}

func sameBits(t *testing.T, what string, hd, n int, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s, head size %d, %d rows: element %d is %g, the row helpers give %g", what, hd, n, i, got[i], want[i])
		}
	}
}
