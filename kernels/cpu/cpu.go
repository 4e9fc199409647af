// Package cpu is the CPU implementation of kernels.Backend: the reference kernels over
// the block formats of package kernels, spread over a persistent worker pool.
package cpu

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"llmbench/kernels"
)

func init() {
	kernels.Register("cpu", func(threads int) (kernels.Backend, error) {
		if levelErr != nil {
			return nil, levelErr
		}
		if orderErr != nil {
			return nil, orderErr
		}
		return New(threads), nil
	})
}

// CPU is the CPU backend. It is not safe for concurrent use: one engine owns one CPU.
// On a CPU with AVX512-VNNI it keeps a tiled copy of each Q4_0, Q8_0, Q4_K, Q6_K,
// IQ4_NL, IQ4_XS and MXFP4 matrix it multiplies (about as many bytes as the matrix; see
// tileFmt), made by Prepare at load time (or on first use, unprepared) and freed by
// Close. MatMul never reads a
// tiled matrix's own bytes again, so the engine releases their pages after Prepare.
type CPU struct {
	threads int
	pool    *pool
	xq      []byte    // activations converted to the weights' dot-product type
	xp      []byte    // activations widened to float32 for halfKern (F16, BF16)
	lastX   []float32 // a copy of the activations that xq holds, converted to lastVT
	lastVT  kernels.DType
	qGen    int           // counts conversions into xq
	xpGen   int           // the conversion xp was prepared from (0: none)
	xpType  kernels.DType // and its type
	gemmScr []gemmScratch
	tiles   map[*kernels.Matrix]*tiled // tiled copies of the matrices multiplied so far
	// tiledBytes is the bytes of those copies, all together.
	tiledBytes int
	// prepared records that Prepare ran (a model's weights were loaded): see workUnits.
	prepared bool
	tilings  int // tiled copies made (tests: none after Prepare)
	// tileAct holds activations regrouped for the tile kernels (prepActs), tileActKey
	// what each holds: slot 0 for MatMul, one per type of a MatMulShared step (actSlot).
	tileAct    [maxShared][]byte
	tileActKey [maxShared]tileActKey
	actSlot    int
	work       []attnScratch // per-worker attention scratch
	ap         attnPlan      // the rows and work units of the attention call being run
	kvWide     []float32     // float32 copies of a prompt's Q8_0 cache (widenKV)
	rope       []float32     // cos/sin pairs of the positions ropeKey names
	ropeKey    ropeKey       // what rope holds
	job        job           // the arguments of the parallel step being run
	run        func(part, worker int)
	// subs are the planned steps MatMulShared runs as one (job.kind taskShared); subEnd[i]
	// is the number of parts of subs[:i+1].
	subs   [maxShared]job
	subEnd [maxShared]int

	lastPtr *float32 // the previous MatMul's activations (their address)
	repeats repeats  // activations passed to consecutive MatMuls: worth keeping in lastX

	// claims holds the call claims of the bands of the step being planned (claimBands),
	// claimNext the first not yet given to a band: threads per matrix of a step.
	claims    []partClaim
	claimNext int
}

// task names the parallel steps that job describes.
type task int

const (
	taskQuantize task = iota
	taskBand
	taskPrep
	taskAttend
	taskSwiGLU
	taskHalfPrep
	taskHalfGemm
	taskPack
	taskCopy
	taskTile
	taskRMSNorm
	taskShared // the parts of the planned steps in subs (MatMulShared)
)

// maxShared is the most matrices MatMulShared runs as one step (Q, K and V).
const maxShared = 3

// job holds the arguments of one parallel step, so that handing it to the pool needs
// no closure (and no allocation) per call.
type job struct {
	kind             task
	dst, x           []float32
	w                *kernels.Matrix
	xq, act, xp      []byte
	vt               *kernels.Traits
	vtID             kernels.DType
	dot              func(n int, w, x []byte) float32
	dotN             func(n int, w, x []byte, xstride, ntok int, dst []float32, dstride int) // dot for several tokens, where there is one
	dotRows          func(n int, w []byte, wstride, nrows int, x []byte, dst []float32)      // dot for a band of rows and one token, where there is one
	pk               *packer
	tf               *tileFmt
	hk               *halfKern
	b2               func(nb int, w []byte, wstride int, x []byte, xstride, ntok int, out *[8]float32)
	n, cols, rows    int
	xRow, wRow, band int
	tband            int // tokens per part where parts take runs of tokens (band 0)
	// tail and tailParts: where tailParts > 0, the last tailParts parts take tail rows
	// each (the rows' last tailParts·tail) and the parts before them band rows
	// (halfTail).
	tail, tailParts int
	nb, chunks      int
	groups, gBytes  int
	gsz             int // tokens per activation group: gemmToks, or amxToks on the AMX path
	q               []float32
	attn            *kernels.Attention
	eps             float32
	// ownActs: each worker regroups the activations itself (tileActs), into its slot
	// slot, as key describes them.
	ownActs bool
	slot    int
	key     tileActKey
	// claims: the parts are claimBands' bands, whose calls are claimed in
	// CPU.claims[claim0:].
	claims bool
	claim0 int
	// warm says the weights stay in cache from one step to the next (smallModel): the
	// one-token kernels then run without software prefetch (tileFmt.x1mWarm,
	// halfKern.rowsWarm).
	warm bool
}

// New returns a CPU backend with the given number of threads (0 = all cores).
func New(threads int) *CPU {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	c := &CPU{threads: threads, pool: newPool(threads),
		work: make([]attnScratch, threads), gemmScr: make([]gemmScratch, threads),
		claims: make([]partClaim, maxShared*threads)}
	c.run = c.step
	return c
}

// Name implements kernels.Backend.
func (c *CPU) Name() string { return "cpu/" + level }

// Threads implements kernels.Backend.
func (c *CPU) Threads() int { return c.threads }

// SetPoll sets how long idle workers busy-wait for work before they park, as
// llama.cpp's --poll level (0 to 100, DefaultPoll by default): 0 parks at once, 100
// spins twice as long as the default. Not while a step runs.
func (c *CPU) SetPoll(level int) { c.pool.setPoll(level) }

// Close implements kernels.Backend; the backend must not be used afterwards.
func (c *CPU) Close() {
	c.pool.Close()
	c.dropTiles()
}

func f32Bytes(x []float32) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x))
}

// step runs part of the current job on a worker.
func (c *CPU) step(part, worker int) {
	j := &c.job
	if j.kind == taskShared {
		k := 0
		for part >= c.subEnd[k] {
			k++
		}
		if k > 0 {
			part -= c.subEnd[k-1]
		}
		j = &c.subs[k]
	}
	switch j.kind {
	case taskQuantize:
		fromFloat(j.vtID, j.vt)(j.x[part*j.cols:(part+1)*j.cols], j.xq[part*j.xRow:(part+1)*j.xRow])
	case taskBand:
		c.band(j, part, worker)
	case taskPrep:
		prepActs(j.act[part*j.gBytes:(part+1)*j.gBytes], j.xq, j.xRow, j.n, part, j.gsz, j.vtID, j.pk.bs, j.cols, j.pk.k)
	case taskAttend:
		c.attendUnit(part, worker)
	case taskHalfPrep:
		j.hk.widen(j.xq[part*j.xRow:(part+1)*j.xRow], j.act[part*j.gBytes:(part+1)*j.gBytes])
	case taskHalfGemm:
		c.gemmHalfRows(j, part, worker)
	case taskPack:
		packTile(j.act[part*j.gBytes:(part+1)*j.gBytes], j.w, j.tf, part*tileRows)
	case taskCopy:
		lo := part * j.gBytes
		hi := min(len(j.xq), lo+j.gBytes)
		copy(j.act[lo:hi], j.xq[lo:hi])
	case taskTile:
		c.tileBand(j, part, worker)
	case taskRMSNorm:
		rmsNormRows(j.dst, j.x, j.q, j.eps, min(j.rows, part*j.band), min(j.rows, (part+1)*j.band))
	case taskSwiGLU:
		lo, hi := part*j.band, min(len(j.dst), (part+1)*j.band)
		swiglu(j.dst[lo:hi], j.x[lo:hi], j.q[lo:hi])
	}
}

// MatMul implements kernels.Backend. Activations are converted once to the weight
// type's dot-product format. On a CPU with AVX512-VNNI, Q4_0, Q8_0, Q4_K, Q6_K and the
// lookup-table types (IQ4_NL, IQ4_XS, MXFP4) go through their tiled copy (see tileFmt)
// for any number of tokens: each worker takes a run of 16-row tiles and multiplies each
// with every group of four tokens, so a step reads each weight once however many
// sequences it serves. Without them (AVX2 only, or LLMBENCH_CPU=avx2) Q4_0, Q8_0, IQ4_NL
// and MXFP4 take the batch2 kernels (two rows × up to four tokens). F16 and BF16 weights take their halfKern: gemmHalf from
// two tokens and the x4 kernel for one (the same per-output order). Other types take,
// per band of rows, the fastest dot product for each row and token (pathOf chooses;
// Kernels describes the choice). Every output is computed by one worker in an order that depends on neither the
// thread count nor the number of tokens, so a token's row is bit-identical alone or in
// any batch.
func (c *CPU) MatMul(dst []float32, w *kernels.Matrix, x []float32, n int) {
	c.claimNext = 0
	if parts, work := c.plan(dst, w, x, n); parts > 0 {
		c.runWork(parts, work)
	}
	c.job = job{}
}

// MatMulShared implements kernels.SharedMatMuler. Each run of up to maxShared
// matrices of one width whose types take the same activation format (Q4_K_M's Q4_K Q
// and K with a Q6_K V) is planned as MatMul plans one (the activations are converted
// once, as for consecutive MatMuls; each type regroups them in its own slot) and their
// parts go to the workers as one step; every output is computed by the same code in the
// same order as by MatMul.
func (c *CPU) MatMulShared(dst [][]float32, w []*kernels.Matrix, x []float32, n int) {
	if len(dst) != len(w) {
		panic(fmt.Sprintf("cpu: MatMulShared with %d outputs for %d matrices", len(dst), len(w)))
	}
	for i := 0; i < len(w); {
		k := i + 1
		for k < len(w) && k-i < maxShared && sameActs(w[k], w[i]) {
			k++
		}
		if k == i+1 {
			c.MatMul(dst[i], w[i], x, n)
			i = k
			continue
		}
		parts, work := 0, 0
		c.claimNext = 0
		for s := i; s < k; s++ {
			c.actSlot = s - i
			for t := i; t < s; t++ {
				if w[t].Type == w[s].Type { // the same regrouped activations
					c.actSlot = t - i
					break
				}
			}
			p, wk := c.plan(dst[s], w[s], x, n)
			c.subs[s-i] = c.job
			parts, work = parts+p, work+wk
			c.subEnd[s-i] = parts
		}
		c.actSlot = 0
		c.job = job{kind: taskShared}
		c.runWork(parts, work)
		c.job = job{}
		clear(c.subs[:])
		i = k
	}
}

// sameActs reports whether a and b take their activations in one format, so that one
// conversion serves both in a MatMulShared step: the same width and dot-product type.
func sameActs(a, b *kernels.Matrix) bool {
	ta, tb := kernels.TraitsOf(a.Type), kernels.TraitsOf(b.Type)
	return a.Cols == b.Cols && ta != nil && tb != nil && ta.VecDotType == tb.VecDotType
}

// plan does what MatMul does before its last parallel step — converts the
// activations, runs the steps that prepare them — and leaves that step in c.job:
// parts for the workers, work multiply-adds in all (RunWork's unit).
func (c *CPU) plan(dst []float32, w *kernels.Matrix, x []float32, n int) (parts, work int) {
	tr := kernels.TraitsOf(w.Type)
	if tr == nil || tr.VecDot == nil {
		panic(fmt.Sprintf("cpu: no dot product for %s", w.Type))
	}
	cols, rows := w.Cols, w.Rows
	if len(x) < n*cols || len(dst) < n*rows {
		panic(fmt.Sprintf("cpu: MatMul %dx%d with %d rows: x has %d, dst %d", rows, cols, n, len(x), len(dst)))
	}
	vt := kernels.TraitsOf(tr.VecDotType)
	j := &c.job
	*j = job{dst: dst, w: c.copyOf(w), x: x, n: n, cols: cols, rows: rows, vt: vt, vtID: tr.VecDotType, warm: c.smallModel()}
	if tr.VecDotType == kernels.F32 {
		j.xq, j.xRow = f32Bytes(x[:n*cols]), 4*cols
	} else {
		j.xRow = cols / vt.BlockSize * vt.BlockBytes
		c.xq = grow(c.xq, n*j.xRow)
		j.xq = c.xq
		// Q, K and V (and gate and up) take the same activations: convert them once.
		if p := unsafe.SliceData(x); p == c.lastPtr {
			c.repeats.add(p)
		} else {
			c.lastPtr = p
		}
		if c.lastVT != tr.VecDotType || len(c.lastX) != n*cols || !bytes.Equal(f32Bytes(c.lastX), f32Bytes(x[:n*cols])) {
			if n == 1 {
				fromFloat(tr.VecDotType, vt)(x[:cols], j.xq)
			} else {
				j.kind = taskQuantize
				c.runWork(n, n*cols)
			}
			c.keepX(x[:n*cols], tr.VecDotType)
			c.qGen++
		}
	}
	switch pathOf(w.Type, cols, n) {
	case pathHalfGemm:
		j.hk = halfKerns[w.Type]
		return c.gemmHalf()
	case pathHalfX4:
		j.hk = halfKerns[w.Type]
		c.widenActs()
	case pathTile:
		return c.matMulTiled(tileFormat(w))
	case pathBatch2:
		j.b2 = batch2[w.Type]
	}
	j.dot = tr.VecDot
	if f := fastDots[w.Type]; f != nil {
		j.dot, j.dotN, j.dotRows = f, fastDotsN[w.Type], fastDotRows[w.Type]
	}
	j.wRow = cols / tr.BlockSize * tr.BlockBytes
	// Bands of a multiple of 16 rows: two parts then never write one cache line of dst
	// (16 float32 outputs per token). With multiples of 4, the two threads wrote the
	// same lines of stories260K's 64-row products for every token: its pp64 ran at
	// 0.60× with -t 2 of -t 1, and 0.89–0.92× with 16 (pp256 0.80× → 1.2×; AMD Zen 5).
	j.kind = taskBand
	work = rows * cols * n
	if tr.BlockSize > 1 { // integer dot products: as cheap per multiply-add as the tiles'
		work /= tileWorkDiv
	}
	threads := c.splitThreads(work)
	least := 16
	if j.hk != nil {
		least = max(least, halfBandBytes/j.wRow)
	}
	j.band = (max(least, rows/(threads*8)) + 15) &^ 15
	if j.hk != nil && n <= claimToks && threads > 1 {
		j.tail = (max(16, least/halfTail) + 15) &^ 15
		if j.band > j.tail && rows >= 2*threads*(j.band+j.tail) {
			j.tailParts = 2 * threads
			head := rows - j.tailParts*j.tail
			return (head+j.band-1)/j.band + j.tailParts, work
		}
	}
	if rows%16 != 0 && n > 1 && j.b2 == nil {
		// Tokens' outputs start mid-line, so bands of rows would share lines of every
		// token's outputs: stories260K's 172×64 FFN products over 64 tokens took 92 µs
		// on two threads and 64 µs on one (AMD Zen 5). Parts take runs of tokens
		// instead, each reading every weight row (16 tokens per read, as bands do), of
		// a multiple of m tokens (m·rows is a multiple of 16): 40 µs.
		m := 16 / (rows & -rows & 15)
		if j.tband = (n + 2*threads - 1) / (2 * threads); j.tband > 16 {
			m = 16
		}
		j.band, j.tband = 0, (j.tband+m-1)/m*m
		return (n + j.tband - 1) / j.tband, work
	}
	return (rows + j.band - 1) / j.band, work
}

// halfBandBytes is the least weight bytes a part of the half path's rows kernel
// (F16, BF16; up to claimToks tokens) covers. Eight parts per thread gave llama-1b's
// K and V (256 rows) parts of 16 rows, 64 KiB, and its Q, K, V step read 8–10 %
// slower than with parts of 512 KiB; the other products' parts were that large
// already. Whole layers' products by turns (in-process, 40 rounds, 2-core AMD EPYC
// Zen 5): 1.004–1.012× faster in F16 and BF16.
const halfBandBytes = 512 << 10

// halfTail divides the half path's least part (halfBandBytes) for the last 2·threads
// parts of a one-token product, so that the workers finish together: with parts of
// 512 KiB to 2.8 MiB to the end, the worker left with the last one kept the other
// waiting about 10 µs a product (llama-1b F16 decode on two threads: the caller
// waited for the helper 3.3 % of a step). With the tail, F16 decode steps ran
// 1.007–1.018× and BF16 ones 1.013–1.017× faster (means of 40 in-process turns of 16
// tokens, five runs, 2-core AMD EPYC Zen 5). A part's rows are summed as any other's,
// so the outputs are the same bits.
const halfTail = 4

// splitThreads returns the threads a step of work multiply-adds is planned for: one
// where RunWork keeps it on the caller, else every thread. A step planned for more
// threads than run it only pays for the smaller parts: stories260K's 172- and
// 512-row decode products took twice the kernel calls with -t 2 as with -t 1, all on
// the caller.
func (c *CPU) splitThreads(work int) int {
	if c.workUnits(work) < minParallelWork {
		return 1
	}
	return c.threads
}

// smallWorkDiv divides a step's work (RunWork's unit) for workUnits while a model is
// small: its weights (the copies Prepare made) all fit in warmBytes and stay in cache,
// so every step is short and compute-bound, and a helper woken for it (or spinning,
// which on a 2-vCPU AMD EPYC (Zen 5) slowed a one-thread run by up to a quarter)
// costs more than it saves. With the AVX-512 attention kernels, TinyStories-656K's
// pp64 ran 0.85-0.89x as fast on two threads as on one at the old threshold, 0.92x
// at four times it and 0.99-1.01x (F16, Q8_0) at sixteen times it; stories260K
// 0.98-1.01x (scripts/small-models.sh, 21 rounds).
const smallWorkDiv = 16

// smallModel reports that Prepare has loaded a model whose weights (the copies it
// made) take at most warmBytes: they stay in cache from one step to the next, so the
// one-token kernels run without software prefetch (job.warm) and its steps weigh
// less when deciding to split them (workUnits).
func (c *CPU) smallModel() bool { return c.prepared && c.tiledBytes <= warmBytes }

// workUnits returns work as RunWork and splitThreads weigh it: work itself, or
// work/smallWorkDiv for a small model.
func (c *CPU) workUnits(work int) int {
	if c.smallModel() {
		return work / smallWorkDiv
	}
	return work
}

// runWork runs the current job's parts on the pool (c.run) for a step of work
// multiply-adds, weighed by workUnits.
func (c *CPU) runWork(parts, work int) { c.pool.RunWork(parts, c.workUnits(work), c.run) }

// keepX records that xq holds x converted to vt. It copies x to lastX (so that the
// next MatMul can find its activations unchanged) only when x's slice has been passed
// to two MatMuls in a row before (Q, K, V; gate, up): the others (the FFN's down
// input, 512×5632 floats in a prefill batch) are never multiplied twice, and copying
// them only made lastX that large. Which copies are kept changes no result, only
// whether an unchanged input is converted again.
func (c *CPU) keepX(x []float32, vt kernels.DType) {
	c.lastVT = vt
	if !c.repeats.has(unsafe.SliceData(x)) {
		c.lastX = c.lastX[:0]
		return
	}
	c.lastX = append(c.lastX[:0], x...)
}

// repeats remembers the last few activation addresses seen in consecutive MatMuls.
type repeats struct {
	ptrs [4]*float32
	next int
}

func (r *repeats) has(p *float32) bool {
	for _, q := range r.ptrs {
		if q == p {
			return true
		}
	}
	return false
}

func (r *repeats) add(p *float32) {
	if !r.has(p) {
		r.ptrs[r.next] = p
		r.next = (r.next + 1) % len(r.ptrs)
	}
}

// partRange returns the rows and tokens of part of a taskBand step: a band of rows
// (the tail's shorter ones last, where there is a tail) for every token, or a run of
// tokens for every row.
func (j *job) partRange(part int) (r0, r1, tok0, tok1 int) {
	if j.tband > 0 { // a run of tokens, every row
		return 0, j.rows, part * j.tband, min(j.n, (part+1)*j.tband)
	}
	head := j.rows - j.tailParts*j.tail // the rows of the parts of band rows
	if hp := (head + j.band - 1) / j.band; part >= hp {
		r0 = head + (part-hp)*j.tail
		return r0, min(j.rows, r0+j.tail), 0, j.n
	}
	return part * j.band, min(head, (part+1)*j.band), 0, j.n
}

// band computes one band of j's weight rows (or, with token runs, every row for a run
// of tokens), tiles of 16 tokens at a time, one call per row and tile where the type
// has a dotN kernel (the same sums as dot's; a lone token takes dot, or the band in
// one dotRows call).
func (c *CPU) band(j *job, part, worker int) {
	const tile = 16
	r0, r1, tok0, tok1 := j.partRange(part)
	if j.b2 != nil {
		c.bandB2(j, r0, r1, (*[8]float32)(c.gemmScr[worker].out[:8]))
		return
	}
	if j.hk != nil {
		c.bandX4(j, r0, r1, tok0, tok1, (*[4]float32)(c.gemmScr[worker].out[:4]))
		return
	}
	if j.dotRows != nil && tok1-tok0 == 1 { // one token: the band in one call
		j.dotRows(j.cols, j.w.Data[r0*j.wRow:], j.wRow, r1-r0, j.xq[tok0*j.xRow:(tok0+1)*j.xRow], j.dst[tok0*j.rows+r0:tok0*j.rows+r1])
		return
	}
	for t0 := tok0; t0 < tok1; t0 += tile {
		t1 := min(tok1, t0+tile)
		for r := r0; r < r1; r++ {
			wr := j.w.Data[r*j.wRow : (r+1)*j.wRow]
			if j.dotN != nil && t1-t0 > 1 {
				j.dotN(j.cols, wr, j.xq[t0*j.xRow:t1*j.xRow], j.xRow, t1-t0, j.dst[t0*j.rows+r:], j.rows)
				continue
			}
			for i := t0; i < t1; i++ {
				j.dst[i*j.rows+r] = j.dot(j.cols, wr, j.xq[i*j.xRow:(i+1)*j.xRow])
			}
		}
	}
}

// bandX4 computes F16 or BF16 rows [r0, r1) for tokens [tok0, tok1) with the
// halfKern's rows kernel where it has one (one pass over the band per token: up to
// claimToks tokens take this path, see pathOf, and the later passes read the band
// from cache, so without the software prefetch), else, for one token, its x4 kernel
// (rows past the last group of four run one at a time, stride 0). out is the worker's
// scratch.
func (c *CPU) bandX4(j *job, r0, r1, tok0, tok1 int, out *[4]float32) {
	ng := j.cols / 32
	xb := j.hk.actBytes() * j.cols
	if rows := j.hk.rows; rows != nil {
		for t := tok0; t < tok1; t++ {
			if (j.warm || t > tok0) && j.hk.rowsWarm != nil {
				rows = j.hk.rowsWarm
			}
			rows(ng, j.w.Data[r0*j.wRow:], j.wRow, r1-r0, j.act[t*xb:(t+1)*xb], j.dst[t*j.rows+r0:t*j.rows+r1])
		}
		return
	}
	for r := r0; r < r1; {
		k, stride := 4, j.wRow
		if r+4 > r1 {
			k, stride = 1, 0
		}
		wr := j.w.Data[r*j.wRow:]
		j.hk.x4(ng, wr, stride, j.act[:xb], out)
		copy(j.dst[r:r+k], out[:k])
		r += k
	}
}

// RMSNorm implements kernels.Backend: each row of len(weight) elements times weight
// and the inverse root of its mean square plus eps. The mean square is ggml's: the
// float64 sum of the float32 squares in element order, over d, rounded to float32
// (meanSquare finds that float32 without the sequential sum nearly always), and a
// prompt's rows are spread over the workers, so every row's result is the one of a
// row alone in element order (TestRMSNorm).
func (c *CPU) RMSNorm(dst, x, weight []float32, eps float32) {
	d := len(weight)
	rows := len(x) / d
	parts := min(c.threads*4, rows/rmsRowsMin)
	if parts <= 1 {
		rmsNormRows(dst, x, weight, eps, 0, rows)
		return
	}
	j := &c.job
	*j = job{kind: taskRMSNorm, dst: dst, x: x, q: weight, eps: eps, rows: rows, band: (rows + parts - 1) / parts}
	c.runWork(parts, rmsWork*rows*d)
	*j = job{}
}

// rmsRowsMin is the fewest rows one RMSNorm part covers; rmsWork an element's cost in
// RunWork's unit (a multiply-add).
const (
	rmsRowsMin = 8
	rmsWork    = 2
)

// ApplyRoPE implements kernels.Backend, computing angles in float32 by repeated
// multiplication as ggml's rope cache does. The cos/sin table of the last call's
// positions is kept: the keys take the queries' table again in every layer.
func (c *CPU) ApplyRoPE(x []float32, n, start, heads, headDim int, r *kernels.RoPE) {
	dims := r.Dims
	half := dims / 2
	key := ropeKey{start: start, n: n, dims: dims, base: r.Base, freqScale: r.FreqScale, factors: unsafe.SliceData(r.Factors), nf: len(r.Factors)}
	if c.ropeKey != key || len(c.rope) != n*dims {
		c.rope = grow(c.rope, n*dims)
		thetaScale := float32(math.Pow(float64(r.Base), -2.0/float64(dims)))
		freqScale := r.FreqScale
		if freqScale == 0 {
			freqScale = 1
		}
		for t := range n {
			cs := c.rope[t*dims : (t+1)*dims] // cos, sin pairs
			theta := float32(start + t)
			for i := 0; i < half; i++ {
				th := theta * freqScale
				if r.Factors != nil {
					th /= r.Factors[i]
				}
				cs[2*i] = float32(math.Cos(float64(th)))
				cs[2*i+1] = float32(math.Sin(float64(th)))
				theta *= thetaScale
			}
		}
		c.ropeKey = key
	}
	for t := range n {
		cs := c.rope[t*dims : (t+1)*dims : (t+1)*dims]
		for h := range heads {
			v := x[(t*heads+h)*headDim:][:dims:dims]
			if r.NeoX {
				ropeNeoX(v, cs)
			} else {
				ropePairs(v, cs)
			}
		}
	}
}

// ropePairs rotates the adjacent pairs (v[2i], v[2i+1]) of one head by the angles
// whose cosines and sines are the pairs of cs (len(cs) = len(v)): ropePairsGo, or its
// assembly twin where the CPU has one (rmsnorm_amd64.go), which gives the same bits. A
// llama-1b decode step rotates 36 heads of 64 per layer: 1.8 µs of serial time per
// layer in Go.
var ropePairs = ropePairsGo

func ropePairsGo(v, cs []float32) {
	cs = cs[:len(v)]
	for i := 0; i+1 < len(v); i += 2 {
		cos, sin := cs[i], cs[i+1]
		x0, x1 := v[i], v[i+1]
		v[i] = x0*cos - x1*sin
		v[i+1] = x0*sin + x1*cos
	}
}

// ropeNeoX rotates the pairs (v[i], v[i+len(v)/2]) of one head (NeoX order) by the
// angles whose cosines and sines are the pairs of cs (len(cs) = len(v)): in Go, or in
// assembly where the CPU has it (rmsnorm_amd64.go), which gives the same bits.
var ropeNeoX = func(v, cs []float32) { ropeNeoXFrom(v, cs, 0) }

// ropeNeoXFrom is ropeNeoX in Go for the pairs from i0 on.
func ropeNeoXFrom(v, cs []float32, i0 int) {
	half := len(v) / 2
	lo, hi := v[:half], v[half:2*half]
	cs = cs[:2*half]
	for i := i0; i < half; i++ {
		cos, sin := cs[2*i], cs[2*i+1]
		x0, x1 := lo[i], hi[i]
		lo[i] = x0*cos - x1*sin
		hi[i] = x0*sin + x1*cos
	}
}

// ropeKey identifies the positions and parameters of the table in CPU.rope.
type ropeKey struct {
	start, n, dims  int
	base, freqScale float32
	factors         *float32
	nf              int
}

// swigluMin is the fewest elements one SwiGLU part covers.
const swigluMin = 2048

// swigluWork is an element's cost in RunWork's unit: the AVX-512 swiglu took 0.5 ns
// per element (BenchmarkSwiGLU), eight times an F32 multiply-add in BenchmarkRunSplit.
const swigluWork = 8

// SwiGLU implements kernels.Backend, spread over the workers for large inputs (each
// element is computed alone, so the split does not change the results).
func (c *CPU) SwiGLU(dst, gate, up []float32) {
	parts := min(c.threads*4, len(gate)/swigluMin)
	if parts <= 1 {
		swiglu(dst, gate, up)
		return
	}
	j := &c.job
	*j = job{kind: taskSwiGLU, dst: dst[:len(gate)], x: gate, q: up, band: (len(gate) + parts - 1) / parts}
	c.runWork(parts, swigluWork*len(gate))
	*j = job{}
}

// swiglu computes dst[i] = gate[i]·σ(gate[i])·up[i]: swigluGo, or its assembly twin
// where the CPU has one (swiglu_amd64.go), which gives the same bits.
var swiglu = swigluGo

func swigluGo(dst, gate, up []float32) {
	for i, g := range gate {
		dst[i] = g / (1 + exp32(-g)) * up[i]
	}
}
