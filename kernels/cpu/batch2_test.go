package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"llmbench/kernels"
)

// checkBatch2 compares the AVX2 batched kernel of typ (where the CPU runs it) and its
// Go twin with the reference dot product of each row and token, over two rows and a
// repeated row (stride 0) and one to four tokens (the outputs of tokens past ntok are
// not compared), and the kernel with the twin bit for bit.
func checkBatch2(t *testing.T, typ kernels.DType, seed uint64, nb int) {
	t.Helper()
	n := 32 * nb
	tr := kernels.TraitsOf(typ)
	rng := rand.New(rand.NewPCG(seed, 17))
	var w, xq []byte
	var wf, xf [][]float32
	for range 2 {
		b, f := randRow(rng, typ, n, float32(math.Ldexp(1, int(seed%7)-3)))
		w, wf = append(w, b...), append(wf, f)
	}
	for range 4 {
		b, f := randRow(rng, kernels.Q8_0, n, 1)
		xq, xf = append(xq, b...), append(xf, f)
	}
	wRow, xRow := len(w)/2, len(xq)/4
	kerns := map[string]func(int, []byte, int, []byte, int, int, *[8]float32){
		"go": func(nb int, w []byte, ws int, x []byte, xs, nt int, out *[8]float32) {
			batch2Go(typ, nb, w, ws, x, xs, nt, out)
		},
	}
	if k := batch2[typ]; k != nil {
		kerns["asm"] = k
	}
	for name, k := range kerns {
		for _, ws := range []int{wRow, 0} {
			for ntok := 1; ntok <= 4; ntok++ {
				var got, twin [8]float32
				k(nb, w, ws, xq, xRow, ntok, &got)
				batch2Go(typ, nb, w, ws, xq, xRow, ntok, &twin)
				for r := range 2 {
					for tk := range ntok {
						ri, ti := r*ws/wRow, tk
						want := tr.VecDot(n, w[ri*wRow:(ri+1)*wRow], xq[ti*xRow:(ti+1)*xRow])
						var mag float64
						for i := range n {
							mag += math.Abs(float64(wf[ri][i]) * float64(xf[ti][i]))
						}
						g := got[4*r+tk]
						if d := math.Abs(float64(g - want)); d > dotBound(mag) || math.IsNaN(float64(g)) {
							t.Fatalf("%s %s nb=%d wstride %d ntok %d: out[%d][%d] = %g, reference %g", name, typ, nb, ws, ntok, r, tk, g, want)
						}
						if math.Float32bits(g) != math.Float32bits(twin[4*r+tk]) {
							t.Fatalf("%s %s nb=%d wstride %d ntok %d: out[%d][%d] = %g, Go twin %g", name, typ, nb, ws, ntok, r, tk, g, twin[4*r+tk])
						}
					}
				}
			}
		}
	}
}

var batch2Types = []kernels.DType{kernels.MXFP4}

func TestBatch2Kernels(t *testing.T) {
	for _, typ := range batch2Types {
		for _, nb := range []int{1, 2, 7, 64} {
			for seed := range uint64(3) {
				checkBatch2(t, typ, seed, nb)
			}
		}
	}
}

func FuzzFastBatch2(f *testing.F) {
	f.Add(uint64(1), uint16(3), uint8(0))
	f.Fuzz(func(t *testing.T, seed uint64, blocks uint16, typ uint8) {
		checkBatch2(t, batch2Types[int(typ)%len(batch2Types)], seed, int(blocks)%200+1)
	})
}

// BenchmarkBatch2 times 64 rows × 16 tokens in cache with the batched kernel and with
// one dot product per row and token (the path it replaces), per weight type: the
// compute a batched decode step does per weight byte.
func BenchmarkBatch2(b *testing.B) {
	const rows, cols, n = 64, 2048, 16
	for _, typ := range batch2Types {
		k := batch2[typ]
		if k == nil || fastDots[typ] == nil {
			b.Skipf("no AVX2 batched kernels at level %s (LLMBENCH_CPU=avx2 runs them)", level)
		}
		w := benchMatrix(typ, rows, cols)
		x := make([]byte, n*cols/32*34)
		kernels.TraitsOf(kernels.Q8_0).FromFloat(benchActs(n*cols), x)
		wRow, xRow := len(w.Data)/rows, cols/32*34
		var out [8]float32
		b.Run(typ.String()+"/batch2", func(b *testing.B) {
			for b.Loop() {
				for r := 0; r < rows; r += 2 {
					for t := 0; t < n; t += 4 {
						k(cols/32, w.Data[r*wRow:], wRow, x[t*xRow:], xRow, 4, &out)
					}
				}
			}
		})
		dot := fastDots[typ]
		b.Run(typ.String()+"/dot", func(b *testing.B) {
			for b.Loop() {
				for r := range rows {
					for t := range n {
						out[0] = dot(cols, w.Data[r*wRow:(r+1)*wRow], x[t*xRow:(t+1)*xRow])
					}
				}
			}
		})
	}
}
