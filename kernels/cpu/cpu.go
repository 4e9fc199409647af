// Package cpu is the CPU implementation of kernels.Backend: the reference kernels over
// the block formats of package kernels, spread over a persistent worker pool.
package cpu

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"llmbench/kernels"
)

func init() {
	kernels.Register("cpu", func(threads int) (kernels.Backend, error) { return New(threads), nil })
}

// CPU is the CPU backend. It is not safe for concurrent use: one engine owns one CPU.
type CPU struct {
	threads int
	pool    *pool
	xq      []byte      // activations converted to the weights' dot-product type
	scores  [][]float32 // per-worker attention scratch
	rope    []float32   // cos/sin pairs of one position
}

// New returns a CPU backend with the given number of threads (0 = all cores).
func New(threads int) *CPU {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	return &CPU{threads: threads, pool: newPool(threads), scores: make([][]float32, threads)}
}

// Name implements kernels.Backend.
func (c *CPU) Name() string { return "cpu" }

// Threads implements kernels.Backend.
func (c *CPU) Threads() int { return c.threads }

// Close implements kernels.Backend.
func (c *CPU) Close() { c.pool.Close() }

func f32Bytes(x []float32) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x))
}

// MatMul implements kernels.Backend. Activations are converted once to the weight
// type's dot-product format; each worker then takes a band of weight rows and
// multiplies it with tiles of activation rows, so every weight byte is read once per
// tile of tokens rather than once per token.
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
	var xq []byte
	var xRow int
	if tr.VecDotType == kernels.F32 {
		xq, xRow = f32Bytes(x[:n*cols]), 4*cols
	} else {
		xRow = cols / vt.BlockSize * vt.BlockBytes
		if cap(c.xq) < n*xRow {
			c.xq = make([]byte, n*xRow)
		}
		xq = c.xq[:n*xRow]
		c.pool.Run(n, func(i, _ int) {
			vt.FromFloat(x[i*cols:(i+1)*cols], xq[i*xRow:(i+1)*xRow])
		})
	}
	wRow := cols / tr.BlockSize * tr.BlockBytes
	const tile = 16
	band := max(4, rows/(c.threads*8))
	parts := (rows + band - 1) / band
	dot := tr.VecDot
	c.pool.Run(parts, func(part, _ int) {
		r0, r1 := part*band, min(rows, (part+1)*band)
		for t0 := 0; t0 < n; t0 += tile {
			t1 := min(n, t0+tile)
			for r := r0; r < r1; r++ {
				wr := w.Data[r*wRow : (r+1)*wRow]
				for i := t0; i < t1; i++ {
					dst[i*rows+r] = dot(cols, wr, xq[i*xRow:(i+1)*xRow])
				}
			}
		}
	})
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

// Attend implements kernels.Backend: causal attention for each new token and head,
// softmax accumulated in float64, parallel over (token, head) pairs.
func (c *CPU) Attend(dst, q []float32, a *kernels.Attention) {
	group := a.Heads / a.KVHeads
	kvStride := a.KVHeads * a.HeadDim
	ctx := a.Start + a.N
	c.pool.Run(a.N*a.Heads, func(job, worker int) {
		t, h := job/a.Heads, job%a.Heads
		pos := a.Start + t
		if cap(c.scores[worker]) < ctx {
			c.scores[worker] = make([]float32, ctx)
		}
		s := c.scores[worker][:pos+1]
		qh := q[(t*a.Heads+h)*a.HeadDim:][:a.HeadDim]
		off := (h / group) * a.HeadDim
		maxv := float32(math.Inf(-1))
		for p := range s {
			s[p] = dotKV(qh, &a.K, p*kvStride+off) * a.Scale
			maxv = max(maxv, s[p])
		}
		var sum float64
		for p, v := range s {
			e := float32(math.Exp(float64(v - maxv)))
			s[p] = e
			sum += float64(e)
		}
		inv := float32(1 / sum)
		out := dst[(t*a.Heads+h)*a.HeadDim:][:a.HeadDim]
		clear(out)
		for p, w := range s {
			axpyKV(out, w*inv, &a.V, p*kvStride+off)
		}
	})
}

func dotKV(q []float32, kv *kernels.KVView, off int) float32 {
	var s float32
	if kv.Type == kernels.F16 {
		k := kv.F16[off : off+len(q)]
		for i, v := range q {
			s += v * kernels.F16ToF32(k[i])
		}
		return s
	}
	k := kv.F32[off : off+len(q)]
	for i, v := range q {
		s += v * k[i]
	}
	return s
}

func axpyKV(out []float32, w float32, kv *kernels.KVView, off int) {
	if kv.Type == kernels.F16 {
		v := kv.F16[off : off+len(out)]
		for i := range out {
			out[i] += w * kernels.F16ToF32(v[i])
		}
		return
	}
	v := kv.F32[off : off+len(out)]
	for i := range out {
		out[i] += w * v[i]
	}
}

// SwiGLU implements kernels.Backend.
func (c *CPU) SwiGLU(dst, gate, up []float32) {
	for i, g := range gate {
		dst[i] = g / (1 + float32(math.Exp(float64(-g)))) * up[i]
	}
}
