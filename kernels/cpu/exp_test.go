package cpu

import (
	"math"
	"testing"
)

// TestExp32 compares exp32 with float64 math.Exp over float32 inputs across the
// whole range where e^x is a float32 (every 61st bit pattern, both signs; every 601st
// with -short) and the
// edge cases: the relative error stays within exp32MaxRelErr where e^x is normal, and
// within one subnormal step below; 0, +Inf and NaN where they belong.
func TestExp32(t *testing.T) {
	minNormal := math.Float32frombits(1 << 23)
	var worst float64
	var worstX float32
	check := func(x float32) {
		got := exp32(x)
		want := math.Exp(float64(x))
		switch {
		case math.IsNaN(float64(x)):
			if got == got {
				t.Fatalf("exp32(NaN) = %g", got)
			}
		case want > math.MaxFloat32:
			if !math.IsInf(float64(got), 1) {
				t.Fatalf("exp32(%g) = %g, want +Inf", x, got)
			}
		case want < float64(minNormal):
			// subnormal results: within one step of the smallest subnormal
			if d := math.Abs(float64(got) - want); d > 0x1p-149 {
				t.Fatalf("exp32(%g) = %g, want %g (subnormal)", x, got, want)
			}
		default:
			if r := math.Abs(float64(got)-want) / want; r > worst {
				worst, worstX = r, x
			}
		}
	}
	for _, x := range []float32{0, -0, 1, -1, expHi, expLo, 88.7, 88.73, 89, -87.3, -88, -103, -104, -110, 1e-10, -1e-10,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, -math.MaxFloat32} {
		check(x)
	}
	stride := uint32(61)
	if testing.Short() {
		stride = 601
	}
	for b := uint32(0); b < 0x7f800000; b += stride {
		x := math.Float32frombits(b)
		if x > 90 {
			break
		}
		check(x)
		if -x < -110 {
			continue
		}
		check(-x)
	}
	t.Logf("largest relative error %.3g (%.2f ulp of 2^-23) at x = %g", worst, worst/0x1p-23, worstX)
	if worst > exp32MaxRelErr {
		t.Fatalf("relative error %g at x = %g, above the stated bound %g", worst, worstX, exp32MaxRelErr)
	}
	if exp32(float32(math.Inf(-1))) != 0 || !math.IsInf(float64(exp32(float32(math.Inf(1)))), 1) {
		t.Fatal("exp32(±Inf) wrong")
	}
}

// swigluRef is SwiGLU with the float64 math.Exp, the reference swiglu is checked
// against (and measured against in BenchmarkSwiGLU).
func swigluRef(dst, gate, up []float32) {
	for i, g := range gate {
		dst[i] = g / (1 + float32(math.Exp(float64(-g)))) * up[i]
	}
}

// TestSwiGLU checks swiglu against swigluRef: within four float32 ulp of the result
// (exp32's bound plus the division's and product's roundings), the same zeros, infinities
// and NaNs, over gates from −200 to 200 and the special values.
func TestSwiGLU(t *testing.T) {
	var gate []float32
	for g := float32(-200); g <= 200; g += 0.0137 {
		gate = append(gate, g)
	}
	gate = append(gate, 0, float32(math.Copysign(0, -1)), 88.7, -88.7, 104, -104, 1e30, -1e30,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
	up := make([]float32, len(gate))
	for i := range up {
		up[i] = float32(i%7) - 2.5
	}
	got, want := make([]float32, len(gate)), make([]float32, len(gate))
	c := New(2)
	defer c.Close()
	c.SwiGLU(got, gate, up)
	swigluRef(want, gate, up)
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(w) || math.IsInf(w, 0) || w == 0 {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(math.IsNaN(g) && math.IsNaN(w)) {
				t.Fatalf("gate %g up %g: %g, reference %g", gate[i], up[i], g, w)
			}
			continue
		}
		if math.Abs(g-w) > 4*0x1p-23*math.Abs(w) {
			t.Fatalf("gate %g up %g: %g, reference %g (relative error %.3g)", gate[i], up[i], g, w, math.Abs(g-w)/math.Abs(w))
		}
	}
}

// TestSwiGLUTwin checks that swiglu (the assembly kernel where there is one) gives
// swigluGo's bits for every float32 gate from −120 to 120 at a stride, the special
// values and lengths that leave a tail.
func TestSwiGLUTwin(t *testing.T) {
	var gate []float32
	for b := uint32(0); b < 0x42f00000; b += 997 { // |g| < 120
		g := math.Float32frombits(b)
		gate = append(gate, g, -g)
	}
	gate = append(gate, 104, -104, 88.72284, -88.72284, 103.97, -103.97, 1e30, -1e30,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 7)
	up := make([]float32, len(gate))
	for i := range up {
		up[i] = float32(i%5) - 1.5
	}
	for _, n := range []int{len(gate), len(gate) - 1, 15, 17, 1, 0} {
		got, want := make([]float32, n), make([]float32, n)
		swiglu(got, gate[len(gate)-n:], up[:n])
		swigluGo(want, gate[len(gate)-n:], up[:n])
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("n=%d gate %g: %g (%#x), twin %g (%#x)", n, gate[len(gate)-n+i], got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
}

// BenchmarkSwiGLU measures swiglu (exp32) against swigluRef (float64 math.Exp) on a
// decode step's worth of llama-1b's FFN (5632 values) on one thread.
func BenchmarkSwiGLU(b *testing.B) {
	const n = 5632
	gate, up, dst := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range gate {
		gate[i] = float32(i%97)/8 - 6
		up[i] = 1
	}
	for _, k := range []struct {
		name string
		fn   func(dst, gate, up []float32)
	}{{"swiglu", swiglu}, {"go", swigluGo}, {"math.Exp", swigluRef}} {
		b.Run(k.name, func(b *testing.B) {
			b.SetBytes(8 * n)
			for b.Loop() {
				k.fn(dst, gate, up)
			}
		})
	}
}

// FuzzSwiGLU checks swiglu (the assembly kernel where there is one) against swigluGo
// bit for bit, and exp32 against math.Exp within exp32MaxRelErr, on arbitrary float32
// bit patterns: sixteen gates (one kernel step) plus a tail of one.
func FuzzSwiGLU(f *testing.F) {
	f.Add(uint32(0x3f800000), uint32(0xc2c80000), uint32(0x7fc00000))
	f.Add(uint32(0x42b17218), uint32(0xc2cff1b5), uint32(0x00000001))
	f.Fuzz(func(t *testing.T, a, b, c uint32) {
		gate := make([]float32, 17)
		up := make([]float32, 17)
		for i := range gate {
			gate[i] = math.Float32frombits(a + uint32(i)*b)
			up[i] = math.Float32frombits(c ^ uint32(i))
		}
		got, want := make([]float32, 17), make([]float32, 17)
		swiglu(got, gate, up)
		swigluGo(want, gate, up)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("gate %g up %g: %g, twin %g", gate[i], up[i], got[i], want[i])
			}
		}
		x := math.Float32frombits(a)
		e, w := float64(exp32(x)), math.Exp(float64(x))
		if w >= 0x1p-126 && w <= math.MaxFloat32 && math.Abs(e-w) > exp32MaxRelErr*w {
			t.Fatalf("exp32(%g) = %g, math.Exp %g", x, e, w)
		}
	})
}
