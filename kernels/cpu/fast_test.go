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

// checkDot compares fastDots[typ] with the reference VecDot on n elements, and
// fastDotRows[typ] and fastDotsN[typ], where there are, with fastDots bit for bit
// on three weight rows and on one to five activation rows.
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
	if rows := fastDotRows[typ]; rows != nil {
		// Three rows, a gap between them, against x: each output bit for bit fastDots'.
		gap := make([]byte, 4*typ.BlockBytes())
		ws, wrs := append([]byte(nil), w...), [][]byte{w}
		for range 2 {
			r, _ := randRow(rng, typ, n, 1)
			ws = append(append(ws, gap...), r...)
			wrs = append(wrs, r)
		}
		dst := []float32{-7, -7, -7, -7}
		rows(n, ws, len(w)+len(gap), 3, x, dst)
		for r, wr := range wrs {
			if want := fast(n, wr, x); math.Float32bits(dst[r]) != math.Float32bits(want) {
				t.Fatalf("%s n=%d seed=%d: rows kernel row %d: %g, one row at a time %g", typ, n, seed, r, dst[r], want)
			}
		}
		if dst[3] != -7 {
			t.Fatalf("%s n=%d seed=%d: rows kernel wrote past its rows", typ, n, seed)
		}
	}
	if fastN := fastDotsN[typ]; fastN != nil {
		// One to five tokens, a gap between their rows (the stride is not the row's
		// length), outputs three apart with sentinels between.
		gap := make([]byte, 4*tr.VecDotType.BlockBytes())
		var xs []byte
		var rows [][]byte
		for range 5 {
			r, _ := randRow(rng, tr.VecDotType, n, 1)
			rows = append(rows, r)
			xs = append(append(xs, r...), gap...)
		}
		stride := len(rows[0]) + len(gap)
		for ntok := 1; ntok <= 5; ntok++ {
			dst := make([]float32, 3*ntok)
			for i := range dst {
				dst[i] = -7
			}
			fastN(n, w, xs, stride, ntok, dst, 3)
			for i := range dst {
				if i%3 != 0 {
					if dst[i] != -7 {
						t.Fatalf("%s n=%d seed=%d: %d tokens wrote dst[%d]", typ, n, seed, ntok, i)
					}
					continue
				}
				if want := fast(n, w, rows[i/3]); math.Float32bits(dst[i]) != math.Float32bits(want) {
					t.Fatalf("%s n=%d seed=%d: token %d of %d: %g, one token at a time %g", typ, n, seed, i/3, ntok, dst[i], want)
				}
			}
		}
	}
}

// dotTypes are the weight types the MatMul tests run over.
var dotTypes = []kernels.DType{kernels.Q4_0, kernels.Q4_1, kernels.Q5_0, kernels.Q5_1, kernels.Q8_0, kernels.Q2_K, kernels.Q3_K, kernels.Q4_K, kernels.Q5_K, kernels.Q6_K, kernels.F16, kernels.F32, kernels.BF16, kernels.IQ4_NL, kernels.IQ4_XS, kernels.MXFP4}

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

func FuzzFastIQ4_NL(f *testing.F) { fuzzDot(f, kernels.IQ4_NL) }
func FuzzFastIQ4_XS(f *testing.F) { fuzzDot(f, kernels.IQ4_XS) }
func FuzzFastMXFP4(f *testing.F)  { fuzzDot(f, kernels.MXFP4) }

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
