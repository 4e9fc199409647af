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
		for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 64, 67} {
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
	for _, hd := range []int{4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 80, 120, 128} {
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
			if accumF32Pair != nil { // two heads over the same rows: each as accumF32s alone
				w1 := randF32(rng, n)
				start1 := randF32(rng, hd)
				got1, want1 := append([]float32(nil), start1...), append([]float32(nil), start1...)
				got = append(got[:0], start...)
				accumF32Pair(got, got1, w, w1, v32, stride)
				accumF32s(want1, w1, v32, stride)
				sameBits(t, "accum pair f32, head 0", hd, n, got, want)
				sameBits(t, "accum pair f32, head 1", hd, n, got1, want1)
			}
		}
	}
}

// TestExpSumsMatchExp32 runs the tile exponential over a sweep of float32 bit
// patterns (every sign and exponent, so both ends of exp32's range and its special
// cases) and the values around its bounds, against exp32 of each difference.
func TestExpSumsMatchExp32(t *testing.T) {
	var xs []float32
	for b := uint32(0); b < 1<<32-4099; b += 4099 {
		xs = append(xs, math.Float32frombits(b))
	}
	for _, v := range []float32{expLo, expHi, 0, -1, 1, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		xs = append(xs, v, math.Nextafter32(v, -200), math.Nextafter32(v, 200))
	}
	for _, m := range []float32{0, 3.5, -7.25} {
		got := append([]float32(nil), xs...)
		expSums(got, m)
		for i, x := range xs {
			want := exp32(x - m)
			if math.Float32bits(got[i]) != math.Float32bits(want) && !(got[i] != got[i] && want != want) {
				t.Fatalf("exp(%g − %g): tile %g (%#x), exp32 %g (%#x)", x, m, got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
			}
		}
	}
}

// TestExpSumsTails checks every length up to five groups of eight: the values past
// the slice are not touched, each value is exp32's, the sum is theirs (to float64
// rounding) and the same on every call.
func TestExpSumsTails(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for n := range 41 {
		buf := randF32(rng, n+8)
		orig := append([]float32(nil), buf...)
		got := buf[:n]
		sum := expSums(got, 0.25)
		var want float64
		for i := range n {
			e := exp32(orig[i] - 0.25)
			if math.Float32bits(got[i]) != math.Float32bits(e) {
				t.Fatalf("n=%d: element %d is %g, exp32 %g", n, i, got[i], e)
			}
			want += float64(e)
		}
		for i := n; i < len(buf); i++ {
			if math.Float32bits(buf[i]) != math.Float32bits(orig[i]) {
				t.Fatalf("n=%d: element %d past the slice changed", n, i)
			}
		}
		if math.Abs(sum-want) > 1e-12*want {
			t.Fatalf("n=%d: sum %v, want %v", n, sum, want)
		}
		again := append([]float32(nil), orig[:n]...)
		if s2 := expSums(again, 0.25); math.Float64bits(s2) != math.Float64bits(sum) {
			t.Fatalf("n=%d: sum %v, then %v", n, sum, s2)
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

// TestTileMaxAndScale checks tileMax against tileMaxGo (NaNs passed over, infinities,
// signed zeros, every length up to 70 so every tail) and scaleScores against the Go
// multiply, bit for bit.
func TestTileMaxAndScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	nan := float32(math.NaN())
	special := []float32{nan, float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 3.3e38, -1e-45}
	for n := 0; n <= 70; n++ {
		for trial := range 4 {
			s := make([]float32, n)
			for i := range s {
				s[i] = float32(rng.NormFloat64() * 10)
				if trial > 0 && rng.IntN(4) == 0 {
					s[i] = special[rng.IntN(len(special))]
				}
				if trial == 3 {
					s[i] = nan // nothing but NaNs: −Inf
				}
			}
			if got, want := tileMax(s), tileMaxGo(s); got != want {
				t.Fatalf("tileMax(%v) = %v, want %v", s, got, want)
			}
			f := float32(rng.Float64()) + 1e-3
			got, want := append([]float32(nil), s...), append([]float32(nil), s...)
			scaleScores(got, f)
			scaleScoresGo(want, f)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("scaleScores n=%d: element %d = %v, want %v", n, i, got[i], want[i])
				}
			}
		}
	}
}

// TestDequantQ8 checks dequantQ8 (assembly where the CPU has it) against the Q8_0
// reference dequantization bit for bit: random quants, scales of every magnitude including subnormal halves and
// zero, 1 to 9 blocks at unaligned offsets.
func TestDequantQ8(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for nb := 1; nb <= 9; nb++ {
		for trial := range 20 {
			b := make([]byte, 1+34*nb)[1:]
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			for k := range nb {
				h := uint16(rng.Uint32())
				if h&0x7c00 == 0x7c00 { // finite halves only, either sign
					h &^= 0x0400
				}
				if trial%5 == 0 {
					h &= 0x83ff // subnormal or zero
				}
				b[34*k], b[34*k+1] = byte(h), byte(h>>8)
			}
			got, want := make([]float32, 32*nb), make([]float32, 32*nb)
			dequantQ8(b, got)
			kernels.TraitsOf(kernels.Q8_0).ToFloat(b, want)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%d blocks: value %d = %v, want %v", nb, i, got[i], want[i])
				}
			}
		}
	}
}

// TestDequantRows checks the dequantization of strided head rows of a Q8_0 cache
// (assembly where the CPU has it) against the Q8_0 reference row by row, bit for bit,
// for head sizes of one to four blocks at every head offset, with and without a second
// cache prefetched along.
func TestDequantRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, hd := range []int{32, 64, 96, 128} {
		const heads, rows = 3, 37
		stride := heads * hd
		q8 := make([]byte, rows*stride/32*34)
		for i := range q8 {
			q8[i] = byte(rng.Uint32())
		}
		for b := 0; b < len(q8); b += 34 { // finite scales
			q8[b+1] &^= 0x40
		}
		for h := range heads {
			for _, also := range [][]byte{nil, make([]byte, len(q8))} {
				got := make([]float32, rows*hd)
				dequantRows(got, q8, also, h*hd, stride, hd, also != nil || h%2 == 0)
				want := make([]float32, hd)
				for r := range rows {
					e := r*stride + h*hd
					kernels.TraitsOf(kernels.Q8_0).ToFloat(q8[e/32*34:(e+hd)/32*34], want)
					for i, w := range want {
						if math.Float32bits(got[r*hd+i]) != math.Float32bits(w) {
							t.Fatalf("head size %d, head %d, row %d: value %d = %v, want %v", hd, h, r, i, got[r*hd+i], w)
						}
					}
				}
			}
		}
	}
}

// TestWidenF16Rows checks the widening of strided F16 rows against kernels.F16ToF32
// for every half (subnormals and infinities included), head sizes 8 to 40. A NaN
// stays a NaN of its sign and payload; VCVTPH2PS sets the quiet bit of a signalling
// one, as the F16 tile loops' own conversion does. The rows prefetched along (none, or
// a second cache's, shorter than the rows prefetched ahead reach) change nothing.
func TestWidenF16Rows(t *testing.T) {
	for c, hd := range []int{8, 16, 24, 40, 64} {
		stride := hd + 8
		n := (1<<16 + hd - 1) / hd
		src := make([]uint16, n*stride)
		for i := range n * hd {
			src[i/hd*stride+i%hd] = uint16(i)
		}
		var also []uint16
		if c%2 == 1 {
			also = make([]uint16, n*stride)
		}
		dst := make([]float32, n*hd)
		widenF16Rows(dst, src, also, stride, hd, c%4 != 0)
		for i, v := range dst {
			h := src[i/hd*stride+i%hd]
			w := kernels.F16ToF32(h)
			if w != w && attnTileAsm {
				w = math.Float32frombits(math.Float32bits(w) | 1<<22)
			}
			if math.Float32bits(v) != math.Float32bits(w) {
				t.Fatalf("head size %d: half %#04x widened to %#08x, want %#08x", hd, h, math.Float32bits(v), math.Float32bits(w))
			}
		}
	}
}
