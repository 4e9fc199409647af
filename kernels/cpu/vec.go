package cpu

import "llmbench/kernels"

// Vector helpers of the attention inner loops. The variables hold pure-Go twins and are
// replaced by assembly at init where the CPU allows (simd_amd64.go).
var (
	// dotF32s returns Σ a[i]·b[i].
	dotF32s = dotF32Go
	// dotF16s returns Σ a[i]·f16(b[i]).
	dotF16s = dotF16Go
	// axpyF32s adds w·v to out.
	axpyF32s = axpyF32Go
	// axpyF16s adds w·f16(v) to out.
	axpyF16s = axpyF16Go
)

func dotF32Go(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func dotF16Go(a []float32, b []uint16) float32 {
	b = b[:len(a)]
	var s float32
	for i, v := range a {
		s += v * kernels.F16ToF32(b[i])
	}
	return s
}

func axpyF32Go(out []float32, w float32, v []float32) {
	v = v[:len(out)]
	for i := range out {
		out[i] += w * v[i]
	}
}

func axpyF16Go(out []float32, w float32, v []uint16) {
	v = v[:len(out)]
	for i := range out {
		out[i] += w * kernels.F16ToF32(v[i])
	}
}
