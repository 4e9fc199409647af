package cpu

import (
	"encoding/binary"
	"math"

	"llmbench/kernels"
)

// reduce16 sums sixteen lanes in the order of the assembly's reduction (RED16).
func reduce16(a *[16]float32) float32 {
	var h [8]float32
	for i := range h {
		h[i] = a[i] + a[i+8]
	}
	var q [4]float32
	for i := range q {
		q[i] = h[i] + h[i+4]
	}
	return (q[0] + q[1]) + (q[2] + q[3])
}

// fma32 returns a·b+c rounded once to float32, as VFMADD231PS does. The float64 fused
// multiply-add is exact in the product (24-bit significands); its one rounding can
// land exactly halfway between two float32s only when it was inexact, and then the
// sign of the error it dropped decides the direction.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	r := float32(s)
	if float64(r) == s || math.IsInf(s, 0) || math.IsNaN(s) {
		return r
	}
	// The neighbour of r on the other side of s: is s their midpoint?
	o := math.Nextafter32(r, float32(math.Copysign(math.Inf(1), s-float64(r))))
	if (float64(r)+float64(o))/2 != s {
		return r
	}
	t := s - p // TwoSum: the exact error of s = p + c
	e := (p - (s - t)) + (float64(c) - t)
	switch {
	case e > 0:
		return float32(math.Nextafter(s, math.Inf(1)))
	case e < 0:
		return float32(math.Nextafter(s, math.Inf(-1)))
	}
	return r
}

// f16x4 computes four F16 rows (w, w[stride:], w[2·stride:], w[3·stride:]) times one
// activation row prepared by prepF16x4 (float32), over n32 steps of 32 elements, or is
// nil where the CPU lacks it.
var f16x4 func(n32 int, w []byte, stride int, x []byte, out *[4]float32)

// prepF16x4 widens one row of F16 activations to float32 (exact).
func prepF16x4(xq, dst []byte) {
	if widenF16Fast != nil {
		widenF16Fast(xq, dst)
		return
	}
	prepF16Go(xq, dst)
}

// widenF16Fast is the assembly twin of prepF16Go, or nil where the CPU lacks it.
var widenF16Fast func(xq, dst []byte)

// prepF16Go widens fp16 values to float32.
func prepF16Go(xq, dst []byte) {
	for i := range len(xq) / 2 {
		v := kernels.F16ToF32(binary.LittleEndian.Uint16(xq[2*i:]))
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

// f16x4Go is the pure-Go twin of the f16x4 kernels: per row, sixteen float lanes
// (element 16s+L in lane L) accumulated with fused multiply-adds in element order and
// reduced as the assembly does: the order of f16Gemm, so a row's product is the same
// whichever kernel computes it.
func f16x4Go(n32 int, w []byte, stride int, x []byte, out *[4]float32) {
	for r := range 4 {
		row := w[r*stride:]
		var acc [16]float32
		for s := range 2 * n32 {
			for l := range 16 {
				e := 16*s + l
				acc[l] = fma32(f16At(row[2*e:]), math.Float32frombits(binary.LittleEndian.Uint32(x[4*e:])), acc[l])
			}
		}
		out[r] = reduce16(&acc)
	}
}

// f16Gemm computes four F16 weight rows (w[r·wstride:]) times four float32 token rows
// (x[t·xstride:]) over n16 steps of 16 elements into out[4t+r], or is nil where the CPU
// lacks it. MatMul runs it on four or more tokens, with the activations widened to
// float32 once per call (see gemmF16), so a prompt's F16 products run at FMA speed.
var f16Gemm func(n16 int, w []byte, wstride int, x []byte, xstride int, out *[16]float32)

// f16GemmGo is the pure-Go twin of the f16Gemm kernels: per output, sixteen float
// lanes (element 16s+L in lane L) accumulated with fused multiply-adds and reduced as
// the assembly does.
func f16GemmGo(n16 int, w []byte, wstride int, x []byte, xstride int, out *[16]float32) {
	for t := range 4 {
		xt := x[t*xstride:]
		for r := range 4 {
			wr := w[r*wstride:]
			var acc [16]float32
			for s := range n16 {
				for l := range 16 {
					e := 16*s + l
					acc[l] = fma32(f16At(wr[2*e:]), math.Float32frombits(binary.LittleEndian.Uint32(xt[4*e:])), acc[l])
				}
			}
			out[4*t+r] = reduce16(&acc)
		}
	}
}

// f16GemmRows is the band of weight rows one part of gemmF16 covers.
const f16GemmRows = 16

// gemmF16 is MatMul's prompt path for F16 weights: the F16 activations are widened to
// float32 (in parallel, one part per token), then each part takes sixteen weight rows
// and, for blocks of tokens that fit in the L2 cache, runs f16Gemm on every group of
// four rows and four tokens. Row and token tails repeat a row or token (stride 0), so
// every output is computed in the same order wherever it falls.
func (c *CPU) gemmF16() {
	j := &c.job
	j.gBytes = 4 * j.cols
	c.act = grow(c.act, j.n*j.gBytes)
	j.act = c.act
	j.kind = taskF16Prep
	c.pool.RunWork(j.n, j.n*j.cols, c.run)
	j.kind = taskF16Gemm
	c.pool.RunWork((j.rows+f16GemmRows-1)/f16GemmRows, j.rows*j.cols*j.n, c.run)
	*j = job{}
}

// gemmF16Rows computes one part of gemmF16.
func (c *CPU) gemmF16Rows(part, worker int) {
	j := &c.job
	out := (*[16]float32)(c.gemmScr[worker].out[:16])
	r0, r1 := part*f16GemmRows, min(j.rows, (part+1)*f16GemmRows)
	wRow, xRow := 2*j.cols, j.gBytes
	tb := max(4, (256<<10)/xRow&^3) // tokens per block: 256 KiB of activations
	for t0 := 0; t0 < j.n; t0 += tb {
		t1 := min(j.n, t0+tb)
		for r := r0; r < r1; r += 4 {
			nr := min(4, r1-r)
			for t := t0; t < t1; t += 4 {
				nt := min(4, t1-t)
				// Full tiles take one call; a tail takes one call per row or token
				// (stride 0, so the kernel repeats it).
				rc, rs, rn := 1, wRow, 4
				if nr < 4 {
					rc, rs, rn = nr, 0, 1
				}
				tc, ts, tn := 1, xRow, 4
				if nt < 4 {
					tc, ts, tn = nt, 0, 1
				}
				for a := range rc {
					for b := range tc {
						ra, tbb := r+a, t+b
						f16Gemm(j.cols/16, j.w.Data[ra*wRow:], rs, j.act[tbb*xRow:], ts, out)
						for k := range tn {
							row := (tbb + k) * j.rows
							copy(j.dst[row+ra:row+ra+rn], out[4*k:4*k+rn])
						}
					}
				}
			}
		}
	}
}
