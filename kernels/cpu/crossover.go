package cpu

import (
	"math"
	"math/rand/v2"
	"time"

	"llmbench/kernels"
)

// crossoverCold is the context positions, summed over the sequences, that a
// calibration spreads each timing over (at least two sequences), so that each row's
// keys and values come from beyond the L2 cache, as in a model's forward pass where
// every other layer's cache passes through between two visits of one layer's.
const crossoverCold = 1 << 15

// crossoverReps is how many times each length is timed on each path, alternately;
// the fastest of each counts.
const crossoverReps = 9

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

// MeasureCrossover implements kernels.PartitionCalibrator: decode rows of a's heads,
// head size, cache type and one-pass path, each a sequence of its own (one row per
// call, so only partitions can spread a row over the threads), timed at each of
// crossoverLengths(maxCtx) on the one-pass path and with partitions of part
// positions, alternately, crossoverReps times each, the fastest counting. Each timing
// visits max(2, crossoverCold/length) sequences whose keys and values lie in separate
// shuffled blocks of a.BlockSize (16 when 0) of one pool of random values, so that the
// rows are read from beyond the L2 cache as in a forward pass. It costs about
// 2·crossoverReps·crossoverCold positions per length and a pool of crossoverCold+
// 2·maxCtx positions.
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
	nb := (crossoverCold + 2*maxCtx + bs - 1) / bs
	kv := func() kernels.KVView {
		vals := make([]float32, nb*bs*kvDim)
		for i := range vals {
			vals[i] = float32(rng.NormFloat64())
		}
		v := kernels.KVView{Type: a.K.Type}
		switch a.K.Type {
		case kernels.F16:
			v.F16 = make([]uint16, len(vals))
			for i, x := range vals {
				v.F16[i] = kernels.F32ToF16(x)
			}
		case kernels.Q8_0:
			v.Q8 = make([]byte, len(vals)/32*34)
			kernels.TraitsOf(kernels.Q8_0).FromFloat(vals, v.Q8)
		default:
			v.Type, v.F32 = kernels.F32, vals
		}
		return v
	}
	q := make([]float32, a.Heads*a.HeadDim)
	for i := range q {
		q[i] = float32(rng.NormFloat64())
	}
	out := make([]float32, len(q))
	one := kernels.Attention{N: 1, Heads: a.Heads, KVHeads: a.KVHeads, HeadDim: a.HeadDim,
		Scale: float32(1 / math.Sqrt(float64(a.HeadDim))), K: kv(), V: kv(), BlockSize: bs, Flash: a.Flash}
	var res kernels.Crossover
	for _, l := range lens {
		perm := rng.Perm(nb)
		per := (l + bs - 1) / bs
		tables := make([][]int32, max(2, crossoverCold/l))
		for i := range tables {
			tables[i] = make([]int32, per)
			for b := range tables[i] {
				tables[i][b] = int32(perm[(i*per+b)%nb])
			}
		}
		one.Start = l - 1
		best := [2]time.Duration{math.MaxInt64, math.MaxInt64}
		for range crossoverReps {
			for path := range 2 {
				one.Partition = part * path
				t0 := time.Now()
				for _, bt := range tables {
					one.Blocks = bt
					c.Attend(out, q, &one)
				}
				best[path] = min(best[path], time.Since(t0)/time.Duration(len(tables)))
			}
		}
		res.Points = append(res.Points, kernels.CrossoverPoint{Ctx: l, OnePass: best[0], Partitioned: best[1]})
	}
	res.From = crossoverFrom(res.Points)
	return res
}

// crossoverFrom returns the crossover that fits the points best: of "partitions from
// each measured length" and "never" (0), the one whose choices lose the least time
// summed over the points, each point's loss relative to its faster path
// (chosen/faster − 1). One noisy point cannot move the crossover far: it costs only
// its own loss. Ties go to the longer crossover (fewer rows partitioned).
func crossoverFrom(points []kernels.CrossoverPoint) int {
	loss := func(from int) float64 {
		var l float64
		for _, p := range points {
			t, best := p.OnePass, min(p.OnePass, p.Partitioned)
			if from > 0 && p.Ctx >= from {
				t = p.Partitioned
			}
			l += float64(t)/float64(best) - 1
		}
		return l
	}
	from, least := 0, loss(0)
	for i := len(points) - 1; i >= 0; i-- {
		if l := loss(points[i].Ctx); l < least {
			from, least = points[i].Ctx, l
		}
	}
	return from
}
