package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// weightTypes are the weight formats with a VecDot, in table order.
var weightTypes = []DType{F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4}

// gaussian returns n seeded N(0, sigma²) samples.
func gaussian(rng *rand.Rand, n int, sigma float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * sigma)
	}
	return x
}

// quantize converts x to type t through its FromFloat.
func quantize(tb testing.TB, t DType, x []float32) []byte {
	tb.Helper()
	nbytes, err := t.RowBytes(len(x))
	if err != nil {
		tb.Fatal(err)
	}
	b := make([]byte, nbytes)
	TraitsOf(t).FromFloat(x, b)
	return b
}

// dequantize converts n elements of type t back to float32 through its ToFloat.
func dequantize(t DType, b []byte, n int) []float32 {
	y := make([]float32, n)
	TraitsOf(t).ToFloat(b, y)
	return y
}

// relRMSE returns sqrt(Σ(x-y)² / Σx²).
func relRMSE(x, y []float32) float64 {
	var num, den float64
	for i := range x {
		d := float64(x[i]) - float64(y[i])
		num += d * d
		den += float64(x[i]) * float64(x[i])
	}
	return math.Sqrt(num / den)
}

// minOffset is where the first fp16 scale field sits in the block of each weight
// type that has mins (an offset added to the quants): with that field zeroed, a
// block dequantizes to its min part alone.
var minOffset = map[DType]int{Q4_1: 0, Q5_1: 0, Q2_K: 80, Q4_K: 0, Q5_K: 0}

// refDot is the plain reference for VecDot: Σ dequant(w)·dequant(x) in float64.
// It also returns the tolerance the fast dot product is held to, in two parts:
//
//	tol   = c·Σ mag_i·|x_i| + 1e-37
//	extra = [x is Q8_1] see below, else 0
//
// where m_i is the min part of w_i (0 for types without mins) and
// mag_i = |w_i - m_i| + |m_i| bounds what a float32 rounding of either part can
// cost; c = (nb+8)·2⁻²³ for nb blocks of quants (one float32 rounding per block
// product and per running sum), and (n/8+16)·2⁻²³ for F32/F16/BF16 (eight float32
// running sums of n/8 products each). extra covers ggml's Q8_1 field
// s = fp16(d·Σq), which the Q4_1/Q5_1 dot products use in place of Σx: it is
// rounded to fp16 from the unrounded d, so it can differ from Σ dequant(x) by the
// fp16 rounding of s plus Σq times that of d; per block, with h(v) = max(2⁻¹⁰|v|, 2⁻²⁴),
//
//	extra = Σ_blocks |m_b|·(h(s_b) + |Σq_b|·h(d_b))
func refDot(t DType, w, x []byte, n int) (ref, tol, extra float64) {
	tr := TraitsOf(t)
	wf := dequantize(t, w, n)
	xf := dequantize(tr.VecDotType, x, n)
	mp := make([]float32, n)
	if off, ok := minOffset[t]; ok {
		w2 := append([]byte(nil), w...)
		for b := 0; b < n/tr.BlockSize; b++ {
			putHalf(w2[b*tr.BlockBytes+off:], 0)
		}
		tr.ToFloat(w2, mp)
	}
	var mag float64
	for i := range wf {
		ref += float64(wf[i]) * float64(xf[i])
		m := math.Abs(float64(mp[i]))
		mag += (math.Abs(float64(wf[i])-float64(mp[i])) + m) * math.Abs(float64(xf[i]))
	}
	c := float64(n/tr.BlockSize+8) * 0x1p-23
	if t == IQ4_XS { // one float32 scale product and sum per 32-element sub-block
		c = float64(n/32+8) * 0x1p-23
	}
	if tr.BlockSize == 1 {
		c = float64(n/8+16) * 0x1p-23
	}
	tol = c*mag + 1e-37
	if tr.VecDotType == Q8_1 {
		// s = fp16(d·Σq) is rounded from the float32 d, while dequant(x) uses the
		// fp16 d: both roundings count, to 11 bits or to the subnormal quantum.
		hulp := func(v float64) float64 { return max(0x1p-10*math.Abs(v), 0x1p-24) }
		for b := 0; b < n/32; b++ {
			blk := x[36*b : 36*b+36]
			var sumQ float64
			for _, q := range blk[4:] {
				sumQ += float64(int8(q))
			}
			m := math.Abs(float64(mp[32*b]))
			extra += m * (hulp(float64(half(blk[2:]))) + math.Abs(sumQ)*hulp(float64(half(blk[0:]))))
		}
	}
	return ref, tol, extra
}
