package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"llmbench/kernels"
)

// randRow returns n float32 values of mixed magnitude, quantized to typ's bytes.
func randRow(rng *rand.Rand, typ kernels.DType, n int, scale float32) ([]byte, []float32) {
	tr := kernels.TraitsOf(typ)
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64()) * scale
	}
	if typ == kernels.F32 {
		return append([]byte(nil), f32Bytes(x)...), x
	}
	b := make([]byte, n/tr.BlockSize*tr.BlockBytes)
	tr.FromFloat(x, b)
	tr.ToFloat(b, x)
	return b, x
}

// dotBound is the tolerance of a fast dot product: float rounding of a sum whose
// terms total mag in absolute value.
func dotBound(mag float64) float64 { return 2e-5*mag + 1e-6 }

// checkDot compares fastDots[typ] with the reference VecDot on n elements.
func checkDot(t *testing.T, typ kernels.DType, seed uint64, n int) {
	t.Helper()
	fast := fastDots[typ]
	if fast == nil {
		t.Skipf("no fast %s dot on this CPU (%s)", typ, level)
	}
	tr := kernels.TraitsOf(typ)
	rng := rand.New(rand.NewPCG(seed, 7))
	w, wf := randRow(rng, typ, n, float32(math.Ldexp(1, int(seed%7)-3)))
	x, xf := randRow(rng, tr.VecDotType, n, 1)
	var mag float64
	for i := range wf {
		mag += math.Abs(float64(wf[i]) * float64(xf[i]))
	}
	want := tr.VecDot(n, w, x)
	got := fast(n, w, x)
	if d := math.Abs(float64(got - want)); d > dotBound(mag) || math.IsNaN(float64(got)) {
		t.Fatalf("%s n=%d seed=%d: fast %g, reference %g (|Δ| %g, bound %g)", typ, n, seed, got, want, d, dotBound(mag))
	}
}

var dotTypes = []kernels.DType{kernels.Q4_0, kernels.Q8_0, kernels.Q4_K, kernels.Q6_K, kernels.F16, kernels.F32}

func TestFastDots(t *testing.T) {
	for _, typ := range dotTypes {
		t.Run(typ.String(), func(t *testing.T) {
			bs := typ.BlockSize()
			for _, n := range []int{256, 512, 2048, 5632, 256 * 3} {
				if typ == kernels.F32 || typ == kernels.F16 {
					checkDot(t, typ, uint64(n), n+7)
				}
				if n%bs == 0 {
					for seed := range uint64(4) {
						checkDot(t, typ, seed, n)
					}
				}
			}
		})
	}
}

func fuzzDot(f *testing.F, typ kernels.DType) {
	f.Add(uint64(1), uint16(8))
	f.Add(uint64(2), uint16(1))
	f.Fuzz(func(t *testing.T, seed uint64, blocks uint16) {
		n := (int(blocks)%64 + 1) * typ.BlockSize()
		if typ.BlockSize() == 1 {
			n = int(blocks) % 3000
		}
		checkDot(t, typ, seed, n)
	})
}

func FuzzFastQ4_0(f *testing.F) { fuzzDot(f, kernels.Q4_0) }
func FuzzFastQ8_0(f *testing.F) { fuzzDot(f, kernels.Q8_0) }
func FuzzFastQ4_K(f *testing.F) { fuzzDot(f, kernels.Q4_K) }
func FuzzFastQ6_K(f *testing.F) { fuzzDot(f, kernels.Q6_K) }
func FuzzFastF16(f *testing.F)  { fuzzDot(f, kernels.F16) }
func FuzzFastF32(f *testing.F)  { fuzzDot(f, kernels.F32) }

// checkMatMul compares the backend's MatMul (any path) with reference dot products.
func checkMatMul(t *testing.T, c *CPU, typ kernels.DType, seed uint64, rows, cols, n int) {
	t.Helper()
	tr := kernels.TraitsOf(typ)
	vt := kernels.TraitsOf(tr.VecDotType)
	rng := rand.New(rand.NewPCG(seed, 9))
	w := &kernels.Matrix{Type: typ, Rows: rows, Cols: cols}
	var wf []float32
	for range rows {
		b, f := randRow(rng, typ, cols, 0.5)
		w.Data = append(w.Data, b...)
		wf = append(wf, f...)
	}
	x := make([]float32, n*cols)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	dst := make([]float32, n*rows)
	c.MatMul(dst, w, x, n)
	xRow := cols / vt.BlockSize * vt.BlockBytes
	xq := make([]byte, xRow)
	xf := make([]float32, cols)
	wRow := len(w.Data) / rows
	for i := range n {
		if tr.VecDotType == kernels.F32 {
			xq = append(xq[:0], f32Bytes(x[i*cols:(i+1)*cols])...)
			copy(xf, x[i*cols:])
		} else {
			vt.FromFloat(x[i*cols:(i+1)*cols], xq)
			vt.ToFloat(xq, xf)
		}
		for r := range rows {
			want := tr.VecDot(cols, w.Data[r*wRow:(r+1)*wRow], xq)
			var mag float64
			for j := range cols {
				mag += math.Abs(float64(wf[r*cols+j]) * float64(xf[j]))
			}
			if got := dst[i*rows+r]; math.Abs(float64(got-want)) > dotBound(mag) {
				t.Fatalf("%s %dx%d n=%d: out[%d][%d] = %g, reference %g", typ, rows, cols, n, i, r, got, want)
			}
		}
	}
}

func TestMatMulPaths(t *testing.T) {
	for _, threads := range []int{1, 3} {
		c := New(threads)
		for _, typ := range dotTypes {
			for _, sh := range [][3]int{{16, 256, 4}, {20, 512, 9}, {7, 256, 1}, {33, 768, 5}, {16, 256, 2}} {
				checkMatMul(t, c, typ, uint64(sh[0]*sh[2]), sh[0], sh[1], sh[2])
			}
		}
		c.Close()
	}
}

// TestGemmTwin checks that the assembly gemm kernel and its pure-Go twin agree.
func TestGemmTwin(t *testing.T) {
	if gemmFast == nil {
		t.Skip("no assembly gemm on this CPU")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, chunks := range []int{4, 8} {
		for _, withMin := range []bool{false, true} {
			nb := 5
			pack := make([]byte, nb*chunks*64)
			act := make([]byte, nb*(16*chunks+48))
			ws, wm := make([]float32, nb*16), make([]float32, nb*16)
			for i := range pack {
				pack[i] = byte(rng.IntN(256))
			}
			for i := range act {
				act[i] = byte(rng.IntN(256))
			}
			for b := range nb { // sane floats in the activation tails
				tail := act[b*(16*chunks+48)+16*chunks:]
				for k := range 4 {
					putF32(tail[4*k:], float32(rng.NormFloat64()))
					putF32(tail[32+4*k:], float32(rng.NormFloat64()))
					tail[16+4*k+2], tail[16+4*k+3] = 0, 0
				}
			}
			for i := range ws {
				ws[i], wm[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			}
			var m []float32
			if withMin {
				m = wm
			}
			var a, b [64]float32
			gemmFast(nb, chunks, pack, ws, m, act, &a)
			gemmGo(nb, chunks, pack, ws, m, act, &b)
			for i := range a {
				if math.Abs(float64(a[i]-b[i])) > 1e-6*math.Abs(float64(b[i]))+1e-6 {
					t.Fatalf("chunks=%d min=%v: out[%d] asm %g, Go %g", chunks, withMin, i, a[i], b[i])
				}
			}
		}
	}
}

func putF32(b []byte, v float32) {
	u := math.Float32bits(v)
	b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
}

// FuzzFastQuantizeQ8_0 checks that the fast activation quantizer is bit-identical to
// the reference.
func FuzzFastQuantizeQ8_0(f *testing.F) {
	f.Add(uint64(1), uint16(4))
	f.Fuzz(func(t *testing.T, seed uint64, blocks uint16) {
		n := (int(blocks)%64 + 1) * 32
		rng := rand.New(rand.NewPCG(seed, 1))
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * math.Ldexp(1, int(seed%20)-10))
			if i%13 == 0 {
				x[i] = float32(rng.IntN(255)-127) / 2 // exact ties
			}
		}
		want := make([]byte, n/32*34)
		got := make([]byte, len(want))
		kernels.TraitsOf(kernels.Q8_0).FromFloat(x, want)
		quantizeQ8_0(x, got)
		for i := range want {
			if want[i] != got[i] {
				t.Fatalf("byte %d: fast %d, reference %d", i, got[i], want[i])
			}
		}
	})
}

// FuzzFastQ4_0Sums checks the Q4_0 kernel that takes precomputed activation sums.
func FuzzFastQ4_0Sums(f *testing.F) {
	if q40Sums == nil {
		f.Skip("no q40Sums kernel on this CPU")
	}
	f.Add(uint64(1), uint16(8))
	f.Add(uint64(3), uint16(0))
	f.Fuzz(func(t *testing.T, seed uint64, blocks uint16) {
		n := (int(blocks)%64 + 1) * 32
		rng := rand.New(rand.NewPCG(seed, 7))
		w, wf := randRow(rng, kernels.Q4_0, n, 1)
		x, xf := randRow(rng, kernels.Q8_0, n, 1)
		ys := make([]float32, n/32)
		q8Sums(x, ys)
		var mag float64
		for i := range wf {
			mag += math.Abs(float64(wf[i]) * float64(xf[i]))
		}
		want := kernels.TraitsOf(kernels.Q4_0).VecDot(n, w, x)
		if got := q40Sums(n, w, x, ys); math.Abs(float64(got-want)) > dotBound(mag) {
			t.Fatalf("n=%d: fast %g, reference %g", n, got, want)
		}
	})
}

// checkQ40x4 compares a four-row Q4_0 kernel (assembly or its Go twin) with the
// reference VecDot, and with the Go twin.
func checkQ40x4(t *testing.T, seed uint64, ng int) {
	t.Helper()
	n := ng * 128
	rng := rand.New(rand.NewPCG(seed, 11))
	var w []byte
	var wf [][]float32
	for range 4 {
		b, f := randRow(rng, kernels.Q4_0, n, float32(math.Ldexp(1, int(seed%7)-3)))
		w = append(w, b...)
		wf = append(wf, f)
	}
	x, xf := randRow(rng, kernels.Q8_0, n, 1)
	xp := make([]byte, ng*q40x4Group)
	prepQ40x4(x, xp)
	stride := len(w) / 4
	var twin [4]float32
	q40x4Go(ng, w, stride, xp, &twin)
	kernelsToCheck := map[string]func(int, []byte, int, []byte, *[4]float32){"go": q40x4Go}
	if q40x4 != nil {
		kernelsToCheck["asm"] = q40x4
	}
	for name, k := range kernelsToCheck {
		var got [4]float32
		k(ng, w, stride, xp, &got)
		for r := range 4 {
			want := kernels.TraitsOf(kernels.Q4_0).VecDot(n, w[r*stride:(r+1)*stride], x)
			var mag float64
			for i := range xf {
				mag += math.Abs(float64(wf[r][i]) * float64(xf[i]))
			}
			if d := math.Abs(float64(got[r] - want)); d > dotBound(mag) || math.IsNaN(float64(got[r])) {
				t.Fatalf("%s n=%d row %d: %g, reference %g (bound %g)", name, n, r, got[r], want, dotBound(mag))
			}
			if d := math.Abs(float64(got[r] - twin[r])); d > 1e-6*mag+1e-7 {
				t.Fatalf("%s n=%d row %d: %g, Go twin %g", name, n, r, got[r], twin[r])
			}
		}
	}
}

func TestQ40x4(t *testing.T) {
	for _, ng := range []int{1, 2, 16, 44} {
		for seed := range uint64(4) {
			checkQ40x4(t, seed, ng)
		}
	}
}

func FuzzFastQ4_0x4(f *testing.F) {
	f.Add(uint64(1), uint16(3))
	f.Fuzz(func(t *testing.T, seed uint64, groups uint16) {
		checkQ40x4(t, seed, int(groups)%48+1)
	})
}

// TestMatVecThreadIndependent checks that one-token products give bit-identical
// results for any number of threads (bands and four-row groups fall differently).
func TestMatVecThreadIndependent(t *testing.T) {
	for _, typ := range dotTypes {
		w := benchMatrix(typ, 37, 512)
		x := make([]float32, 512)
		for i := range x {
			x[i] = float32(i%11) - 5
		}
		var first []float32
		for _, threads := range []int{1, 2, 3} {
			c := New(threads)
			dst := make([]float32, 37)
			c.MatMul(dst, w, x, 1)
			c.Close()
			if first == nil {
				first = dst
				continue
			}
			for i := range dst {
				if math.Float32bits(dst[i]) != math.Float32bits(first[i]) {
					t.Fatalf("%s threads=%d: row %d = %g, with one thread %g", typ, threads, i, dst[i], first[i])
				}
			}
		}
	}
}
