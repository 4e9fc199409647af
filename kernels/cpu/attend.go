package cpu

// Attention kernels (moved here from cpu.go): the one-pass paths (plain and flash, one
// pass per query row and head), the partitioned path (per query row, key/value head and
// partition of the context, then a reduce) and the varlen call that runs many
// sequences of different query and context lengths at once.

import (
	"fmt"
	"math"
	"sort"
	"sync/atomic"

	"llmbench/kernels"
)

// attnPlan lists the rows and work units of one attention call. Rows are numbered
// across the call's sequences in order (row r's queries and outputs start at
// r*Heads*HeadDim); each row goes to the one-pass path (plain) or the partitioned
// path (part). The call's work list is the partitioned units (partUnits of them, see
// partUnit) followed by the plain rows' (row, head) pairs, run in one pool pass.
type attnPlan struct {
	seqs    []kernels.Attention // per sequence: the call's Attention with its N, Start and Blocks
	qOff    []int               // the first row of each sequence
	rowSeq  []int32             // the sequence of each row
	plain   []int32             // rows of the one-pass path
	part    []int32             // rows of the partitioned path
	partOff []int               // units of part[:i] (len(part)+1 entries); see partUnit
	slotOff []int               // partial results of part[:i]: Heads×partitions per row
	// partUnits is the partitioned units of the call; left[i] counts the units of
	// part[i] not yet done: the unit that brings it to 0 reduces the row.
	partUnits int
	left      []int32
	w         int               // query heads per plain unit (see attend)
	one       [1]kernels.VarSeq // Attend's single sequence
	wide      []bool            // the sequences widenKV gave float32 copies
	// Per partitioned row, head and partition (slot slotOff[i]+h*partitions+p): the
	// partition's maximum score, sum of exponentials and unnormalised output (HeadDim
	// values at slot*HeadDim).
	pMax []float32
	pSum []float64
	pAcc []float32
}

// partsOf returns the partitions of size positions that a context of ctx positions
// takes.
func partsOf(ctx, size int) int { return (ctx + size - 1) / size }

// Attend implements kernels.Backend: causal attention for each new token and head.
// Rows whose context reaches a.PartitionMin (with a.Partition > 0) take the
// partitioned path (see AttendVarlen); the others take the one-pass path, parallel over
// (token, head) pairs. The plain one-pass path materialises the scores of the whole
// context and sums the softmax in float64; the flash path (a.Flash) walks the context
// in tiles of 64 positions with an online softmax (running maximum and sum), so its
// scratch does not grow with the context. Every path reads the cache through the block
// table a block at a time (a.Span), so a paged cache gives the contiguous cache's
// outputs bit for bit.
func (c *CPU) Attend(dst, q []float32, a *kernels.Attention) {
	c.ap.one[0] = kernels.VarSeq{N: a.N, Start: a.Start, Blocks: a.Blocks}
	c.AttendVarlen(dst, q, a, c.ap.one[:])
	c.ap.one[0] = kernels.VarSeq{}
}

// AttendVarlen is Attend for several sequences in one call (varlen prefill and batched
// decode): seqs give each sequence's new tokens, first position and block table, a
// the rest (heads, scale, the cache, the path). q and dst hold the sequences' rows one
// after another. All work units of all sequences and both paths go to the pool in one
// pass; each row's output is computed as Attend computes it alone, bit for bit.
//
// The partitioned path works per (row, key/value head, partition of a.Partition
// positions): the query heads that share the key/value head walk the partition
// together in tiles of 64 positions with an online softmax (each K and V row is read
// once for the group), leaving their maximum, float64 sum and unnormalised output; the
// worker that finishes a row's last unit then reduces the row (in the same pass): it
// rescales the partitions to the common maximum and divides by the total. A single partition is the flash path's arithmetic exactly; more partitions
// agree with it to rounding (the sums are regrouped).
func (c *CPU) AttendVarlen(dst, q []float32, a *kernels.Attention, seqs []kernels.VarSeq) {
	if a.K.Type == kernels.Q8_0 && a.HeadDim%32 != 0 {
		panic(fmt.Sprintf("cpu: Q8_0 KV cache needs a head size that is a multiple of 32, not %d", a.HeadDim))
	}
	if a.KVHeads <= 0 || a.Heads%a.KVHeads != 0 || a.Partition < 0 || a.Sinks != nil && len(a.Sinks) != a.Heads {
		panic(fmt.Sprintf("cpu: attention with %d heads over %d KV heads, partition %d, %d sinks", a.Heads, a.KVHeads, a.Partition, len(a.Sinks)))
	}
	pl := &c.ap
	pl.seqs = grow(pl.seqs, len(seqs))
	pl.qOff = grow(pl.qOff, len(seqs))
	pl.plain, pl.part = pl.plain[:0], pl.part[:0]
	pl.partOff, pl.slotOff = append(pl.partOff[:0], 0), append(pl.slotOff[:0], 0)
	gqa := a.Heads / a.KVHeads
	rows := 0
	for _, s := range seqs {
		rows += s.N
	}
	pl.rowSeq = grow(pl.rowSeq, rows)
	ctxSum := 0 // positions the rows attend over
	for _, s := range seqs {
		for t := range s.N {
			ctxSum += s.Start + t + 1 - a.First(s.Start+t)
		}
	}
	// work: a dot product and an axpy of HeadDim per (row, head, position), on either
	// path. A call RunWork keeps on the caller splits its heads no further than one
	// thread needs (splitThreads): split for two threads, a decode row read each key
	// and value tile once per query head instead of once per group of them.
	work := 2 * a.Heads * a.HeadDim * ctxSum
	threads := c.splitThreads(work)
	rows = 0
	for i, s := range seqs {
		sa := &pl.seqs[i]
		*sa = *a
		sa.N, sa.Start, sa.Blocks = s.N, s.Start, s.Blocks
		pl.qOff[i] = rows
		for t := range s.N {
			r := int32(rows + t)
			pl.rowSeq[r] = int32(i)
			ctx := s.Start + t + 1 - a.First(s.Start+t)
			if a.Partition > 0 && ctx >= a.PartitionMin {
				np := partsOf(ctx, a.Partition)
				pl.part = append(pl.part, r)
				pl.partOff = append(pl.partOff, pl.partOff[len(pl.partOff)-1]+a.KVHeads*subgroups(gqa, a.KVHeads*np, threads)*np)
				pl.slotOff = append(pl.slotOff, pl.slotOff[len(pl.slotOff)-1]+a.Heads*np)
			} else {
				pl.plain = append(pl.plain, r)
			}
		}
		rows += s.N
	}
	if len(q) < rows*a.Heads*a.HeadDim || len(dst) < rows*a.Heads*a.HeadDim {
		panic(fmt.Sprintf("cpu: attention over %d rows of %d heads of %d: q has %d, dst %d", rows, a.Heads, a.HeadDim, len(q), len(dst)))
	}
	pl.partUnits = pl.partOff[len(pl.part)]
	if pl.partUnits > 0 {
		slots := pl.slotOff[len(pl.part)]
		pl.pMax = grow(pl.pMax, slots)
		pl.pSum = grow(pl.pSum, slots)
		pl.pAcc = grow(pl.pAcc, slots*a.HeadDim)
		pl.left = grow(pl.left, len(pl.part))
		for i := range pl.part {
			pl.left[i] = int32(pl.partOff[i+1] - pl.partOff[i])
		}
	}
	c.widenKV(a, seqs)
	// A plain row's units: the query heads of a key/value head together where they
	// share its tiles (shareTiles), split only as far as even shares for the threads
	// need (subgroups); else one head a unit.
	pl.w = 1
	if shareTiles(gqa, a) {
		pl.w = gqa / subgroups(gqa, len(pl.plain)*a.KVHeads, threads)
	}
	j := &c.job
	*j = job{dst: dst, q: q, attn: a, kind: taskAttend}
	// One pass over both paths' units: a call that mixes them (auto) pays one hand-over
	// to the pool, not one per path and one more for the reduce.
	c.runWork(pl.partUnits+len(pl.plain)*a.Heads/pl.w, work)
	*j = job{}
	clear(pl.seqs) // keep no cache alive
}

// row returns the sequence of row r (its Attention) and r's index within it.
func (pl *attnPlan) row(r int32) (*kernels.Attention, int) {
	s := pl.rowSeq[r]
	return &pl.seqs[s], int(r) - pl.qOff[s]
}

// attnScratch is one worker's attention space.
type attnScratch struct {
	scores []float32
	kv     []float32 // float32 head rows of a tile (kvRows)
	acc    []float32
	max    []float32 // the flash path's running maximum and sum per head of a unit
	sum    []float64
	// A cache line after the slice headers, which every unit writes (grow): the
	// workers' scratches sit side by side in CPU.work, and without it two workers
	// wrote one line for every (row, head) unit.
	_ [64]byte
}

// flashTile is the number of positions the fused attention path scores at a time.
const flashTile = 64

// attendUnit runs unit u of the call's work list: a partitioned unit (attendPart, and
// the row's reduce when it is the row's last unit to finish) or a plain (row, head)
// pair (attend).
func (c *CPU) attendUnit(u, worker int) {
	pl := &c.ap
	if u >= pl.partUnits {
		c.attend(u-pl.partUnits, worker)
		return
	}
	if i := c.attendPart(u, worker); atomic.AddInt32(&pl.left[i], -1) == 0 {
		// Every other unit of the row added to left after writing its slots, so the
		// slots are complete here; the reduce is the same whoever runs it.
		c.reducePart(i)
	}
}

// attend runs the one-pass path for the plain rows' unit part: a row and pl.w query
// heads of one key/value head (pl.w = 1: a row and head), each head computed as it is
// alone.
func (c *CPU) attend(part, worker int) {
	j := &c.job
	pl := &c.ap
	w := pl.w
	per := j.attn.Heads / w
	r, h0 := pl.plain[part/per], (part%per)*w
	a, t := pl.row(r)
	hd := a.HeadDim
	pos := a.Start + t
	ws := &c.work[worker]
	qg := j.q[(int(r)*a.Heads+h0)*hd:][:w*hd]
	off := (h0 / (a.Heads / a.KVHeads)) * hd
	out := j.dst[(int(r)*a.Heads+h0)*hd:][:w*hd]
	ws.kv = grow(ws.kv, kvRows*hd)
	lo := a.First(pos)
	if !a.Flash {
		n := pos + 1 - lo
		ws.scores = grow(ws.scores, w*n)
		groupScores(ws.scores, n, qg, w, a, lo, pos+1, off, ws.kv)
		for k := range w {
			s := ws.scores[k*n : (k+1)*n]
			maxv := tileMax(s)
			if a.Sinks != nil {
				maxv = max(maxv, a.Sinks[h0+k])
			}
			sum := expSums(s, maxv)
			if a.Sinks != nil {
				sum += float64(expf(a.Sinks[h0+k] - maxv))
			}
			scaleScores(s, float32(1/sum))
		}
		clear(out)
		groupAccum(out, hd, ws.scores, n, w, a, lo, pos+1, off, ws.kv)
		return
	}
	ws.scores = grow(ws.scores, w*flashTile)
	ws.acc = grow(ws.acc, w*hd)
	ws.max, ws.sum = grow(ws.max, w), grow(ws.sum, w)
	acc := ws.acc[:w*hd]
	clear(acc)
	for k := range w {
		ws.max[k], ws.sum[k] = float32(math.Inf(-1)), 0
	}
	for p0 := lo; p0 <= pos; p0 += flashTile {
		p1 := min(pos+1, p0+flashTile)
		groupScores(ws.scores, flashTile, qg, w, a, p0, p1, off, ws.kv)
		for k := range w {
			s := ws.scores[k*flashTile : k*flashTile+p1-p0]
			m, sum := raiseMax(acc[k*hd:(k+1)*hd], ws.max[k], tileMax(s), ws.sum[k])
			ws.max[k], ws.sum[k] = m, sum+expSums(s, m)
		}
		groupAccum(acc, hd, ws.scores, flashTile, w, a, p0, p1, off, ws.kv)
	}
	for k := range w {
		acck, m, sum := acc[k*hd:(k+1)*hd], ws.max[k], ws.sum[k]
		if a.Sinks != nil { // the sink as one more score, with no value
			m, sum = raiseMax(acck, m, a.Sinks[h0+k], sum)
			sum += float64(expf(a.Sinks[h0+k] - m))
		}
		inv := float32(1 / sum)
		for i, v := range acck {
			out[k*hd+i] = v * inv
		}
	}
}

func expf(x float32) float32 { return exp32(x) }

// raiseMax is the online softmax's step to a new tile of scores whose largest is tm:
// when tm exceeds the running maximum m, the sum and the accumulated output so far are
// rescaled by exp(m − tm) and tm becomes the maximum. It returns the maximum and sum.
func raiseMax(acc []float32, m, tm float32, sum float64) (float32, float64) {
	if !(tm > m) { // (a NaN leaves the maximum as it was)
		return m, sum
	}
	if sum != 0 {
		r := expf(m - tm)
		sum *= float64(r)
		for i := range acc {
			acc[i] *= r
		}
	}
	return tm, sum
}

// dequantQ8(src, dst) writes the values of the Q8_0 blocks src to dst: each quant
// times its block's scale, one rounding (the kernels package's Q8_0 ToFloat, or its
// assembly twin, which gives the same bits). A Q8_0 cache is read through these values
// everywhere (the tile helpers dequantize a run of rows, widenKV a prompt's whole
// cache), so every path multiplies and sums the same floats.
var dequantQ8 = kernels.TraitsOf(kernels.Q8_0).ToFloat

// kvWideRows is the fewest new rows of a sequence for which widenKV dequantizes its
// Q8_0 cache once: each row reads every cache row of its context once per query head,
// so one dequantization serves many. kvWideMax caps the float32 copies of one call, in
// bytes (keys and values of every sequence).
const (
	kvWideRows = 8
	kvWideMax  = 64 << 20
)

// widenKV gives every sequence of the call with kvWideRows new rows or more (a prompt)
// whose keys and values are both Q8_0 float32 copies of them (dequantQ8), positions
// 0…Start+N−1 in order, so that its scores and value sums run the float32 tile loops
// instead of dequantizing every cache row again for every query row and head. The
// copies hold exactly the values the one-row path dequantizes, and the tile loops sum
// as the one-row helpers do, so every output keeps its bits (TestAttendWideSameBits).
// Sequences go in order until kvWideMax is reached. (For an F16 cache the same copies
// made a prompt's attention slower on AMD Zen 4: the float reads double the bytes, and
// converting halves costs less than reading them.)
func (c *CPU) widenKV(a *kernels.Attention, seqs []kernels.VarSeq) {
	if a.K.Type != kernels.Q8_0 || a.V.Type != kernels.Q8_0 {
		return
	}
	pl := &c.ap
	rowLen := a.KVHeads * a.HeadDim
	total := 0
	pl.wide = grow(pl.wide, len(seqs))
	for i, s := range seqs {
		n := 2 * (s.Start + s.N) * rowLen
		pl.wide[i] = s.N >= kvWideRows && 4*(total+n) <= kvWideMax
		if pl.wide[i] {
			total += n
		}
	}
	if total == 0 {
		return
	}
	c.kvWide = grow(c.kvWide, total)
	off, qRow := 0, rowLen/32*34
	for i, s := range seqs {
		if !pl.wide[i] {
			continue
		}
		sa, end := &pl.seqs[i], s.Start+s.N
		for _, kv := range [2]*kernels.KVView{&sa.K, &sa.V} {
			f := c.kvWide[off : off+end*rowLen]
			off += end * rowLen
			for p := 0; p < end; {
				r, n := sa.Span(p, end)
				dequantQ8(kv.Q8[r*qRow:(r+n)*qRow], f[p*rowLen:(p+n)*rowLen])
				p += n
			}
			*kv = kernels.KVView{Type: kernels.F32, F32: f}
		}
		sa.Blocks = nil
	}
}

// subgroups returns into how many subgroups the gqa query heads of a key/value head
// are split, for a call with units (rows × key/value heads, or a partitioned row's key/
// value heads × partitions) units before the split: the fewest (a divisor of gqa) that
// gives every thread the same number of units, at least one, so that a short row
// still spreads over the threads. Each subgroup widens and reads its key/value tiles
// itself, so a split further than that only repeats work: one llama-1b-shaped decode
// row (4 key/value heads, 8 query heads each) split into 8 units for two threads
// instead of 4 widened every tile twice, and two threads took 0.9–1.0× as long as one
// (2-core AMD EPYC Zen 5). Where no divisor gives even shares, the fewest that gives
// at least four units a thread. Each head's arithmetic is the same in any subgroup, so
// the split changes no result.
func subgroups(gqa, units, threads int) int {
	for d := 1; d <= gqa; d++ {
		if gqa%d == 0 && units*d >= threads && units*d%threads == 0 {
			return d
		}
	}
	for d := 1; d < gqa; d++ {
		if gqa%d == 0 && units*d >= 4*threads {
			return d
		}
	}
	return gqa
}

// partUnit returns unit u's partitioned row (its index in pl.part), key/value head,
// subgroup of that head's query heads, partition, and the row's partition and
// subgroup counts. A row's units are ordered by key/value head, then subgroup, then
// partition.
func (pl *attnPlan) partUnit(u, heads, kvHeads int) (i, g, sub, p, np, sg int) {
	i = sort.Search(len(pl.part), func(i int) bool { return pl.partOff[i+1] > u })
	np = (pl.slotOff[i+1] - pl.slotOff[i]) / heads
	sg = (pl.partOff[i+1] - pl.partOff[i]) / (kvHeads * np)
	local := u - pl.partOff[i]
	g, local = local/(sg*np), local%(sg*np)
	return i, g, local / np, local % np, np, sg
}

// attendPart runs one unit of the partitioned path: a subgroup of the query heads of
// one key/value head of one row over one partition of its context, leaving the
// partition's maximum, sum and unnormalised output per head in the plan's slots. It
// returns the row's index in pl.part.
func (c *CPU) attendPart(u, worker int) int {
	j := &c.job
	pl := &c.ap
	i, g, sub, p, np, sg := pl.partUnit(u, j.attn.Heads, j.attn.KVHeads)
	r := pl.part[i]
	a, t := pl.row(r)
	hd := a.HeadDim
	w := a.Heads / a.KVHeads / sg // query heads in the unit
	h0 := g*(a.Heads/a.KVHeads) + sub*w
	lo := a.First(a.Start + t)
	ctx := a.Start + t + 1
	p0, p1 := lo+p*a.Partition, min(ctx, lo+(p+1)*a.Partition)
	ws := &c.work[worker]
	ws.kv = grow(ws.kv, kvRows*hd)
	qg := j.q[(int(r)*a.Heads+h0)*hd:][:w*hd]
	off := g * hd
	// The unit's heads' slots are slot0, slot0+np, …: head k's accumulator is
	// pAcc[(slot0+k*np)*hd:][:hd].
	slot0 := pl.slotOff[i] + h0*np + p
	for k := range w {
		s := slot0 + k*np
		pl.pMax[s], pl.pSum[s] = float32(math.Inf(-1)), 0
		clear(pl.pAcc[s*hd : (s+1)*hd])
	}
	// The unit's heads tile by tile (64 positions; the tile's K and V rows read once
	// for them, see groupScores), each head exactly as the flash path computes it.
	ws.scores = grow(ws.scores, w*flashTile)
	acc := pl.pAcc[slot0*hd:]
	for t0 := p0; t0 < p1; t0 += flashTile {
		t1 := min(p1, t0+flashTile)
		groupScores(ws.scores, flashTile, qg, w, a, t0, t1, off, ws.kv)
		for hh := range w {
			sl := slot0 + hh*np
			s := ws.scores[hh*flashTile : hh*flashTile+t1-t0]
			m, sum := raiseMax(pl.pAcc[sl*hd:(sl+1)*hd], pl.pMax[sl], tileMax(s), pl.pSum[sl])
			pl.pMax[sl], pl.pSum[sl] = m, sum+expSums(s, m)
		}
		groupAccum(acc, np*hd, ws.scores, flashTile, w, a, t0, t1, off, ws.kv)
	}
	return i
}

// reducePart combines the partitions of the partitioned row pl.part[i] for every
// head: each partition's sum and output are rescaled by exp(its maximum − the
// overall maximum), summed in partition order, and the output divided by the total.
func (c *CPU) reducePart(i int) {
	j := &c.job
	pl := &c.ap
	a := j.attn
	r := int(pl.part[i])
	hd := a.HeadDim
	np := (pl.slotOff[i+1] - pl.slotOff[i]) / a.Heads
	for h := range a.Heads {
		base := pl.slotOff[i] + h*np
		out := j.dst[(r*a.Heads+h)*hd:][:hd]
		if np == 1 && a.Sinks == nil { // the flash path's arithmetic
			inv := float32(1 / pl.pSum[base])
			for k, v := range pl.pAcc[base*hd:][:hd] {
				out[k] = v * inv
			}
			continue
		}
		mx := float32(math.Inf(-1))
		for p := range np {
			mx = max(mx, pl.pMax[base+p])
		}
		clear(out)
		var total float64
		if a.Sinks != nil { // the sink as one more score, with no value
			mx = max(mx, a.Sinks[h])
			total = float64(expf(a.Sinks[h] - mx))
		}
		for p := range np {
			f := expf(pl.pMax[base+p] - mx)
			total += pl.pSum[base+p] * float64(f)
			axpyF32s(out, f, pl.pAcc[(base+p)*hd:][:hd])
		}
		inv := float32(1 / total)
		for k := range out {
			out[k] *= inv
		}
	}
}
