package cpu

// Attention kernels (moved here from cpu.go): the one-pass paths (plain and flash, one
// pass per query row and head), the partitioned path (per query row, key/value head and
// partition of the context, then a reduce) and the varlen call that runs many
// sequences of different query and context lengths at once.

import (
	"fmt"
	"math"
	"sort"

	"llmbench/kernels"
)

// attnPlan lists the rows and work units of one attention call. Rows are numbered
// across the call's sequences in order (row r's queries and outputs start at
// r*Heads*HeadDim); each row goes to the one-pass path (plain) or the partitioned
// path (part).
type attnPlan struct {
	seqs    []kernels.Attention // per sequence: the call's Attention with its N, Start and Blocks
	qOff    []int               // the first row of each sequence
	rowSeq  []int32             // the sequence of each row
	plain   []int32             // rows of the one-pass path
	part    []int32             // rows of the partitioned path
	partOff []int               // units of part[:i] (len(part)+1 entries); a row has KVHeads×partitions units
	one     [1]kernels.VarSeq   // Attend's single sequence
	// Per unit and query head of its group: the partition's maximum score, sum of
	// exponentials and unnormalised output (HeadDim values).
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
// after another. All work units of all sequences go to the pool together; each row's
// output is computed as Attend computes it alone, bit for bit.
//
// The partitioned path works per (row, key/value head, partition of a.Partition
// positions): the query heads that share the key/value head walk the partition
// together in tiles of 64 positions with an online softmax (each K and V row is read
// once for the group), leaving their maximum, float64 sum and unnormalised output; a
// reduce per row then rescales the partitions to the common maximum and divides by the
// total. A single partition is the flash path's arithmetic exactly; more partitions
// agree with it to rounding (the sums are regrouped).
func (c *CPU) AttendVarlen(dst, q []float32, a *kernels.Attention, seqs []kernels.VarSeq) {
	if a.K.Type == kernels.Q8_0 && a.HeadDim%32 != 0 {
		panic(fmt.Sprintf("cpu: Q8_0 KV cache needs a head size that is a multiple of 32, not %d", a.HeadDim))
	}
	if a.KVHeads <= 0 || a.Heads%a.KVHeads != 0 || a.Partition < 0 {
		panic(fmt.Sprintf("cpu: attention with %d heads over %d KV heads, partition %d", a.Heads, a.KVHeads, a.Partition))
	}
	pl := &c.ap
	pl.seqs = grow(pl.seqs, len(seqs))
	pl.qOff = grow(pl.qOff, len(seqs))
	pl.plain, pl.part, pl.partOff = pl.plain[:0], pl.part[:0], append(pl.partOff[:0], 0)
	rows := 0
	for _, s := range seqs {
		rows += s.N
	}
	pl.rowSeq = grow(pl.rowSeq, rows)
	rows = 0
	for i, s := range seqs {
		sa := &pl.seqs[i]
		*sa = *a
		sa.N, sa.Start, sa.Blocks = s.N, s.Start, s.Blocks
		pl.qOff[i] = rows
		for t := range s.N {
			r := int32(rows + t)
			pl.rowSeq[r] = int32(i)
			if ctx := s.Start + t + 1; a.Partition > 0 && ctx >= a.PartitionMin {
				pl.part = append(pl.part, r)
				pl.partOff = append(pl.partOff, pl.partOff[len(pl.partOff)-1]+a.KVHeads*partsOf(ctx, a.Partition))
			} else {
				pl.plain = append(pl.plain, r)
			}
		}
		rows += s.N
	}
	if len(q) < rows*a.Heads*a.HeadDim || len(dst) < rows*a.Heads*a.HeadDim {
		panic(fmt.Sprintf("cpu: attention over %d rows of %d heads of %d: q has %d, dst %d", rows, a.Heads, a.HeadDim, len(q), len(dst)))
	}
	j := &c.job
	*j = job{dst: dst, q: q, attn: a}
	if len(pl.plain) > 0 {
		j.kind = taskAttend
		c.pool.Run(len(pl.plain)*a.Heads, c.run)
	}
	if units := pl.partOff[len(pl.part)]; units > 0 {
		gqa := a.Heads / a.KVHeads
		pl.pMax = grow(pl.pMax, units*gqa)
		pl.pSum = grow(pl.pSum, units*gqa)
		pl.pAcc = grow(pl.pAcc, units*gqa*a.HeadDim)
		j.kind = taskAttendPart
		c.pool.Run(units, c.run)
		j.kind = taskReduce
		c.pool.Run(len(pl.part), c.run)
	}
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
	kv     []float32 // one dequantized Q8_0 head row
	acc    []float32
}

// flashTile is the number of positions the fused attention path scores at a time.
const flashTile = 64

// attend runs the one-pass path for one (row, head) pair.
func (c *CPU) attend(part, worker int) {
	j := &c.job
	pl := &c.ap
	heads := j.attn.Heads
	r, h := pl.plain[part/heads], part%heads
	a, t := pl.row(r)
	pos := a.Start + t
	ws := &c.work[worker]
	qh := j.q[(int(r)*a.Heads+h)*a.HeadDim:][:a.HeadDim]
	off := (h / (a.Heads / a.KVHeads)) * a.HeadDim
	kvStride := a.KVHeads * a.HeadDim
	out := j.dst[(int(r)*a.Heads+h)*a.HeadDim:][:a.HeadDim]
	ws.kv = grow(ws.kv, a.HeadDim)
	if !a.Flash {
		ws.scores = grow(ws.scores, pos+1)
		s := ws.scores
		maxv := float32(math.Inf(-1))
		for p := 0; p <= pos; {
			r, n := a.Span(p, pos+1)
			for i := range n {
				s[p+i] = dotKV(qh, &a.K, (r+i)*kvStride+off, ws.kv) * a.Scale
				maxv = max(maxv, s[p+i])
			}
			p += n
		}
		var sum float64
		for p, v := range s {
			e := expf(v - maxv)
			s[p] = e
			sum += float64(e)
		}
		inv := float32(1 / sum)
		clear(out)
		for p := 0; p <= pos; {
			r, n := a.Span(p, pos+1)
			for i, w := range s[p : p+n] {
				axpyKV(out, w*inv, &a.V, (r+i)*kvStride+off, ws.kv)
			}
			p += n
		}
		return
	}
	ws.scores = grow(ws.scores, flashTile)
	ws.acc = grow(ws.acc, a.HeadDim)
	acc := ws.acc
	clear(acc)
	m := float32(math.Inf(-1))
	var sum float64
	for p0 := 0; p0 <= pos; p0 += flashTile {
		p1 := min(pos+1, p0+flashTile)
		s := ws.scores[:p1-p0]
		tm := float32(math.Inf(-1))
		for p := p0; p < p1; {
			r, n := a.Span(p, p1)
			for i := range n {
				v := dotKV(qh, &a.K, (r+i)*kvStride+off, ws.kv) * a.Scale
				s[p-p0+i] = v
				tm = max(tm, v)
			}
			p += n
		}
		if tm > m {
			if sum != 0 {
				r := expf(m - tm)
				sum *= float64(r)
				for i := range acc {
					acc[i] *= r
				}
			}
			m = tm
		}
		for p := p0; p < p1; {
			r, n := a.Span(p, p1)
			for i, v := range s[p-p0 : p-p0+n] {
				e := expf(v - m)
				sum += float64(e)
				axpyKV(acc, e, &a.V, (r+i)*kvStride+off, ws.kv)
			}
			p += n
		}
	}
	inv := float32(1 / sum)
	for i, v := range acc {
		out[i] = v * inv
	}
}

func expf(x float32) float32 { return float32(math.Exp(float64(x))) }

// dotKV returns q·k for the head row of kv at element offset off; tmp holds a
// dequantized Q8_0 row.
func dotKV(q []float32, kv *kernels.KVView, off int, tmp []float32) float32 {
	switch kv.Type {
	case kernels.F16:
		return dotF16s(q, kv.F16[off:off+len(q)])
	case kernels.Q8_0:
		return dotQ8KV(q, kv.Q8[off/32*34:(off+len(q))/32*34])
	}
	return dotF32s(q, kv.F32[off:off+len(q)])
}

// axpyKV adds w times the head row of kv at element offset off to out.
func axpyKV(out []float32, w float32, kv *kernels.KVView, off int, tmp []float32) {
	switch kv.Type {
	case kernels.F16:
		axpyF16s(out, w, kv.F16[off:off+len(out)])
	case kernels.Q8_0:
		axpyQ8KV(out, w, kv.Q8[off/32*34:(off+len(out))/32*34], tmp)
	default:
		axpyF32s(out, w, kv.F32[off:off+len(out)])
	}
}

// dotQ8KV returns Σ q[i]·k[i] for Q8_0 blocks k: per block, the float sum of q·quant
// times the block scale.
func dotQ8KV(q []float32, k []byte) float32 {
	var s float32
	for b := 0; b < len(q)/32; b++ {
		blk := k[34*b : 34*b+34]
		qs := q[32*b : 32*b+32]
		var t0, t1, t2, t3 float32
		for i := 0; i < 32; i += 4 {
			t0 += qs[i] * float32(int8(blk[2+i]))
			t1 += qs[i+1] * float32(int8(blk[3+i]))
			t2 += qs[i+2] * float32(int8(blk[4+i]))
			t3 += qs[i+3] * float32(int8(blk[5+i]))
		}
		s += (t0 + t1 + t2 + t3) * f16At(blk)
	}
	return s
}

// axpyQ8KV adds w times the Q8_0 blocks v to out, dequantizing through tmp.
func axpyQ8KV(out []float32, w float32, v []byte, tmp []float32) {
	tmp = tmp[:len(out)]
	for b := 0; b < len(out)/32; b++ {
		blk := v[34*b : 34*b+34]
		d := f16At(blk) * w
		t := tmp[32*b : 32*b+32]
		for i := range t {
			t[i] = float32(int8(blk[2+i])) * d
		}
	}
	axpyF32s(out, 1, tmp)
}

// partUnit returns the partitioned row of unit u (its index in pl.part), the
// key/value head and the partition, and the row's partition count.
func (pl *attnPlan) partUnit(u int, kvHeads int) (i, g, p, np int) {
	i = sort.Search(len(pl.part), func(i int) bool { return pl.partOff[i+1] > u })
	np = (pl.partOff[i+1] - pl.partOff[i]) / kvHeads
	local := u - pl.partOff[i]
	return i, local / np, local % np, np
}

// attendPart runs one unit of the partitioned path: the query heads of one key/value
// head of one row over one partition of its context, leaving the partition's maximum,
// sum and unnormalised output per head in the plan.
func (c *CPU) attendPart(u, worker int) {
	j := &c.job
	pl := &c.ap
	i, g, p, _ := pl.partUnit(u, j.attn.KVHeads)
	r := pl.part[i]
	a, t := pl.row(r)
	hd, gqa := a.HeadDim, a.Heads/a.KVHeads
	ctx := a.Start + t + 1
	p0, p1 := p*a.Partition, min(ctx, (p+1)*a.Partition)
	ws := &c.work[worker]
	ws.kv = grow(ws.kv, hd)
	ws.scores = grow(ws.scores, gqa*flashTile)
	qg := j.q[(int(r)*a.Heads+g*gqa)*hd:][:gqa*hd]
	off := g * hd
	kvStride := a.KVHeads * hd
	m, sum := pl.pMax[u*gqa:][:gqa], pl.pSum[u*gqa:][:gqa]
	acc := pl.pAcc[u*gqa*hd:][:gqa*hd]
	clear(acc)
	clear(sum)
	for hh := range m {
		m[hh] = float32(math.Inf(-1))
	}
	for t0 := p0; t0 < p1; t0 += flashTile {
		t1 := min(p1, t0+flashTile)
		for pos := t0; pos < t1; {
			row, n := a.Span(pos, t1)
			for k := range n {
				ro := (row+k)*kvStride + off
				for hh := range gqa {
					ws.scores[hh*flashTile+pos-t0+k] = dotKV(qg[hh*hd:(hh+1)*hd], &a.K, ro, ws.kv) * a.Scale
				}
			}
			pos += n
		}
		for hh := range gqa {
			s := ws.scores[hh*flashTile:][:t1-t0]
			tm := float32(math.Inf(-1))
			for _, v := range s {
				tm = max(tm, v)
			}
			if tm > m[hh] {
				if sum[hh] != 0 {
					f := expf(m[hh] - tm)
					sum[hh] *= float64(f)
					ah := acc[hh*hd : (hh+1)*hd]
					for k := range ah {
						ah[k] *= f
					}
				}
				m[hh] = tm
			}
			for k, v := range s {
				e := expf(v - m[hh])
				s[k] = e
				sum[hh] += float64(e)
			}
		}
		for pos := t0; pos < t1; {
			row, n := a.Span(pos, t1)
			for k := range n {
				ro := (row+k)*kvStride + off
				for hh := range gqa {
					axpyKV(acc[hh*hd:(hh+1)*hd], ws.scores[hh*flashTile+pos-t0+k], &a.V, ro, ws.kv)
				}
			}
			pos += n
		}
	}
}

// reducePart combines the partitions of the partitioned row pl.part[i] for every
// head: each partition's sum and output are rescaled by exp(its maximum − the
// overall maximum), summed in partition order, and the output divided by the total.
func (c *CPU) reducePart(i int) {
	j := &c.job
	pl := &c.ap
	a := j.attn
	r := int(pl.part[i])
	hd, gqa := a.HeadDim, a.Heads/a.KVHeads
	np := (pl.partOff[i+1] - pl.partOff[i]) / a.KVHeads
	for h := range a.Heads {
		base := pl.partOff[i] + (h/gqa)*np
		hh := h % gqa
		out := j.dst[(r*a.Heads+h)*hd:][:hd]
		if np == 1 { // the flash path's arithmetic
			inv := float32(1 / pl.pSum[base*gqa+hh])
			for k, v := range pl.pAcc[(base*gqa+hh)*hd:][:hd] {
				out[k] = v * inv
			}
			continue
		}
		mx := float32(math.Inf(-1))
		for p := range np {
			mx = max(mx, pl.pMax[(base+p)*gqa+hh])
		}
		clear(out)
		var total float64
		for p := range np {
			slot := (base+p)*gqa + hh
			f := expf(pl.pMax[slot] - mx)
			total += pl.pSum[slot] * float64(f)
			axpyF32s(out, f, pl.pAcc[slot*hd:][:hd])
		}
		inv := float32(1 / total)
		for k := range out {
			out[k] *= inv
		}
	}
}
