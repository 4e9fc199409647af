package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// roundTripBounds is the documented quantize→dequantize error of each format: the
// relative RMSE sqrt(Σ(x-x̂)²/Σx²) on Gaussian data, worst over 20 seeded rows of
// 4096 values at each of two scales (σ = 0.02 and σ = 1), must stay at or below
// the bound. For F16 and BF16 the bounds are the formats' worst-case relative
// rounding errors (2⁻¹¹ and 2⁻⁸); for the block formats they are the measured
// worst case plus a margin of about 10% (measured: Q4_0 0.088, Q4_1 0.081,
// Q5_0 0.044, Q5_1 0.039, Q8_0 0.0055, Q2_K 0.302, Q3_K 0.154, Q4_K 0.073,
// Q5_K 0.037, Q6_K 0.018, Q8_1 0.0055, Q8_K 0.0074, IQ4_NL 0.0794, IQ4_XS 0.0782,
// MXFP4 0.1179).
var roundTripBounds = []struct {
	t     DType
	bound float64
}{
	{F32, 0},
	{F16, 0x1p-11},
	{BF16, 0x1p-8},
	{Q8_0, 0.0062},
	{Q8_1, 0.0062},
	{Q8_K, 0.0082},
	{Q4_0, 0.097},
	{Q4_1, 0.089},
	{Q5_0, 0.049},
	{Q5_1, 0.043},
	{Q2_K, 0.33},
	{Q3_K, 0.17},
	{Q4_K, 0.080},
	{Q5_K, 0.041},
	{Q6_K, 0.020},
	{IQ4_NL, 0.087},
	{IQ4_XS, 0.086},
	{MXFP4, 0.130},
}

func TestRoundTripError(t *testing.T) {
	for _, tc := range roundTripBounds {
		t.Run(tc.t.String(), func(t *testing.T) {
			worst := 0.0
			for _, sigma := range []float64{0.02, 1} {
				for seed := uint64(0); seed < 20; seed++ {
					rng := rand.New(rand.NewPCG(seed, uint64(tc.t)))
					x := gaussian(rng, 4096, sigma)
					y := dequantize(tc.t, quantize(t, tc.t, x), len(x))
					worst = max(worst, relRMSE(x, y))
				}
			}
			if worst > tc.bound {
				t.Errorf("relative RMSE %.5f exceeds the documented bound %.5f", worst, tc.bound)
			}
			t.Logf("worst relative RMSE %.5f (bound %.5f)", worst, tc.bound)
		})
	}
}

// TestQuantizeSpecialBlocks checks degenerate inputs: all zeros, a constant, one
// spike, and tiny values must all come back finite and, where exact, exact.
func TestQuantizeSpecialBlocks(t *testing.T) {
	n := 512
	spike := make([]float32, n)
	spike[77] = -3
	constant := make([]float32, n)
	for i := range constant {
		constant[i] = 0.75
	}
	tiny := gaussian(rand.New(rand.NewPCG(3, 3)), n, 1e-20)
	for _, ty := range append(weightTypes, Q8_1, Q8_K) {
		for _, tc := range []struct {
			name  string
			x     []float32
			exact bool
		}{
			{"zeros", make([]float32, n), true},
			{"constant", constant, ty == F32 || ty == F16 || ty == BF16 || ty == Q4_0 || ty == Q4_1 || ty == Q5_0 || ty == Q5_1},
			{"spike", spike, false},
			{"tiny", tiny, false},
		} {
			y := dequantize(ty, quantize(t, ty, tc.x), n)
			for i, v := range y {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("%s/%s: element %d is %v", ty, tc.name, i, v)
				}
				if tc.exact && v != tc.x[i] {
					t.Fatalf("%s/%s: element %d = %v, want %v", ty, tc.name, i, v, tc.x[i])
				}
			}
			if tc.name == "spike" {
				if d := math.Abs(float64(y[77] + 3)); d > 0.05 {
					t.Errorf("%s/spike: the spike came back as %v", ty, y[77])
				}
			}
		}
	}
}

func TestTraitsFilled(t *testing.T) {
	wantDot := map[DType]DType{
		F32: F32, F16: F16, BF16: BF16,
		Q4_0: Q8_0, Q5_0: Q8_0, Q8_0: Q8_0, Q4_1: Q8_1, Q5_1: Q8_1,
		Q2_K: Q8_K, Q3_K: Q8_K, Q4_K: Q8_K, Q5_K: Q8_K, Q6_K: Q8_K,
		IQ4_NL: Q8_0, IQ4_XS: Q8_K, MXFP4: Q8_0,
	}
	for _, ty := range append(weightTypes, Q8_1, Q8_K) {
		tr := TraitsOf(ty)
		if tr.ToFloat == nil || tr.FromFloat == nil {
			t.Errorf("%s: ToFloat or FromFloat missing", ty)
		}
		if want, ok := wantDot[ty]; ok {
			if tr.VecDot == nil || tr.VecDotType != want {
				t.Errorf("%s: VecDot %v, VecDotType %s; want a VecDot with %s", ty, tr.VecDot != nil, tr.VecDotType, want)
			}
		}
	}
}

func TestVecDotMatchesReference(t *testing.T) {
	for _, ty := range weightTypes {
		tr := TraitsOf(ty)
		for _, blocks := range []int{1, 3, 16} {
			n := blocks * max(tr.BlockSize, 256)
			if tr.BlockSize == 1 {
				n += 5 // a tail that is not a multiple of the eight lanes
			}
			t.Run(fmt.Sprintf("%s/n=%d", ty, n), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(n), uint64(ty)))
				wf := gaussian(rng, n, 0.05)
				xf := gaussian(rng, n, 1)
				for i := range wf { // an offset so that the mins matter
					wf[i] += 0.01
				}
				w := quantize(t, ty, wf)
				x := quantize(t, tr.VecDotType, xf)
				got := tr.VecDot(n, w, x)
				ref, tol, extra := refDot(ty, w, x, n)
				if d := math.Abs(float64(got) - ref); d > tol+extra {
					t.Fatalf("VecDot = %v, reference %v: |diff| %g > tolerance %g+%g", got, ref, d, tol, extra)
				}
				// The tolerance must be meaningful: far below the size of the terms
				// (Q8_1's fp16 block sums cost up to about 2e-3 of it).
				var scale float64
				for i := range wf {
					scale += math.Abs(float64(wf[i]) * float64(xf[i]))
				}
				if tol > 1e-4*scale || extra > 2e-3*scale {
					t.Errorf("tolerance %g+%g is loose against Σ|w·x| = %g", tol, extra, scale)
				}
			})
		}
	}
}

// TestVecDotUnaligned checks the in-place float views' fallbacks: data at odd
// addresses must give the same result.
func TestVecDotUnaligned(t *testing.T) {
	for _, ty := range []DType{F32, F16, BF16} {
		tr := TraitsOf(ty)
		n := 77
		rng := rand.New(rand.NewPCG(5, 5))
		w := quantize(t, ty, gaussian(rng, n, 1))
		x := quantize(t, ty, gaussian(rng, n, 1))
		want := tr.VecDot(n, w, x)
		wu := append(make([]byte, 1, len(w)+1), w...)[1:]
		xu := append(make([]byte, 3, len(x)+3), x...)[3:]
		if got := tr.VecDot(n, wu, xu); got != want {
			t.Errorf("%s: unaligned VecDot = %v, aligned %v", ty, got, want)
		}
		y := make([]float32, n)
		tr.ToFloat(wu, y)
		if !equalF32(y, dequantize(ty, w, n)) {
			t.Errorf("%s: unaligned ToFloat differs", ty)
		}
		back := make([]byte, len(w)+1)
		tr.FromFloat(y, back[1:])
		if string(back[1:]) != string(w) {
			t.Errorf("%s: unaligned FromFloat differs", ty)
		}
	}
}

func equalF32(a, b []float32) bool {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

func TestNoAllocations(t *testing.T) {
	for _, ty := range weightTypes {
		tr := TraitsOf(ty)
		n := 512
		rng := rand.New(rand.NewPCG(1, 1))
		xf := gaussian(rng, n, 1)
		w := quantize(t, ty, xf)
		x := quantize(t, tr.VecDotType, xf)
		y := make([]float32, n)
		if a := testing.AllocsPerRun(10, func() { tr.VecDot(n, w, x) }); a != 0 {
			t.Errorf("%s: VecDot allocates %v times", ty, a)
		}
		if a := testing.AllocsPerRun(10, func() { tr.ToFloat(w, y) }); a != 0 {
			t.Errorf("%s: ToFloat allocates %v times", ty, a)
		}
		if a := testing.AllocsPerRun(10, func() { tr.FromFloat(xf, w) }); a != 0 {
			t.Errorf("%s: FromFloat allocates %v times", ty, a)
		}
	}
}

// mustPanic runs f and reports whether it panicked with a message containing want.
func mustPanic(t *testing.T, name, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s: no panic", name)
			return
		}
		if msg := fmt.Sprint(r); !strings.Contains(msg, want) {
			t.Errorf("%s: panic %q, want it to mention %q", name, msg, want)
		}
	}()
	f()
}

func TestSadPaths(t *testing.T) {
	for _, ty := range append(weightTypes, Q8_1, Q8_K) {
		tr := TraitsOf(ty)
		bs, bb := tr.BlockSize, tr.BlockBytes
		n := 2 * max(bs, 32)
		nbytes, _ := ty.RowBytes(n)
		t.Run(ty.String(), func(t *testing.T) {
			mustPanic(t, "ToFloat short source", "source", func() {
				tr.ToFloat(make([]byte, nbytes-1), make([]float32, n))
			})
			mustPanic(t, "FromFloat short destination", "destination", func() {
				tr.FromFloat(make([]float32, n), make([]byte, nbytes-1))
			})
			if bs > 1 {
				mustPanic(t, "ToFloat partial block", "multiple of the block size", func() {
					tr.ToFloat(make([]byte, nbytes), make([]float32, n-1))
				})
				mustPanic(t, "FromFloat partial block", "multiple of the block size", func() {
					tr.FromFloat(make([]float32, n-1), make([]byte, nbytes))
				})
			}
			if tr.VecDot == nil {
				return
			}
			xbytes, _ := tr.VecDotType.RowBytes(n)
			if bs > 1 {
				mustPanic(t, "VecDot partial block", "multiple of the block size", func() {
					tr.VecDot(n-1, make([]byte, nbytes), make([]byte, xbytes))
				})
			}
			mustPanic(t, "VecDot short weights", "weights", func() {
				tr.VecDot(n, make([]byte, nbytes-bb), make([]byte, xbytes))
			})
			mustPanic(t, "VecDot short activations", "activations", func() {
				tr.VecDot(n, make([]byte, nbytes), make([]byte, xbytes-1))
			})
			if got := tr.VecDot(0, nil, nil); got != 0 {
				t.Errorf("VecDot of nothing = %v", got)
			}
		})
	}
}
