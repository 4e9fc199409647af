package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"llmbench/kernels"
)

// attnCase builds a random attention problem whose cache is stored as typ.
func attnCase(rng *rand.Rand, typ kernels.DType, n, start, heads, kvHeads, hd int) (q []float32, a *kernels.Attention, kf, vf []float32) {
	ctx := start + n
	kvDim := kvHeads * hd
	kf, vf = make([]float32, ctx*kvDim), make([]float32, ctx*kvDim)
	for i := range kf {
		kf[i], vf[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	q = make([]float32, n*heads*hd)
	for i := range q {
		q[i] = float32(rng.NormFloat64())
	}
	a = &kernels.Attention{N: n, Start: start, Heads: heads, KVHeads: kvHeads, HeadDim: hd,
		Scale: float32(1 / math.Sqrt(float64(hd))), K: store(typ, kf), V: store(typ, vf)}
	return q, a, kf, vf
}

func store(typ kernels.DType, x []float32) kernels.KVView {
	kv := kernels.KVView{Type: typ}
	switch typ {
	case kernels.F16:
		kv.F16 = make([]uint16, len(x))
		for i, v := range x {
			kv.F16[i] = kernels.F32ToF16(v)
		}
	case kernels.Q8_0:
		kv.Q8 = make([]byte, len(x)/32*34)
		kernels.TraitsOf(kernels.Q8_0).FromFloat(x, kv.Q8)
	default:
		kv.F32 = append([]float32(nil), x...)
	}
	return kv
}

// TestFlashMatchesPlain checks that the fused (online-softmax) path gives the plain
// path's outputs within 1e-5 of the largest output, for every cache type and contexts
// that span several tiles.
func TestFlashMatchesPlain(t *testing.T) {
	c := New(2)
	defer c.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, typ := range []kernels.DType{kernels.F32, kernels.F16, kernels.Q8_0} {
		for _, sh := range [][2]int{{1, 0}, {1, 200}, {7, 130}, {70, 0}} {
			q, a, _, _ := attnCase(rng, typ, sh[0], sh[1], 4, 2, 64)
			plain := make([]float32, len(q))
			flash := make([]float32, len(q))
			c.Attend(plain, q, a)
			a.Flash = true
			c.Attend(flash, q, a)
			var maxAbs, maxDiff float64
			for i := range plain {
				maxAbs = math.Max(maxAbs, math.Abs(float64(plain[i])))
				maxDiff = math.Max(maxDiff, math.Abs(float64(plain[i]-flash[i])))
			}
			if maxDiff > 1e-5*maxAbs {
				t.Errorf("%s n=%d start=%d: flash differs from plain by %.3g (max |out| %.3g)", typ, sh[0], sh[1], maxDiff, maxAbs)
			}
		}
	}
}

// TestQ8KVMatchesF32 bounds the error of a Q8_0 cache against an F32 cache holding the
// same values: each stored value is off by at most half a step (|block max|/254), so
// outputs (convex combinations of V rows, weighted by softmax of q·k) stay within
// 3 % of the largest |v| for unit-normal data.
func TestQ8KVMatchesF32(t *testing.T) {
	c := New(2)
	defer c.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	for _, flash := range []bool{false, true} {
		q, a, kf, vf := attnCase(rng, kernels.Q8_0, 5, 100, 4, 4, 64)
		a.Flash = flash
		got := make([]float32, len(q))
		c.Attend(got, q, a)
		ref := *a
		ref.K, ref.V = store(kernels.F32, kf), store(kernels.F32, vf)
		want := make([]float32, len(q))
		c.Attend(want, q, &ref)
		var maxV, maxDiff float64
		for _, v := range vf {
			maxV = math.Max(maxV, math.Abs(float64(v)))
		}
		for i := range want {
			maxDiff = math.Max(maxDiff, math.Abs(float64(got[i]-want[i])))
		}
		if maxDiff > 0.03*maxV {
			t.Errorf("flash=%v: Q8_0 cache differs from F32 by %.3g (max |v| %.3g)", flash, maxDiff, maxV)
		}
		t.Logf("flash=%v: max |Δ| %.3g of max |v| %.3g", flash, maxDiff, maxV)
	}
}

// TestAttendThreadsAgree checks that the outputs do not depend on the thread count,
// on the plain and flash paths.
func TestAttendThreadsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	q, a, _, _ := attnCase(rng, kernels.F16, 9, 40, 8, 2, 32)
	threads := []int{1, 2, 5, 16}
	for _, flash := range []bool{false, true} {
		a.Flash = flash
		var outs [][]float32
		for _, th := range threads {
			c := New(th)
			o := make([]float32, len(q))
			c.Attend(o, q, a)
			c.Close()
			outs = append(outs, o)
		}
		for k := range outs[1:] {
			for i := range outs[0] {
				if math.Float32bits(outs[0][i]) != math.Float32bits(outs[k+1][i]) {
					t.Fatalf("flash %v: output %d with %d threads %v, with 1 thread %v", flash, i, threads[k+1], outs[k+1][i], outs[0][i])
				}
			}
		}
	}
}

// paged returns a copy of a whose K and V rows are scattered over a pool of blocks of
// bs positions through a random block table (spare blocks hold noise that must never
// be read).
func paged(rng *rand.Rand, typ kernels.DType, a *kernels.Attention, kf, vf []float32, bs, spare int) *kernels.Attention {
	ctx := a.Start + a.N
	kvDim := a.KVHeads * a.HeadDim
	nb := (ctx+bs-1)/bs + spare
	perm := rng.Perm(nb)
	blocks := make([]int32, (ctx+bs-1)/bs)
	for i := range blocks {
		blocks[i] = int32(perm[i])
	}
	pk, pv := make([]float32, nb*bs*kvDim), make([]float32, nb*bs*kvDim)
	for i := range pk {
		pk[i], pv[i] = 100*float32(rng.NormFloat64()), 100*float32(rng.NormFloat64())
	}
	p := *a
	p.Blocks, p.BlockSize = blocks, bs
	for pos := range ctx {
		r := p.Row(pos)
		copy(pk[r*kvDim:(r+1)*kvDim], kf[pos*kvDim:(pos+1)*kvDim])
		copy(pv[r*kvDim:(r+1)*kvDim], vf[pos*kvDim:(pos+1)*kvDim])
	}
	p.K, p.V = store(typ, pk), store(typ, pv)
	return &p
}

// checkPagedEqual compares attention through a random block table with the contiguous
// cache holding the same rows: the outputs must be equal bit for bit.
func checkPagedEqual(t *testing.T, c *CPU, rng *rand.Rand, typ kernels.DType, n, start, bs, spare int, flash bool) {
	t.Helper()
	q, a, kf, vf := attnCase(rng, typ, n, start, 4, 2, 64)
	a.Flash = flash
	p := paged(rng, typ, a, kf, vf, bs, spare)
	want, got := make([]float32, len(q)), make([]float32, len(q))
	c.Attend(want, q, a)
	c.Attend(got, q, p)
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			t.Fatalf("%s n=%d start=%d bs=%d flash=%v: output %d is %v through the block table %v, %v contiguous",
				typ, n, start, bs, flash, i, got[i], p.Blocks, want[i])
		}
	}
}

// TestPagedMatchesContiguous checks paged attention against the contiguous cache, bit
// for bit, for every cache type, both paths, decode steps and prompt chunks, block
// sizes that do and do not divide the context.
func TestPagedMatchesContiguous(t *testing.T) {
	c := New(2)
	defer c.Close()
	rng := rand.New(rand.NewPCG(11, 12))
	for _, typ := range []kernels.DType{kernels.F32, kernels.F16, kernels.Q8_0} {
		for _, flash := range []bool{false, true} {
			for _, sh := range [][3]int{{1, 0, 16}, {1, 47, 16}, {9, 23, 16}, {33, 0, 1}, {5, 130, 7}, {64, 64, 32}} {
				checkPagedEqual(t, c, rng, typ, sh[0], sh[1], sh[2], 3, flash)
			}
		}
	}
}

// FuzzPagedAttention fuzzes the block table (shape, block size, order of the blocks).
func FuzzPagedAttention(f *testing.F) {
	f.Add(uint64(1), uint8(1), uint8(10), uint8(16), uint8(2), uint8(0), false)
	f.Add(uint64(2), uint8(7), uint8(70), uint8(3), uint8(0), uint8(2), true)
	c := New(2)
	f.Cleanup(c.Close)
	f.Fuzz(func(t *testing.T, seed uint64, n, start, bs, spare, typ uint8, flash bool) {
		types := []kernels.DType{kernels.F32, kernels.F16, kernels.Q8_0}
		rng := rand.New(rand.NewPCG(seed, 3))
		checkPagedEqual(t, c, rng, types[int(typ)%3], 1+int(n)%40, int(start)%200, 1+int(bs)%64, int(spare)%8, flash)
	})
}

// BenchmarkAttend times one decode step's attention (32 heads over 4 KV heads of 64,
// F16 cache, llama-1b's layout) at 2048 positions, contiguous and through a block
// table of 16, on one thread and on two: two threads should take clearly less time
// than one (they split the key/value heads, each tile widened once).
func BenchmarkAttend(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	q, a, kf, vf := attnCase(rng, kernels.F16, 1, 2047, 32, 4, 64)
	p := paged(rng, kernels.F16, a, kf, vf, 16, 0)
	out := make([]float32, len(q))
	for _, threads := range []int{1, 2} {
		c := New(threads)
		for _, cs := range []struct {
			name string
			a    *kernels.Attention
		}{{"contiguous", a}, {"paged16", p}} {
			b.Run(fmt.Sprintf("%s/threads=%d", cs.name, threads), func(b *testing.B) {
				b.SetBytes(int64(2 * 2048 * 4 * 64 * 2))
				for b.Loop() {
					c.Attend(out, q, cs.a)
				}
			})
		}
		c.Close()
	}
}

// TestAttendWideSameBits checks that a prompt's attention over a Q8_0 cache, which
// reads float32 copies of the cache (widenKV), gives every row the bits the row gets
// alone (one-row calls dequantize row by row): plain and flash, contiguous and paged,
// one-pass and partitioned, with and without a window, 1 and 2 threads.
func TestAttendWideSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, threads := range []int{1, 2} {
		c := New(threads)
		for _, hd := range []int{64, 32} {
			for _, v := range []struct {
				flash, paged  bool
				part, window  int
				start, n, gqa int
			}{
				{false, false, 0, 0, 9, 23, 4}, {true, false, 0, 0, 0, 70, 2}, {false, true, 0, 0, 30, 12, 4},
				{true, true, 0, 0, 5, 40, 1}, {true, false, 16, 0, 40, 20, 4}, {false, false, 0, 20, 9, 33, 2},
			} {
				q, a, kf, vf := attnCase(rng, kernels.Q8_0, v.n, v.start, 2*v.gqa, 2, hd)
				if v.paged {
					a = paged(rng, kernels.Q8_0, a, kf, vf, 16, 3)
				}
				a.Flash, a.Window = v.flash, v.window
				if v.part > 0 {
					a.Partition, a.PartitionMin = v.part, 2*v.part
				}
				c.kvWide = nil
				got := make([]float32, len(q))
				c.Attend(got, q, a)
				if len(c.kvWide) == 0 {
					t.Fatalf("%+v: the prompt did not read float32 copies", v)
				}
				rowLen := a.Heads * hd
				for r := range v.n {
					one := *a
					one.N, one.Start = 1, v.start+r
					want := make([]float32, rowLen)
					c.kvWide = nil
					c.Attend(want, q[r*rowLen:(r+1)*rowLen], &one)
					if len(c.kvWide) != 0 {
						t.Fatalf("%+v: a one-row call made float32 copies", v)
					}
					for i, w := range want {
						if g := got[r*rowLen+i]; math.Float32bits(g) != math.Float32bits(w) {
							t.Fatalf("threads %d, head size %d, %+v: row %d element %d = %v, alone %v", threads, hd, v, r, i, g, w)
						}
					}
				}
			}
		}
		c.Close()
	}
}

// TestAttendSharedTilesSameBits checks that the query heads of a key/value head reading
// each tile from one float32 copy (shareTiles) give every output the bits the heads get
// one by one through the F16 and Q8_0 tile helpers: plain, flash and partitioned,
// contiguous and paged, with sinks and a window, GQA 2 to 8, head sizes 16 to 64, prompt
// and decode rows, 1 and 3 threads. It fails with a head reading its neighbour's copy
// or a tile's rows widened one position off.
func TestAttendSharedTilesSameBits(t *testing.T) {
	if !attnTileAsm {
		t.Skip("no assembly tile loops: the heads never share tiles")
	}
	defer func(v bool) { shareKV = v }(shareKV)
	rng := rand.New(rand.NewPCG(31, 32))
	for _, threads := range []int{1, 3} {
		c := New(threads)
		for _, v := range []struct {
			typ                 kernels.DType
			flash, paged, sinks bool
			part, window        int
			start, n, gqa, hd   int
		}{
			{kernels.F16, false, false, false, 0, 0, 0, 70, 2, 16},
			{kernels.F16, true, false, true, 0, 0, 9, 33, 4, 64},
			{kernels.F16, false, true, true, 0, 20, 30, 12, 8, 32},
			{kernels.F16, true, true, false, 16, 0, 100, 3, 4, 64},
			{kernels.F16, false, false, false, 0, 0, 150, 1, 4, 24},
			{kernels.Q8_0, false, false, true, 0, 0, 140, 1, 4, 64},
			{kernels.Q8_0, true, true, false, 0, 0, 70, 2, 2, 32},
			{kernels.Q8_0, true, false, false, 32, 0, 200, 2, 8, 64},
			{kernels.Q8_0, false, true, false, 0, 30, 5, 40, 2, 32},
		} {
			q, a, kf, vf := attnCase(rng, v.typ, v.n, v.start, 2*v.gqa, 2, v.hd)
			if v.paged {
				a = paged(rng, v.typ, a, kf, vf, 16, 3)
			}
			a.Flash, a.Window = v.flash, v.window
			if v.part > 0 {
				a.Partition, a.PartitionMin = v.part, 2*v.part
			}
			if v.sinks {
				a.Sinks = make([]float32, a.Heads)
				for i := range a.Sinks {
					a.Sinks[i] = float32(rng.NormFloat64())
				}
			}
			var outs [2][]float32
			for i, share := range []bool{false, true} {
				shareKV = share
				outs[i] = make([]float32, len(q))
				c.Attend(outs[i], q, a)
			}
			if !shareTiles(v.gqa, a) && a.K.Type != kernels.F32 {
				t.Fatalf("%+v: the heads do not share tiles", v)
			}
			for i, w := range outs[0] {
				if g := outs[1][i]; math.Float32bits(g) != math.Float32bits(w) {
					t.Fatalf("threads %d, %+v: element %d = %v with shared tiles, %v head by head", threads, v, i, g, w)
				}
			}
		}
		c.Close()
	}
}

// TestSmallAttentionGroupsAsOneThread checks how a two-thread CPU groups the query
// heads of a decode row over a Q8_0 cache (GQA 2): a call too small for RunWork to
// split keeps each key/value head's two query heads in one unit, reading each tile
// once, as one thread does; so does a call that splits where the key/value heads
// already share evenly between the threads (four of them); with three, every query
// head gets its own unit, so that the row spreads evenly over both threads. All give
// the one-thread outputs.
func TestSmallAttentionGroupsAsOneThread(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	one, two := New(1), New(2)
	defer one.Close()
	defer two.Close()
	for _, v := range []struct{ start, kvHeads, w int }{{31, 4, 2}, {4095, 4, 2}, {4095, 3, 1}} {
		q, a, _, _ := attnCase(rng, kernels.Q8_0, 1, v.start, 2*v.kvHeads, v.kvHeads, 32)
		want, got := make([]float32, len(q)), make([]float32, len(q))
		one.Attend(want, q, a)
		two.Attend(got, q, a)
		if two.ap.w != v.w {
			t.Errorf("context %d, %d key/value heads: %d query heads a unit on two threads, want %d", v.start+1, v.kvHeads, two.ap.w, v.w)
		}
		if !slices.Equal(got, want) {
			t.Errorf("context %d, %d key/value heads: two threads' outputs differ from one's", v.start+1, v.kvHeads)
		}
	}
}
