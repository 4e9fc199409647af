//go:build amd64 && !purego

package cpu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"llmbench/kernels"
)

// TestHalfRowsMatchX4 checks the one-row-after-another decode kernels (chosen on AMD,
// and the pairs kernel wherever the CPU has AVX512-BF16; the F16 and pairs kernels
// also with software prefetch, as AMD Zen 5 takes them) on any CPU with the AVX-512
// half kernels, and their eight-lane twins at level avx2: every row's sum is, bit for
// bit, the Go twin's (the x4 kernels' order, or the pairs order), for several row
// counts and lengths, and nothing past the rows is written.
func TestHalfRowsMatchX4(t *testing.T) {
	if level == "go" {
		t.Skipf("no row kernels at level %s", level)
	}
	plain := halfKerns[kernels.BF16]
	if plainBF16 != nil {
		plain = plainBF16
	}
	type rowsCase struct {
		typ kernels.DType
		h   *halfKern
		asm func(int, *byte, int, int, *byte, *float32)
	}
	cases := []rowsCase{{kernels.F16, halfKerns[kernels.F16], dotF16rows}, {kernels.BF16, plain, dotBF16rows}}
	if level == "avx2" { // the eight-lane twins
		cases = []rowsCase{{kernels.F16, halfKerns[kernels.F16], dotF16rows8}, {kernels.BF16, plain, dotBF16rows8}}
	} else { // with software prefetch too (AMD Zen 5), whichever decode takes
		cases = append(cases, rowsCase{kernels.F16, halfKerns[kernels.F16], dotF16rowsPF})
	}
	if plainBF16 != nil {
		cases = append(cases, rowsCase{kernels.BF16, halfKerns[kernels.BF16], dotBF16dpRows}, rowsCase{kernels.BF16, halfKerns[kernels.BF16], dotBF16dpRowsPF})
	} else {
		t.Log("no AVX512-BF16: the pairs kernel is not checked")
	}
	for _, c := range cases {
		typ, h := c.typ, c.h
		rows := halfRows(c.asm, 32*h.actBytes())
		rng := rand.New(rand.NewPCG(uint64(typ), 17))
		for _, n32 := range []int{0, 1, 3, 64} {
			n := 32 * n32
			for nrows := 1; nrows <= 19; nrows++ {
				var w []byte
				for range nrows {
					b, _ := randRow(rng, typ, n, 0.5)
					w = append(w, b...)
				}
				xq, _ := randRow(rng, typ, n, 1)
				x := make([]byte, h.actBytes()*n)
				h.widen(xq, x)
				out := make([]float32, nrows+1)
				out[nrows] = 42
				rows(n32, w, 2*n, nrows, x, out)
				for r := range nrows {
					want := float32(0)
					if n > 0 {
						want = h.dotGo(w[r*2*n:], x, n)
					}
					if math.Float32bits(out[r]) != math.Float32bits(want) {
						t.Fatalf("%s, %d elements, %d rows: row %d = %g, the x4 order gives %g", typ, n, nrows, r, out[r], want)
					}
				}
				if out[nrows] != 42 {
					t.Fatalf("%s, %d rows: wrote past the rows", typ, nrows)
				}
			}
		}
	}
}

// TestPairsDenormals checks the pairs kernel against dotPairsGo where VDPBF16PS's
// denormal rule decides the result: denormal weights and activations, products and
// sums that underflow, and a sum that only a flushed denormal keeps from changing.
func TestPairsDenormals(t *testing.T) {
	if plainBF16 == nil {
		t.Skip("no AVX512-BF16 on this CPU (or level below avx512)")
	}
	h := halfKerns[kernels.BF16]
	rows := halfRows(dotBF16dpRows, 64)
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 128
	// Weights near the smallest normal (2^-126) or denormal, activations near one or
	// denormal: products land on both sides of the denormal boundary and the sums,
	// with random signs, keep crossing it.
	wv := []uint16{0x0001, 0x0040, 0x007f, 0x0080, 0x00c0, 0x0100, 0x0000}
	xv := []uint16{0x3e80, 0x3f00, 0x3f80, 0x3fc0, 0x4000, 0x007f, 0x0001}
	for trial := range 500 {
		w, x := make([]byte, 2*n), make([]byte, 2*n)
		for i := range n {
			binary.LittleEndian.PutUint16(w[2*i:], wv[rng.IntN(len(wv))]|uint16(rng.IntN(2))<<15)
			binary.LittleEndian.PutUint16(x[2*i:], xv[rng.IntN(len(xv))])
		}
		out := make([]float32, 1)
		rows(n/32, w, 2*n, 1, x, out)
		if want := h.dotGo(w, x, n); math.Float32bits(out[0]) != math.Float32bits(want) {
			t.Fatalf("trial %d: kernel %g (%#x), dotPairsGo %g (%#x)", trial, out[0], math.Float32bits(out[0]), want, math.Float32bits(want))
		}
	}
}
