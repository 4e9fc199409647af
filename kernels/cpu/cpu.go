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
		return New(threads), nil
	})
}

// CPU is the CPU backend. It is not safe for concurrent use: one engine owns one CPU.
// On a CPU with AVX512-VNNI it keeps a tiled copy of each Q4_0, Q8_0, Q4_K and Q6_K
// matrix it multiplies (as many bytes as the matrix, made on first use; see tileFmt),
// so a model's weights take twice their size in memory until Close frees the copies
// (the mapped file's pages are then no longer read and the kernel may drop them).
type CPU struct {
	threads    int
	pool       *pool
	xq         []byte    // activations converted to the weights' dot-product type
	xp         []byte    // activations widened to float32 for halfKern (F16, BF16)
	lastX      []float32 // a copy of the activations that xq holds, converted to lastVT
	lastVT     kernels.DType
	qGen       int           // counts conversions into xq
	xpGen      int           // the conversion xp was prepared from (0: none)
	xpType     kernels.DType // and its type
	gemmScr    []gemmScratch
	tiles      map[*kernels.Matrix]*tiled // tiled copies of the matrices multiplied so far
	tileAct    []byte                     // activations regrouped for the tile kernels (prepActs)
	tileActKey tileActKey                 // what tileAct holds
	work       []attnScratch              // per-worker attention scratch
	rope       []float32                  // cos/sin pairs of one position
	job        job                        // the arguments of the parallel step being run
	run        func(part, worker int)
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
	taskTile
)

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
	pk               *packer
	tf               *tileFmt
	hk               *halfKern
	b2               func(nb int, w []byte, wstride int, x []byte, xstride, ntok int, out *[8]float32)
	n, cols, rows    int
	xRow, wRow, band int
	nb, chunks       int
	groups, gBytes   int
	q                []float32
	attn             *kernels.Attention
}

// New returns a CPU backend with the given number of threads (0 = all cores).
func New(threads int) *CPU {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	c := &CPU{threads: threads, pool: newPool(threads),
		work: make([]attnScratch, threads), gemmScr: make([]gemmScratch, threads)}
	c.run = c.step
	return c
}

// Name implements kernels.Backend.
func (c *CPU) Name() string { return "cpu/" + level }

// Threads implements kernels.Backend.
func (c *CPU) Threads() int { return c.threads }

// Close implements kernels.Backend.
func (c *CPU) Close() {
	c.pool.Close()
	c.tiles = nil
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
	switch j.kind {
	case taskQuantize:
		fromFloat(j.vtID, j.vt)(j.x[part*j.cols:(part+1)*j.cols], j.xq[part*j.xRow:(part+1)*j.xRow])
	case taskBand:
		c.band(part, worker)
	case taskPrep:
		prepActs(j.act[part*j.gBytes:(part+1)*j.gBytes], j.xq, j.xRow, j.n, part, j.vtID, j.pk.bs, j.cols, j.pk.k)
	case taskAttend:
		c.attend(part, worker)
	case taskHalfPrep:
		j.hk.widen(j.xq[part*j.xRow:(part+1)*j.xRow], j.act[part*j.gBytes:(part+1)*j.gBytes])
	case taskHalfGemm:
		c.gemmHalfRows(part, worker)
	case taskPack:
		packTile(j.act[part*j.gBytes:(part+1)*j.gBytes], j.w, j.tf, part*tileRows, &c.gemmScr[worker])
	case taskTile:
		c.tileBand(part, worker)
	case taskSwiGLU:
		lo, hi := part*j.band, min(len(j.dst), (part+1)*j.band)
		swiglu(j.dst[lo:hi], j.x[lo:hi], j.q[lo:hi])
	}
}

// MatMul implements kernels.Backend. Activations are converted once to the weight
// type's dot-product format. On a CPU with AVX512-VNNI, Q4_0, Q8_0, Q4_K and Q6_K
// weights go through their tiled copy (see tileFmt) for any number of tokens: each
// worker takes a run of 16-row tiles and multiplies each with every group of four
// tokens, so a step reads each weight once however many sequences it serves. Without
// them (AVX2 only, or LLMBENCH_CPU=avx2) Q4_0 and Q8_0 take the batch2 kernels (two
// rows × up to four tokens). F16 and BF16 weights take their halfKern: gemmHalf from
// two tokens and the x4 kernel for one (the same per-output order). Other types take,
// per band of rows, the fastest dot product for each row and token (pathOf chooses;
// Kernels describes the choice). Every output is computed by one worker in an order that depends on neither the
// thread count nor the number of tokens, so a token's row is bit-identical alone or in
// any batch.
func (c *CPU) MatMul(dst []float32, w *kernels.Matrix, x []float32, n int) {
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
	*j = job{dst: dst, w: w, x: x, n: n, cols: cols, rows: rows, vt: vt, vtID: tr.VecDotType}
	if tr.VecDotType == kernels.F32 {
		j.xq, j.xRow = f32Bytes(x[:n*cols]), 4*cols
	} else {
		j.xRow = cols / vt.BlockSize * vt.BlockBytes
		c.xq = grow(c.xq, n*j.xRow)
		j.xq = c.xq
		// Q, K and V (and gate and up) take the same activations: convert them once.
		if c.lastVT != tr.VecDotType || len(c.lastX) != n*cols || !bytes.Equal(f32Bytes(c.lastX), f32Bytes(x[:n*cols])) {
			if n == 1 {
				fromFloat(tr.VecDotType, vt)(x[:cols], j.xq)
			} else {
				j.kind = taskQuantize
				c.pool.Run(n, c.run)
			}
			c.lastX = append(c.lastX[:0], x[:n*cols]...)
			c.lastVT = tr.VecDotType
			c.qGen++
		}
	}
	switch pathOf(w.Type, cols, n) {
	case pathHalfGemm:
		j.hk = halfKerns[w.Type]
		c.gemmHalf()
		*j = job{}
		return
	case pathHalfX4:
		j.hk = halfKerns[w.Type]
		c.widenActs()
	case pathTile:
		c.matMulTiled(tileFmts[w.Type])
		return
	case pathBatch2:
		j.b2 = batch2[w.Type]
	}
	j.dot = tr.VecDot
	if f := fastDots[w.Type]; f != nil {
		j.dot = f
	}
	j.wRow = cols / tr.BlockSize * tr.BlockBytes
	j.band = (max(4, rows/(c.threads*8)) + 3) &^ 3
	j.kind = taskBand
	c.pool.Run((rows+j.band-1)/j.band, c.run)
	*j = job{}
}

// band computes one band of weight rows for every token, tiles of 16 tokens at a time.
func (c *CPU) band(part, worker int) {
	j := &c.job
	const tile = 16
	r0, r1 := part*j.band, min(j.rows, (part+1)*j.band)
	if j.b2 != nil {
		c.bandB2(r0, r1, (*[8]float32)(c.gemmScr[worker].out[:8]))
		return
	}
	if j.hk != nil {
		c.bandX4(r0, r1, (*[4]float32)(c.gemmScr[worker].out[:4]))
		return
	}
	for t0 := 0; t0 < j.n; t0 += tile {
		t1 := min(j.n, t0+tile)
		for r := r0; r < r1; r++ {
			wr := j.w.Data[r*j.wRow : (r+1)*j.wRow]
			for i := t0; i < t1; i++ {
				j.dst[i*j.rows+r] = j.dot(j.cols, wr, j.xq[i*j.xRow:(i+1)*j.xRow])
			}
		}
	}
}

// bandX4 computes F16 or BF16 rows [r0, r1) for one token with the halfKern's x4
// kernel; rows past the last group of four are run one at a time (stride 0). out is
// the worker's scratch.
func (c *CPU) bandX4(r0, r1 int, out *[4]float32) {
	j := &c.job
	ng := j.cols / 32
	xb := 4 * j.cols
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

// RMSNorm implements kernels.Backend. The sum of squares is accumulated in float64,
// as ggml does.
func (c *CPU) RMSNorm(dst, x, weight []float32, eps float32) {
	d := len(weight)
	for i := 0; i+d <= len(x); i += d {
		row := x[i : i+d]
		var ss float64
		for _, v := range row {
			ss += float64(v * v)
		}
		scale := float32(1 / math.Sqrt(float64(float32(ss/float64(d))+eps)))
		out := dst[i : i+d]
		for j, v := range row {
			out[j] = v * scale * weight[j]
		}
	}
}

// ApplyRoPE implements kernels.Backend, computing angles in float32 by repeated
// multiplication as ggml's rope cache does.
func (c *CPU) ApplyRoPE(x []float32, n, start, heads, headDim int, r *kernels.RoPE) {
	dims := r.Dims
	thetaScale := float32(math.Pow(float64(r.Base), -2.0/float64(dims)))
	freqScale := r.FreqScale
	if freqScale == 0 {
		freqScale = 1
	}
	half := dims / 2
	if cap(c.rope) < dims {
		c.rope = make([]float32, dims)
	}
	cs := c.rope[:dims] // cos, sin pairs
	for t := range n {
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
		for h := range heads {
			v := x[(t*heads+h)*headDim:]
			for i := 0; i < half; i++ {
				a, b := 2*i, 2*i+1
				if r.NeoX {
					a, b = i, i+half
				}
				cos, sin := cs[2*i], cs[2*i+1]
				x0, x1 := v[a], v[b]
				v[a] = x0*cos - x1*sin
				v[b] = x0*sin + x1*cos
			}
		}
	}
}

// attnScratch is one worker's attention space.
type attnScratch struct {
	scores []float32
	kv     []float32 // one dequantized Q8_0 head row
	acc    []float32
}

// flashTile is the number of positions the fused attention path scores at a time.
const flashTile = 64

// Attend implements kernels.Backend: causal attention for each new token and head,
// parallel over (token, head) pairs. The plain path materialises the scores of the
// whole context and sums the softmax in float64; the flash path (a.Flash) walks the
// context in tiles of 64 positions with an online softmax (running maximum and sum),
// so its scratch does not grow with the context. Both read the cache through the block
// table a block at a time (a.Span), so a paged cache gives the contiguous cache's
// outputs bit for bit.
func (c *CPU) Attend(dst, q []float32, a *kernels.Attention) {
	if a.K.Type == kernels.Q8_0 && a.HeadDim%32 != 0 {
		panic(fmt.Sprintf("cpu: Q8_0 KV cache needs a head size that is a multiple of 32, not %d", a.HeadDim))
	}
	j := &c.job
	*j = job{kind: taskAttend, dst: dst, q: q, attn: a}
	c.pool.Run(a.N*a.Heads, c.run)
	*j = job{}
}

func (c *CPU) attend(part, worker int) {
	j := &c.job
	a := j.attn
	t, h := part/a.Heads, part%a.Heads
	pos := a.Start + t
	ws := &c.work[worker]
	qh := j.q[(t*a.Heads+h)*a.HeadDim:][:a.HeadDim]
	off := (h / (a.Heads / a.KVHeads)) * a.HeadDim
	kvStride := a.KVHeads * a.HeadDim
	out := j.dst[(t*a.Heads+h)*a.HeadDim:][:a.HeadDim]
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

// swigluMin is the fewest elements one SwiGLU part covers.
const swigluMin = 2048

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
	c.pool.Run(parts, c.run)
	*j = job{}
}

func swiglu(dst, gate, up []float32) {
	for i, g := range gate {
		dst[i] = g / (1 + float32(math.Exp(float64(-g)))) * up[i]
	}
}
