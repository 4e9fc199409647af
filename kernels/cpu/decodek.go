package cpu

import (
	"encoding/binary"
	"math"

	"llmbench/kernels"
)

// Decode (matrix × one token) layout for Q4_K weights. One Q8_K activation block (256
// elements) is regrouped into q4kx4Group bytes so that each 64-byte load of a weight
// row's quants (two 32-byte runs, low nibbles of elements 64j+l and high nibbles of
// 64j+32+l) lines up with 64 activation bytes: elements 0–31 and 64–95, then 32–63 and
// 96–127, then 128–159 and 192–223, then 160–191 and 224–255; then eight int16 sums
// (sum j: elements 32j…32j+31, for the mins) and the float32 scale.
const q4kx4Group = 320

// q4kx4 computes four Q4_K rows (w, w[stride:], w[2·stride:], w[3·stride:]) times one
// activation row prepared by prepQ4Kx4, over nb super-blocks, or is nil where the CPU
// lacks it.
var q4kx4 func(nb int, w []byte, stride int, x []byte, out *[4]float32)

// prepQ4Kx4 regroups one row of Q8_K activations into the q4kx4 layout.
func prepQ4Kx4(xq, dst []byte) {
	nb := len(xq) / 292
	for b := range nb {
		src := xq[292*b : 292*b+292]
		y := src[4:260]
		o := dst[b*q4kx4Group : (b+1)*q4kx4Group]
		for m := range 2 {
			copy(o[128*m:128*m+32], y[128*m:128*m+32])
			copy(o[128*m+32:128*m+64], y[128*m+64:128*m+96])
			copy(o[128*m+64:128*m+96], y[128*m+32:128*m+64])
			copy(o[128*m+96:128*m+128], y[128*m+96:128*m+128])
		}
		for j := range 8 {
			s := int16(binary.LittleEndian.Uint16(src[260+4*j:])) + int16(binary.LittleEndian.Uint16(src[262+4*j:]))
			binary.LittleEndian.PutUint16(o[256+2*j:], uint16(s))
		}
		copy(o[272:276], src[0:4])
		clear(o[276:])
	}
}

// q4kx4Go is the pure-Go twin of the q4kx4 kernels. Per super-block and row, sixteen
// int32 lanes (lane L: bytes 4L…4L+3 of each of the four 64-byte quant products, times
// their group's scale) are scaled by d·dy into sixteen float lanes; the mins go into
// four float lanes (lane k: mins 2k and 2k+1 times their sums, scaled by dmin·dy).
// The lanes are reduced as the assembly does.
func q4kx4Go(nb int, w []byte, stride int, x []byte, out *[4]float32) {
	var sc, mn [8]int32
	for r := range 4 {
		row := w[r*stride:]
		var acc [16]float32
		var macc [4]float32
		for b := range nb {
			blk := row[144*b : 144*b+144]
			a := x[b*q4kx4Group : (b+1)*q4kx4Group]
			for j := range 8 {
				s, m := scaleMinK4(j, blk[4:16])
				sc[j], mn[j] = int32(s), int32(m)
			}
			dy := math.Float32frombits(binary.LittleEndian.Uint32(a[272:]))
			d, dm := f16At(blk)*dy, f16At(blk[2:])*dy
			for l := range 16 {
				var s int32
				for p := range 4 {
					m, hi := p/2, p%2
					g := 4*m + hi + 2*(l/8)
					var t int32
					for e := range 4 {
						q := int32(blk[16+64*m+4*l+e])
						if hi == 1 {
							q >>= 4
						}
						t += (q & 15) * int32(int8(a[64*p+4*l+e]))
					}
					s += t * sc[g]
				}
				acc[l] = fma32(float32(s), d, acc[l])
			}
			for k := range 4 {
				s := mn[2*k]*int32(int16(binary.LittleEndian.Uint16(a[256+4*k:]))) +
					mn[2*k+1]*int32(int16(binary.LittleEndian.Uint16(a[258+4*k:])))
				macc[k] = fma32(float32(s), dm, macc[k])
			}
		}
		out[r] = reduce16(&acc) - ((macc[0] + macc[1]) + (macc[2] + macc[3]))
	}
}

func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// q6kx4 computes four Q6_K rows (w, w[stride:], w[2·stride:], w[3·stride:]) times one
// row of Q8_K activations (used as they are), over nb super-blocks, or is nil where the
// CPU lacks it.
var q6kx4 func(nb int, w []byte, stride int, x []byte, out *[4]float32)

// q6kx4Go is the pure-Go twin of the q6kx4 kernels. Per super-block and row, sixteen
// int32 lanes (lane L: bytes 4L…4L+3 of each of the four 64-byte products of 6-bit
// quants and activations, times their group's scale; lanes 0…7 less 32 times the
// scaled activation sums of groups 2L and 2L+1) are scaled by d·dy into sixteen float
// lanes, reduced as the assembly does.
func q6kx4Go(nb int, w []byte, stride int, x []byte, out *[4]float32) {
	for r := range 4 {
		row := w[r*stride:]
		var acc [16]float32
		for b := range nb {
			blk := row[210*b : 210*b+210]
			a := x[292*b : 292*b+292]
			var sc, bs [16]int32
			for g := range 16 {
				sc[g] = int32(int8(blk[192+g]))
				bs[g] = int32(int16(binary.LittleEndian.Uint16(a[260+2*g:])))
			}
			var iacc [16]int32
			for p := range 4 {
				n, hi := p/2, p%2
				for i := range 64 {
					k, l := 2*hi+i/32, i%32
					qb := blk[64*n+l+32*(k&1)]
					q := int32(qb & 15)
					if hi == 1 {
						q = int32(qb >> 4)
					}
					q |= int32(blk[128+32*n+l]>>(2*k)&3) << 4
					y := int32(int8(a[4+128*n+64*hi+i]))
					iacc[i/4] += q * y * sc[8*n+4*hi+i/16]
				}
			}
			for i := range 8 {
				iacc[i] -= 32 * (sc[2*i]*bs[2*i] + sc[2*i+1]*bs[2*i+1])
			}
			d := f16At(blk[208:]) * math.Float32frombits(binary.LittleEndian.Uint32(a[0:]))
			for l := range 16 {
				acc[l] = fma32(float32(iacc[l]), d, acc[l])
			}
		}
		out[r] = reduce16(&acc)
	}
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

// f16x4Go is the pure-Go twin of the f16x4 kernels: per row, two sets of sixteen
// float lanes (elements 32s+L and 32s+16+L) accumulated with fused multiply-adds,
// added lane by lane and reduced as the assembly does.
func f16x4Go(n32 int, w []byte, stride int, x []byte, out *[4]float32) {
	for r := range 4 {
		row := w[r*stride:]
		var lo, hi [16]float32
		for s := range n32 {
			for l := range 16 {
				e0, e1 := 32*s+l, 32*s+16+l
				lo[l] = fma32(f16At(row[2*e0:]), math.Float32frombits(binary.LittleEndian.Uint32(x[4*e0:])), lo[l])
				hi[l] = fma32(f16At(row[2*e1:]), math.Float32frombits(binary.LittleEndian.Uint32(x[4*e1:])), hi[l])
			}
		}
		for l := range lo {
			lo[l] += hi[l]
		}
		out[r] = reduce16(&lo)
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
	c.pool.Run(j.n, c.run)
	j.kind = taskF16Gemm
	c.pool.Run((j.rows+f16GemmRows-1)/f16GemmRows, c.run)
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
