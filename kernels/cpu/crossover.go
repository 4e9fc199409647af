package cpu

import (
	"math"
	"math/rand/v2"
	"time"

	"llmbench/kernels"
)

// crossoverWork is about how many context positions one timing of a calibration
// covers (calls × context), so that short contexts are timed over many calls.
const crossoverWork = 1 << 14

// crossoverReps is how many times each length is timed on each path, alternately;
// the fastest of each counts.
const crossoverReps = 5

// crossoverLengths returns the context lengths a calibration measures up to maxCtx:
// 128, 256, … doubling, and maxCtx itself when it lies between two of them.
func crossoverLengths(maxCtx int) []int {
	var out []int
	for l := 128; l < maxCtx; l *= 2 {
		out = append(out, l)
	}
	if maxCtx > 0 {
		out = append(out, maxCtx)
	}
	return out
}

// MeasureCrossover implements kernels.PartitionCalibrator: one decode row of a's
// heads, head size, cache type and one-pass path, over a cache of random values paged
// through a block table of a.BlockSize (16 when 0), timed at each of
// crossoverLengths(maxCtx) on the one-pass path and with partitions of part
// positions, alternately, crossoverReps times each, the fastest counting. Its cost is
// about 2·crossoverReps·crossoverWork positions per length.
func (c *CPU) MeasureCrossover(a *kernels.Attention, part, maxCtx int) kernels.Crossover {
	lens := crossoverLengths(maxCtx)
	if len(lens) == 0 || part <= 0 {
		return kernels.Crossover{}
	}
	bs := a.BlockSize
	if bs <= 0 {
		bs = 16
	}
	rng := rand.New(rand.NewPCG(uint64(maxCtx), uint64(part)))
	kvDim := a.KVHeads * a.HeadDim
	nb := (maxCtx + bs - 1) / bs
	vals := make([]float32, nb*bs*kvDim)
	for i := range vals {
		vals[i] = float32(rng.NormFloat64())
	}
	k := kernels.KVView{Type: a.K.Type}
	switch a.K.Type {
	case kernels.F16:
		k.F16 = make([]uint16, len(vals))
		for i, v := range vals {
			k.F16[i] = kernels.F32ToF16(v)
		}
	case kernels.Q8_0:
		k.Q8 = make([]byte, len(vals)/32*34)
		kernels.TraitsOf(kernels.Q8_0).FromFloat(vals, k.Q8)
	default:
		k.Type, k.F32 = kernels.F32, vals
	}
	blocks := make([]int32, nb)
	for i, p := range rng.Perm(nb) {
		blocks[i] = int32(p)
	}
	q := make([]float32, a.Heads*a.HeadDim)
	for i := range q {
		q[i] = float32(rng.NormFloat64())
	}
	out := make([]float32, len(q))
	one := kernels.Attention{N: 1, Heads: a.Heads, KVHeads: a.KVHeads, HeadDim: a.HeadDim,
		Scale: float32(1 / math.Sqrt(float64(a.HeadDim))), K: k, V: k, Blocks: blocks, BlockSize: bs, Flash: a.Flash}
	var res kernels.Crossover
	for _, l := range lens {
		one.Start = l - 1
		calls := max(1, crossoverWork/l)
		best := [2]time.Duration{math.MaxInt64, math.MaxInt64}
		for range crossoverReps {
			for path := range 2 {
				one.Partition = part * path
				t0 := time.Now()
				for range calls {
					c.Attend(out, q, &one)
				}
				best[path] = min(best[path], time.Since(t0)/time.Duration(calls))
			}
		}
		res.Points = append(res.Points, kernels.CrossoverPoint{Ctx: l, OnePass: best[0], Partitioned: best[1]})
	}
	res.From = crossoverFrom(res.Points)
	return res
}

// crossoverFrom returns the shortest measured context from which the partitioned
// path was faster at that length and every longer one (0: not faster at the longest).
func crossoverFrom(points []kernels.CrossoverPoint) int {
	from := 0
	for i := len(points) - 1; i >= 0 && points[i].Partitioned < points[i].OnePass; i-- {
		from = points[i].Ctx
	}
	return from
}
