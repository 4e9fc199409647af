package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"llmbench/kernels"
)

// windowReference is dense attention in float64 with a sliding-window causal mask: the
// row at position p sees positions p+1-window … p (all up to p when window is 0), and
// a's per-head sink logits, if any, join each softmax's denominator. K and
// V are read back from the cache as stored (F16 or Q8_0 rounding included), row p of
// the contiguous cache for position p.
func windowReference(q []float32, a *kernels.Attention, window int) []float32 {
	kvDim := a.KVHeads * a.HeadDim
	ctx := a.Start + a.N
	k, v := make([]float32, ctx*kvDim), make([]float32, ctx*kvDim)
	load := func(kv *kernels.KVView, dst []float32) {
		switch kv.Type {
		case kernels.F16:
			for i := range dst {
				dst[i] = kernels.F16ToF32(kv.F16[i])
			}
		case kernels.Q8_0:
			kernels.TraitsOf(kernels.Q8_0).ToFloat(kv.Q8[:len(dst)/32*34], dst)
		default:
			copy(dst, kv.F32)
		}
	}
	load(&a.K, k)
	load(&a.V, v)
	out := make([]float32, len(q))
	gqa := a.Heads / a.KVHeads
	for t := range a.N {
		pos := a.Start + t
		lo := 0
		if window > 0 {
			lo = max(0, pos+1-window)
		}
		for h := range a.Heads {
			qh := q[(t*a.Heads+h)*a.HeadDim:][:a.HeadDim]
			off := (h / gqa) * a.HeadDim
			s := make([]float64, pos+1-lo)
			mx := math.Inf(-1)
			for p := lo; p <= pos; p++ {
				var d float64
				for i, x := range qh {
					d += float64(x) * float64(k[p*kvDim+off+i])
				}
				s[p-lo] = d * float64(a.Scale)
				mx = math.Max(mx, s[p-lo])
			}
			var sink float64 // exp(sink − mx) joins the denominator (a.Sinks)
			if a.Sinks != nil {
				mx = math.Max(mx, float64(a.Sinks[h]))
				sink = math.Exp(float64(a.Sinks[h]) - mx)
			}
			sum := sink
			for i := range s {
				s[i] = math.Exp(s[i] - mx)
				sum += s[i]
			}
			o := out[(t*a.Heads+h)*a.HeadDim:][:a.HeadDim]
			for i := range o {
				var acc float64
				for p := lo; p <= pos; p++ {
					acc += s[p-lo] * float64(v[p*kvDim+off+i])
				}
				o[i] = float32(acc / sum)
			}
		}
	}
	return out
}

// ring returns a copy of a whose cache holds only the rows a rolling window of window
// positions needs for a's rows (positions Start+1-window … Start+N-1), in a ring of
// blocks of bs positions: logical block i lives in physical block i mod R, R the fewest
// blocks that hold the needed span at any alignment. The rows are written in position
// order, so a block reused by the ring holds only its latest positions, as a rolling
// cache does; the pool's other rows are NaN, so a read outside the window poisons the
// output.
func ring(typ kernels.DType, a *kernels.Attention, kf, vf []float32, window, bs int) *kernels.Attention {
	kvDim := a.KVHeads * a.HeadDim
	ctx := a.Start + a.N
	first := max(0, a.Start+1-window)
	r := (ctx-first+bs-1)/bs + 1
	blocks := make([]int32, (ctx+bs-1)/bs)
	for i := range blocks {
		blocks[i] = int32(i % r)
	}
	pk, pv := make([]float32, r*bs*kvDim), make([]float32, r*bs*kvDim)
	for i := range pk {
		pk[i], pv[i] = float32(math.NaN()), float32(math.NaN())
	}
	p := *a
	p.Blocks, p.BlockSize, p.Window = blocks, bs, window
	for pos := first; pos < ctx; pos++ {
		row := p.Row(pos)
		copy(pk[row*kvDim:(row+1)*kvDim], kf[pos*kvDim:(pos+1)*kvDim])
		copy(pv[row*kvDim:(row+1)*kvDim], vf[pos*kvDim:(pos+1)*kvDim])
	}
	p.K, p.V = store(typ, pk), store(typ, pv)
	return &p
}

// TestWindowMatchesMaskedReference checks sliding-window attention on every path
// (plain, flash, partitioned) and cache type against dense float64 attention with the
// same window mask, within 1e-5 of the largest output; and that the same rows through
// a ring of blocks holding only the window (everything else NaN) give the contiguous
// cache's outputs bit for bit. Windows shorter than, equal to and longer than the
// context; decode rows and prompt chunks.
func TestWindowMatchesMaskedReference(t *testing.T) {
	c := New(2)
	defer c.Close()
	rng := rand.New(rand.NewPCG(16, 16))
	type path struct {
		name       string
		flash      bool
		part, pMin int
	}
	paths := []path{{"plain", false, 0, 0}, {"flash", true, 0, 0}, {"partitioned", false, 32, 0}}
	for _, typ := range []kernels.DType{kernels.F32, kernels.F16, kernels.Q8_0} {
		for _, sh := range [][2]int{{1, 0}, {1, 200}, {9, 150}, {70, 0}, {3, 61}} {
			for _, w := range []int{1, 17, 64, 100, 1000} {
				q, a, kf, vf := attnCase(rng, typ, sh[0], sh[1], 4, 2, 64)
				want := windowReference(q, a, w)
				for _, pa := range paths {
					name := fmt.Sprintf("%s n=%d start=%d window=%d %s", typ, sh[0], sh[1], w, pa.name)
					dense := *a
					dense.Window, dense.Flash, dense.Partition, dense.PartitionMin = w, pa.flash, pa.part, pa.pMin
					got := make([]float32, len(q))
					c.Attend(got, q, &dense)
					if d, s := maxDiff(want, got); d > 1e-5*s || math.IsNaN(d) {
						t.Errorf("%s: differs from the masked reference by %.3g (max |out| %.3g)", name, d, s)
					}
					for _, bs := range []int{16, 7} {
						rg := ring(typ, a, kf, vf, w, bs)
						rg.Flash, rg.Partition, rg.PartitionMin = pa.flash, pa.part, pa.pMin
						gotRing := make([]float32, len(q))
						c.Attend(gotRing, q, rg)
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(gotRing[i]) {
								t.Fatalf("%s bs=%d: output %d is %v through the ring %v, %v contiguous", name, bs, i, gotRing[i], rg.Blocks, got[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestWindowVarlen: sequences of a varlen call under one window each equal their
// Attend alone, bit for bit (the window is the call's, the positions each sequence's).
func TestWindowVarlen(t *testing.T) {
	c := New(2)
	defer c.Close()
	rng := rand.New(rand.NewPCG(17, 17))
	for _, flash := range []bool{false, true} {
		var qs, want []float32
		var seqs []kernels.VarSeq
		var a0 *kernels.Attention
		// One shared cache: every sequence reads the same rows 0…, as a test of the mask.
		_, base, _, _ := attnCase(rng, kernels.F16, 1, 300, 4, 2, 64)
		for _, sh := range [][2]int{{1, 299}, {5, 40}, {1, 3}, {12, 120}} {
			a := *base
			a.N, a.Start, a.Window, a.Flash = sh[0], sh[1], 33, flash
			q := make([]float32, sh[0]*a.Heads*a.HeadDim)
			for i := range q {
				q[i] = float32(rng.NormFloat64())
			}
			out := make([]float32, len(q))
			c.Attend(out, q, &a)
			qs, want = append(qs, q...), append(want, out...)
			seqs = append(seqs, kernels.VarSeq{N: sh[0], Start: sh[1]})
			a0 = &a
		}
		got := make([]float32, len(want))
		c.AttendVarlen(got, qs, a0, seqs)
		for i := range want {
			if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
				t.Fatalf("flash=%v: output %d is %v in the varlen call, %v alone", flash, i, got[i], want[i])
			}
		}
	}
}

// TestSinksMatchReference checks attention sinks (a per-head logit in the softmax
// denominator, gpt-oss) on every path (plain, flash, partitioned, one partition and
// several) and cache type, with and without a window, against the float64 reference
// within 1e-5 of the largest output; sinks from far below to far above the scores
// (a sink of +8 takes most of the weight). It also checks the test can fail: without
// the sinks the outputs are far from the reference.
func TestSinksMatchReference(t *testing.T) {
	c := New(2)
	defer c.Close()
	rng := rand.New(rand.NewPCG(18, 18))
	type path struct {
		name       string
		flash      bool
		part, pMin int
	}
	paths := []path{{"plain", false, 0, 0}, {"flash", true, 0, 0}, {"partitioned", false, 32, 0}, {"one partition", false, 4096, 0}}
	for _, typ := range []kernels.DType{kernels.F32, kernels.F16, kernels.Q8_0} {
		for _, sh := range [][2]int{{1, 0}, {1, 200}, {9, 150}, {3, 61}} {
			for _, w := range []int{0, 17, 128} {
				q, a, _, _ := attnCase(rng, typ, sh[0], sh[1], 4, 2, 64)
				a.Window = w
				a.Sinks = []float32{-20, 0, 2.5, 8}
				want := windowReference(q, a, w)
				for _, pa := range paths {
					name := fmt.Sprintf("%s n=%d start=%d window=%d %s", typ, sh[0], sh[1], w, pa.name)
					b := *a
					b.Flash, b.Partition, b.PartitionMin = pa.flash, pa.part, pa.pMin
					got := make([]float32, len(q))
					c.Attend(got, q, &b)
					if d, s := maxDiff(want, got); d > 1e-5*s || math.IsNaN(d) {
						t.Errorf("%s: differs from the reference with sinks by %.3g (max |out| %.3g)", name, d, s)
					}
					b.Sinks = nil
					c.Attend(got, q, &b)
					if d, s := maxDiff(want, got); d < 1e-2*s {
						t.Errorf("%s: without the sinks only %.3g from the reference (max |out| %.3g)", name, d, s)
					}
				}
			}
		}
	}
}
