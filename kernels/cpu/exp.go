package cpu

import "math"

// exp32 returns e^x in float32 with a relative error of at most exp32MaxRelErr against
// the exactly rounded value for every float32 x whose e^x is a normal float32, and
// within one unit in the last place of the subnormal result below that (x down to
// −103.97); 0 below, +Inf above 88.72, NaN for NaN. It replaces the float64 math.Exp
// in SwiGLU and the attention softmax (a quarter of its time, with the conversions).
//
// Method (Cephes' expf): n = round(x·log2 e); r = x − n·ln 2 in two parts (ln2Hi has
// few enough bits that n·ln2Hi is exact), so |r| ≤ ln2/2; e^r ≈ 1 + r + r²·P(r) with
// Cephes' degree-5 minimax P; then the result is scaled by 2^n in two exact steps, so
// that a subnormal result is rounded once. Every product and sum is rounded to float32
// separately (the explicit conversions keep the compiler from fusing them), so the
// result is the same on every platform.
func exp32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > expHi:
		return float32(math.Inf(1))
	case x < expLo:
		return 0
	}
	t := float32(x * log2e)
	var n int32
	if t < 0 {
		n = int32(t - 0.5)
	} else {
		n = int32(t + 0.5)
	}
	fn := float32(n)
	r := x - float32(fn*ln2Hi)
	r = r - float32(fn*ln2Lo)
	p := float32(float32(expP0*r) + expP1)
	p = float32(float32(p*r) + expP2)
	p = float32(float32(p*r) + expP3)
	p = float32(float32(p*r) + expP4)
	p = float32(float32(p*r) + expP5)
	p = float32(float32(float32(float32(p*r)*r)+r) + 1)
	n1 := n >> 1
	return p * math.Float32frombits(uint32(n1+127)<<23) * math.Float32frombits(uint32(n-n1+127)<<23)
}

const (
	expHi = 88.72283935546875   // e^x overflows float32 from this float32 up
	expLo = -103.97208404541016 // e^x rounds to 0 below
	log2e = 1.44269504088896341
	ln2Hi = 0.693359375
	ln2Lo = -2.12194440e-4
	expP0 = 1.9875691500e-4
	expP1 = 1.3981999507e-3
	expP2 = 8.3334519073e-3
	expP3 = 4.1665795894e-2
	expP4 = 1.6666665459e-1
	expP5 = 5.0000001201e-1
)

// exp32MaxRelErr bounds exp32's relative error where e^x is a normal float32, 2^-23
// (one float32 ulp at the bottom of a binade): TestExp32 checks it against math.Exp
// over a sixty-first of the float32 inputs in [expLo, expHi] and measured 8.1e-8
// (at x = −5.869218).
const exp32MaxRelErr = 0x1p-23
