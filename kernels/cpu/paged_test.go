package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"llmbench/kernels"
)

// partTol is the agreement asked of the partitioned path with the one-pass paths: the
// largest difference at most 1e-5 of the largest |output| (the partitions regroup the
// float32 exponentials and float64 sums; nothing else changes).
const partTol = 1e-5

// maxDiff returns the largest |a−b| and the largest |a|.
func maxDiff(a, b []float32) (diff, scale float64) {
	for i := range a {
		scale = math.Max(scale, math.Abs(float64(a[i])))
		diff = math.Max(diff, math.Abs(float64(a[i]-b[i])))
	}
	return diff, scale
}

// checkPartitioned runs one attention problem through the plain, flash and
// partitioned paths (every row partitioned) and checks the partitioned outputs agree
// with both within partTol, and equal the flash outputs bit for bit where a row's
// context fits one partition.
func checkPartitioned(t *testing.T, c *CPU, rng *rand.Rand, typ kernels.DType, n, start, heads, kvHeads, hd, part, bs int) {
	t.Helper()
	q, a, kf, vf := attnCase(rng, typ, n, start, heads, kvHeads, hd)
	if bs > 0 {
		a = paged(rng, typ, a, kf, vf, bs, 2)
	}
	plain, flash, parted := make([]float32, len(q)), make([]float32, len(q)), make([]float32, len(q))
	c.Attend(plain, q, a)
	fa := *a
	fa.Flash = true
	c.Attend(flash, q, &fa)
	pa := *a
	pa.Partition = part
	c.Attend(parted, q, &pa)
	name := fmt.Sprintf("%s n=%d start=%d heads=%d/%d hd=%d partition=%d bs=%d", typ, n, start, heads, kvHeads, hd, part, bs)
	for _, ref := range []struct {
		name string
		out  []float32
	}{{"plain", plain}, {"flash", flash}} {
		if d, s := maxDiff(ref.out, parted); d > partTol*s {
			t.Errorf("%s: partitioned differs from %s by %.3g (max |out| %.3g)", name, ref.name, d, s)
		}
	}
	row := a.Heads * a.HeadDim
	for r := range n {
		if start+r+1 > part {
			break
		}
		for i := r * row; i < (r+1)*row; i++ {
			if math.Float32bits(flash[i]) != math.Float32bits(parted[i]) {
				t.Fatalf("%s: row %d fits one partition but output %d is %v, flash %v", name, r, i, parted[i], flash[i])
			}
		}
	}
}

// TestPartitionedMatchesOnePass checks the partitioned path against the engine's
// one-pass paths (plain and flash) for every cache type, decode rows and prompt chunks,
// partition sizes that do and do not divide the context, grouped and plain heads,
// contiguous and paged caches.
func TestPartitionedMatchesOnePass(t *testing.T) {
	c := New(2)
	defer c.Close()
	rng := rand.New(rand.NewPCG(21, 22))
	for _, typ := range []kernels.DType{kernels.F32, kernels.F16, kernels.Q8_0} {
		for _, sh := range [][5]int{{1, 0, 64, 0}, {1, 1000, 512, 16}, {1, 2047, 512, 0}, {7, 300, 64, 16}, {40, 0, 16, 3}, {3, 129, 100, 7}} {
			checkPartitioned(t, c, rng, typ, sh[0], sh[1], 8, 2, 64, sh[2], sh[3])
		}
		checkPartitioned(t, c, rng, typ, 1, 700, 4, 4, 32, 128, 16)
	}
}

// TestPartitionChoicePerRow checks that a row's path depends on its own context only:
// with PartitionMin in the middle of a prompt chunk, the rows before it equal the
// one-pass outputs and the rows from it the all-partitioned outputs, bit for bit.
func TestPartitionChoicePerRow(t *testing.T) {
	c := New(2)
	defer c.Close()
	rng := rand.New(rand.NewPCG(23, 24))
	q, a, _, _ := attnCase(rng, kernels.F16, 20, 90, 8, 2, 64)
	a.Flash = true
	onePass, all, mixed := make([]float32, len(q)), make([]float32, len(q)), make([]float32, len(q))
	c.Attend(onePass, q, a)
	pa := *a
	pa.Partition = 32
	c.Attend(all, q, &pa)
	pa.PartitionMin = 100 // rows 9… (contexts 100…)
	c.Attend(mixed, q, &pa)
	row := a.Heads * a.HeadDim
	for i := range mixed {
		want := onePass[i]
		if i/row >= 9 {
			want = all[i]
		}
		if math.Float32bits(mixed[i]) != math.Float32bits(want) {
			t.Fatalf("row %d output %d: %v, want %v", i/row, i, mixed[i], want)
		}
	}
}

// TestAttendVarlen checks that a varlen call over several sequences (different query
// and context lengths, own block tables, rows on both paths) gives each sequence's
// rows exactly what Attend gives it alone.
func TestAttendVarlen(t *testing.T) {
	c := New(2)
	defer c.Close()
	rng := rand.New(rand.NewPCG(25, 26))
	for _, typ := range []kernels.DType{kernels.F32, kernels.F16, kernels.Q8_0} {
		for _, flash := range []bool{false, true} {
			checkVarlen(t, c, rng, typ, flash, [][2]int{{1, 127}, {4, 252}, {16, 0}, {1, 600}, {9, 40}}, 64, 200)
		}
	}
}

// varlenCase builds one paged cache holding every sequence's rows (shapes: new
// tokens and first position; each sequence its own block table) and the queries.
func varlenCase(rng *rand.Rand, typ kernels.DType, flash bool, shapes [][2]int, part, partMin int) ([]float32, *kernels.Attention, []kernels.VarSeq) {
	const heads, kvHeads, hd, bs = 8, 2, 32, 16
	kvDim := kvHeads * hd
	var seqs []kernels.VarSeq
	nb := 0
	for _, sh := range shapes {
		nb += (sh[0] + sh[1] + bs - 1) / bs
	}
	perm := rng.Perm(nb + 3)
	kf, vf := make([]float32, (nb+3)*bs*kvDim), make([]float32, (nb+3)*bs*kvDim)
	for i := range kf {
		kf[i], vf[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	rows := 0
	for _, sh := range shapes {
		blocks := make([]int32, (sh[0]+sh[1]+bs-1)/bs)
		for i := range blocks {
			blocks[i], perm = int32(perm[0]), perm[1:]
		}
		seqs = append(seqs, kernels.VarSeq{N: sh[0], Start: sh[1], Blocks: blocks})
		rows += sh[0]
	}
	q := make([]float32, rows*heads*hd)
	for i := range q {
		q[i] = float32(rng.NormFloat64())
	}
	a := &kernels.Attention{Heads: heads, KVHeads: kvHeads, HeadDim: hd, Scale: float32(1 / math.Sqrt(hd)),
		K: store(typ, kf), V: store(typ, vf), BlockSize: bs, Flash: flash, Partition: part, PartitionMin: partMin}
	return q, a, seqs
}

// checkVarlen runs the sequences of varlenCase in one AttendVarlen call and compares
// each with Attend.
func checkVarlen(t *testing.T, c *CPU, rng *rand.Rand, typ kernels.DType, flash bool, shapes [][2]int, part, partMin int) {
	t.Helper()
	q, a, seqs := varlenCase(rng, typ, flash, shapes, part, partMin)
	got := make([]float32, len(q))
	c.AttendVarlen(got, q, a, seqs)
	off := 0
	for i, s := range seqs {
		one := *a
		one.N, one.Start, one.Blocks = s.N, s.Start, s.Blocks
		w := s.N * a.Heads * a.HeadDim
		want := make([]float32, w)
		c.Attend(want, q[off:off+w], &one)
		for k := range want {
			if math.Float32bits(want[k]) != math.Float32bits(got[off+k]) {
				t.Fatalf("%s flash=%v sequence %d (%d/%d) output %d: %v in the varlen call, %v alone", typ, flash, i, s.N, s.Start+s.N, k, got[off+k], want[k])
			}
		}
		off += w
	}
}

// TestAttendVarlenMixed checks a mixed batch (decode rows and prompt chunks, rows on
// both sides of the crossover, one chunk straddling it) in one call: every row equals,
// bit for bit, what the same call gives it with partitions off (rows below the
// crossover) or on for every row (the others), at 1, 2 and 3 threads (so that
// different workers finish a row's units and reduce it), and the call hands its work
// to the pool once (the partitioned units, the one-pass units and the reduces in one
// pass).
func TestAttendVarlenMixed(t *testing.T) {
	const part, from = 64, 300
	shapes := [][2]int{{1, 1000}, {1, 40}, {12, 290}, {1, 299}, {3, 0}, {1, 700}, {5, 120}}
	for _, typ := range []kernels.DType{kernels.F32, kernels.F16, kernels.Q8_0} {
		for _, flash := range []bool{false, true} {
			q, a, seqs := varlenCase(rand.New(rand.NewPCG(29, uint64(typ))), typ, flash, shapes, part, from)
			off, on := *a, *a
			off.Partition, on.PartitionMin = 0, 0
			wantOff, wantOn := make([]float32, len(q)), make([]float32, len(q))
			ref := New(1)
			ref.AttendVarlen(wantOff, q, &off, seqs)
			ref.AttendVarlen(wantOn, q, &on, seqs)
			ref.Close()
			row := a.Heads * a.HeadDim
			for _, th := range []int{1, 2, 3} {
				c := New(th)
				got := make([]float32, len(q))
				before := c.pool.splits
				c.AttendVarlen(got, q, a, seqs)
				if n := c.pool.splits - before; th > 1 && n != 1 {
					t.Errorf("%s flash=%v threads=%d: the mixed call took %d pool passes, want 1", typ, flash, th, n)
				}
				c.Close()
				r := 0
				for _, s := range seqs {
					for k := range s.N {
						want, path := wantOff, "off"
						if s.Start+k+1 >= from {
							want, path = wantOn, "on"
						}
						for i := r * row; i < (r+1)*row; i++ {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%s flash=%v threads=%d row %d (context %d): output %d is %v, partitions %s gives %v",
									typ, flash, th, r, s.Start+k+1, i, got[i], path, want[i])
							}
						}
						r++
					}
				}
			}
		}
	}
}

// TestPartitionedThreadsAgree checks that the partitioned path's outputs do not depend
// on the thread count.
func TestPartitionedThreadsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	q, a, _, _ := attnCase(rng, kernels.F16, 3, 700, 8, 2, 64)
	a.Partition = 128
	var outs [][]float32
	for _, th := range []int{1, 2, 5} {
		c := New(th)
		o := make([]float32, len(q))
		c.Attend(o, q, a)
		c.Close()
		outs = append(outs, o)
	}
	for i := range outs[0] {
		if outs[0][i] != outs[1][i] || outs[0][i] != outs[2][i] {
			t.Fatalf("output %d depends on the thread count: %v %v %v", i, outs[0][i], outs[1][i], outs[2][i])
		}
	}
}

// FuzzPartitionedAttention fuzzes the partitioned path's shapes (rows, context,
// partition size, block size, grouping, cache type) against the one-pass paths.
func FuzzPartitionedAttention(f *testing.F) {
	f.Add(uint64(1), uint8(1), uint16(1000), uint16(512), uint8(16), uint8(1), uint8(1))
	f.Add(uint64(2), uint8(9), uint16(77), uint16(5), uint8(0), uint8(2), uint8(0))
	c := New(2)
	f.Cleanup(c.Close)
	f.Fuzz(func(t *testing.T, seed uint64, n uint8, start, part uint16, bs, typ, group uint8) {
		types := []kernels.DType{kernels.F32, kernels.F16, kernels.Q8_0}
		kvHeads := 1 + int(group)%3
		rng := rand.New(rand.NewPCG(seed, 4))
		checkPartitioned(t, c, rng, types[int(typ)%3], 1+int(n)%24, int(start)%1500, kvHeads*(1+int(group/3)%4), kvHeads, 32,
			1+int(part)%700, int(bs)%33)
	})
}
