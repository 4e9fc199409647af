package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"llmbench/kernels"
)

var halfTypes = []kernels.DType{kernels.F16, kernels.BF16}

// halfPaths are the float paths of type typ the tests check: the one MatMul runs, and
// the float32 BF16 path where the pairs path replaced it (plainBF16).
func halfPaths(typ kernels.DType) []*halfKern {
	if typ == kernels.BF16 && plainBF16 != nil {
		return []*halfKern{halfKerns[typ], plainBF16}
	}
	return []*halfKern{halfKerns[typ]}
}

// checkX4 compares the four-row decode kernel of a 16-bit type (assembly and Go twin)
// with the reference VecDot, and the assembly with the Go twin bit for bit.
func checkX4(t *testing.T, typ kernels.DType, h *halfKern, seed uint64, nb int) {
	t.Helper()
	tr := kernels.TraitsOf(typ)
	n := nb * 32
	rng := rand.New(rand.NewPCG(seed, 11))
	var w []byte
	var wf [][]float32
	for range 4 {
		b, f := randRow(rng, typ, n, float32(math.Ldexp(1, int(seed%7)-3)))
		w = append(w, b...)
		wf = append(wf, f)
	}
	x, xf := randRow(rng, tr.VecDotType, n, 1)
	xp := make([]byte, h.actBytes()*n)
	h.widen(x, xp)
	stride := len(w) / 4
	var tw [4]float32
	h.x4Go(nb, w, stride, xp, &tw)
	check := map[string]func(int, []byte, int, []byte, *[4]float32){"go": h.x4Go}
	if h.x4 != nil {
		check["asm"] = h.x4
	}
	for name, k := range check {
		for _, st := range []int{stride, 0} {
			var got [4]float32
			k(nb, w, st, xp, &got)
			for r := range 4 {
				row := w[r*st : r*st+stride]
				want := tr.VecDot(n, row, x)
				var mag float64
				for i := range xf {
					mag += math.Abs(float64(wf[r*st/stride][i]) * float64(xf[i]))
				}
				if d := math.Abs(float64(got[r] - want)); d > dotBound(mag) || math.IsNaN(float64(got[r])) {
					t.Fatalf("%s %s n=%d stride=%d row %d: %g, reference %g (bound %g)", name, typ, n, st, r, got[r], want, dotBound(mag))
				}
				if st != 0 && math.Float32bits(got[r]) != math.Float32bits(tw[r]) {
					t.Fatalf("%s %s n=%d row %d: %g, Go twin %g", name, typ, n, r, got[r], tw[r])
				}
			}
		}
	}
}

func TestX4Kernels(t *testing.T) {
	for _, typ := range halfTypes {
		for _, h := range halfPaths(typ) {
			for _, nb := range []int{1, 2, 8, 22} {
				for seed := range uint64(4) {
					checkX4(t, typ, h, seed, nb)
				}
			}
		}
	}
}

func FuzzFastF16x4(f *testing.F) {
	f.Add(uint64(1), uint16(3), false)
	f.Fuzz(func(t *testing.T, seed uint64, blocks uint16, bf bool) {
		typ := halfTypes[b2i(bf)]
		for _, h := range halfPaths(typ) {
			checkX4(t, typ, h, seed, int(blocks)%200+1)
		}
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkHalfGemm compares the gemm kernel of a 16-bit type (assembly and Go twin) with
// the reference dot product of each row and token, over full tiles, repeated rows
// (stride 0) and one to four tokens (ntok), and the assembly with the Go twin and the
// x4 kernel bit for bit; the six-token kernel, where there is one, with the Go twin
// for one to six tokens. The pairs kernels take whole steps of 32: an odd n16 is
// rounded up for them.
func checkHalfGemm(t *testing.T, typ kernels.DType, h *halfKern, seed uint64, n16 int) {
	t.Helper()
	if h.pairs {
		n16 += n16 % 2
	}
	n := 16 * n16
	ab := h.actBytes()
	tr := kernels.TraitsOf(typ)
	rng := rand.New(rand.NewPCG(seed, 13))
	var w, xq []byte
	var wf, xf [][]float32
	for i := range 6 { // four rows, six tokens (the six-token kernel's)
		if i < 4 {
			b, f := randRow(rng, typ, n, float32(math.Ldexp(1, int(seed%7)-3)))
			w, wf = append(w, b...), append(wf, f)
		}
		b, f := randRow(rng, typ, n, 1)
		xq, xf = append(xq, b...), append(xf, f)
	}
	x := make([]byte, ab*len(xq)/2)
	h.widen(xq, x)
	kerns := map[string]func(int, []byte, int, []byte, int, int, *[16]float32){"go": h.gemmGo}
	if h.gemm != nil {
		kerns["asm"] = h.gemm
	}
	var twin [16]float32
	h.gemmGo(n16, w, 2*n, x, ab*n, 4, &twin)
	for name, k := range kerns {
		for _, ws := range []int{2 * n, 0} {
			for ntok := 1; ntok <= 4; ntok++ {
				var got [16]float32
				k(n16, w, ws, x, ab*n, ntok, &got)
				for tk := range 4 {
					for r := range h.gr {
						ri, ti := r, min(tk, ntok-1)
						if ws == 0 {
							ri = 0
						}
						want := tr.VecDot(n, w[2*n*ri:2*n*(ri+1)], xq[2*n*ti:2*n*(ti+1)])
						var mag float64
						for i := range n {
							mag += math.Abs(float64(wf[ri][i]) * float64(xf[ti][i]))
						}
						g := got[4*tk+r]
						if d := math.Abs(float64(g - want)); d > dotBound(mag) || math.IsNaN(float64(g)) {
							t.Fatalf("%s %s n=%d wstride %d ntok %d: out[%d][%d] = %g, reference %g", name, typ, n, ws, ntok, tk, r, g, want)
						}
						if math.Float32bits(g) != math.Float32bits(twin[4*ti+ri]) {
							t.Fatalf("%s %s n=%d wstride %d ntok %d: out[%d][%d] = %g, Go twin %g", name, typ, n, ws, ntok, tk, r, g, twin[4*ti+ri])
						}
					}
				}
			}
		}
	}
	if h.gemm6 != nil { // six tokens: each output bit for bit the Go twin's
		for _, ws := range []int{2 * n, 0} {
			for ntok := 1; ntok <= 6; ntok++ {
				// Token t's sums at got[5t:][:4]: the fifth of each and the tokens past
				// ntok keep their marker.
				const os = 5
				got := make([]float32, 6*os)
				marker := float32(math.Inf(-1))
				for i := range got {
					got[i] = marker
				}
				h.gemm6(n16, w, ws, x, ab*n, ntok, got[:(ntok-1)*os+4], os)
				for tk := range 6 {
					for r := range os {
						want := marker
						if tk < ntok && r < 4 {
							ri := r
							if ws == 0 {
								ri = 0
							}
							want = h.dotGo(w[2*n*ri:], x[ab*n*tk:], n)
						}
						if g := got[os*tk+r]; math.Float32bits(g) != math.Float32bits(want) {
							t.Fatalf("gemm6 %s n=%d wstride %d ntok %d: out[%d][%d] = %g, want %g (Go twin, or untouched)", typ, n, ws, ntok, tk, r, g, want)
						}
					}
				}
			}
		}
	}
	if n%32 == 0 { // the one-token kernel sums in the same order
		var one [4]float32
		h.x4Go(n/32, w, 2*n, x, &one)
		for r := range h.gr {
			if math.Float32bits(one[r]) != math.Float32bits(twin[r]) {
				t.Fatalf("%s n=%d row %d: x4 %g, gemm %g", typ, n, r, one[r], twin[r])
			}
		}
	}
}

func TestHalfGemm(t *testing.T) {
	for _, typ := range halfTypes {
		for _, h := range halfPaths(typ) {
			for _, n16 := range []int{1, 2, 16, 128, 352} {
				for seed := range uint64(3) {
					checkHalfGemm(t, typ, h, seed, n16)
				}
			}
		}
	}
}

func FuzzFastF16Gemm(f *testing.F) {
	f.Add(uint64(1), uint16(3), false)
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16, bf bool) {
		typ := halfTypes[b2i(bf)]
		for _, h := range halfPaths(typ) {
			checkHalfGemm(t, typ, h, seed, int(steps)%400+1)
		}
	})
}

// BenchmarkQuantize times the activation conversions of one 4096-element row.
func BenchmarkQuantize(b *testing.B) {
	const n = 4096
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for _, typ := range []kernels.DType{kernels.Q8_0, kernels.Q8_K} {
		tr := kernels.TraitsOf(typ)
		dst := make([]byte, n/tr.BlockSize*tr.BlockBytes)
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(4 * n)
			f := fromFloat(typ, tr)
			for b.Loop() {
				f(x, dst)
			}
		})
	}
}

// quantInput returns n floats of varied magnitude with the awkward cases the
// quantizers must reproduce: exact ties, zero blocks, equal magnitudes of both signs,
// tiny and huge values and (with special) infinities and NaNs.
func quantInput(seed uint64, n int, special bool) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, n)
	scale := math.Ldexp(1, int(seed%40)-20)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * scale)
		switch rng.IntN(16) {
		case 0:
			x[i] = float32(rng.IntN(255)-127) / 2 // ties
		case 1:
			x[i] = 0
		case 2:
			x[i] = -x[max(0, i-1)] // equal magnitude, other sign
		}
	}
	for b := 0; b < n; b += 32 {
		switch rng.IntN(12) {
		case 0:
			clear(x[b : b+32])
		case 1:
			for i := b; i < b+32; i++ {
				x[i] *= 1e-36
			}
		case 2:
			for i := b; i < b+32; i++ {
				x[i] *= 1e30
			}
		case 3:
			if special {
				x[b+rng.IntN(32)] = float32([]float64{math.Inf(1), math.Inf(-1), math.NaN()}[rng.IntN(3)])
			}
		}
	}
	return x
}

// FuzzFastQuantize checks that the fast activation quantizers are byte-identical to
// the references (quantizeQ8_0 is itself checked against the Q8_0 reference).
func FuzzFastQuantize(f *testing.F) {
	f.Add(uint64(1), uint16(4), false)
	f.Add(uint64(7), uint16(9), true)
	f.Fuzz(func(t *testing.T, seed uint64, blocks uint16, special bool) {
		for _, typ := range []kernels.DType{kernels.Q8_0, kernels.Q8_K, kernels.F16} {
			tr := kernels.TraitsOf(typ)
			n := (int(blocks)%32 + 1) * 256
			x := quantInput(seed, n, special)
			want := make([]byte, n/tr.BlockSize*tr.BlockBytes)
			got := make([]byte, len(want))
			ref := tr.FromFloat
			if typ == kernels.Q8_0 {
				ref = quantizeQ8_0 // the reference twin (also the fallback)
				if !special {
					tr.FromFloat(x, want)
					quantizeQ8_0(x, got)
					if string(got) != string(want) {
						t.Fatalf("quantizeQ8_0 differs from the reference")
					}
				}
			}
			ref(x, want)
			fromFloat(typ, tr)(x, got)
			for i := range want {
				if want[i] != got[i] {
					t.Fatalf("%s byte %d (block %d): fast %d, reference %d", typ, i, i/tr.BlockBytes, got[i], want[i])
				}
			}
		}
	})
}

func TestFastQuantize(t *testing.T) {
	for seed := range uint64(60) {
		for _, special := range []bool{false, true} {
			for _, typ := range []kernels.DType{kernels.Q8_0, kernels.Q8_K, kernels.F16} {
				tr := kernels.TraitsOf(typ)
				x := quantInput(seed, 2048, special)
				want := make([]byte, 2048/tr.BlockSize*tr.BlockBytes)
				got := make([]byte, len(want))
				if typ == kernels.Q8_0 {
					quantizeQ8_0(x, want)
				} else {
					tr.FromFloat(x, want)
				}
				fromFloat(typ, tr)(x, got)
				for i := range want {
					if want[i] != got[i] {
						t.Fatalf("%s seed %d special %v byte %d (block %d): fast %d, reference %d", typ, seed, special, i, i/tr.BlockBytes, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestFastF16Convert checks the fp16 conversions on lengths that are not multiples of
// 16, with subnormal, overflowing, infinite and NaN values, against the references.
func TestFastF16Convert(t *testing.T) {
	tr := kernels.TraitsOf(kernels.F16)
	for seed := range uint64(40) {
		n := 256 + int(seed)
		x := quantInput(seed, 512, seed%2 == 1)[:n]
		for i := range x {
			switch i % 29 {
			case 3:
				x[i] = float32(math.Ldexp(float64(x[i]), -20)) // fp16 subnormals and zeros
			case 5:
				x[i] *= 1e5 // fp16 overflow
			}
		}
		want, got := make([]byte, 2*n), make([]byte, 2*n)
		tr.FromFloat(x, want)
		fromFloat(kernels.F16, tr)(x, got)
		if string(got) != string(want) {
			t.Fatalf("seed %d: fast fp16 conversion differs from the reference", seed)
		}
		w32, g32 := make([]byte, 4*n), make([]byte, 4*n)
		prepF16Go(want, w32)
		halfKerns[kernels.F16].widen(want, g32)
		if string(w32) != string(g32) {
			t.Fatalf("seed %d: fast fp16 widening differs from the Go twin", seed)
		}
	}
}
