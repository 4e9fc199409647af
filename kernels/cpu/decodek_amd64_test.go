//go:build amd64 && !purego

package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"llmbench/kernels"
)

// TestHalfRowsMatchX4 checks the one-row-after-another decode kernels (chosen on AMD)
// on any CPU with the AVX-512 half kernels: every row's sum is, bit for bit, the x4
// kernels' (their Go twin), for several row counts and lengths, and nothing past the
// rows is written.
func TestHalfRowsMatchX4(t *testing.T) {
	if level == "go" || level == "avx2" {
		t.Skipf("the row kernels are AVX-512; this CPU runs at level %s", level)
	}
	for typ, asm := range map[kernels.DType]func(int, *byte, int, int, *byte, *float32){
		kernels.F16: dotF16rows, kernels.BF16: dotBF16rows} {
		h, rows := halfKerns[typ], halfRows(asm)
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
				x := make([]byte, 4*n)
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
