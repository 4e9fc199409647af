package cpu

import "llmbench/kernels"

// batch2 holds, per weight type (MXFP4), the AVX2 batched kernel where the CPU has
// AVX2 but the VNNI tile kernels do not run (no AVX512-VNNI, or LLMBENCH_CPU=avx2; Q4_0,
// Q8_0, Q4_K, Q6_K and IQ4_NL take the AVX2 tile kernels there): two
// weight rows (w, w[wstride:]) times the Q8_0 activations of up to four tokens
// (x[t·xstride:]) over nb blocks of 32, into out[4r+t] (for tokens t ≥ ntok, out is
// unspecified; the kernels read token ntok−1 again or skip them). Each weight block is unpacked once per call and used for every token,
// and a step multiplies every token with a pair of rows while the rows are in the L1
// cache, so a batched decode step reads each weight from memory once. The order of
// each product is batch2Go's, whatever the number of tokens.
var batch2 = map[kernels.DType]func(nb int, w []byte, wstride int, x []byte, xstride, ntok int, out *[8]float32){}

// reduce8 sums eight lanes in the order of the assembly's HSUM.
func reduce8(a *[8]float32) float32 {
	var h [4]float32
	for i := range h {
		h[i] = a[i] + a[i+4]
	}
	return (h[0] + h[1]) + (h[2] + h[3])
}

// weightQuants returns the 32 signed quants (levels) of one block of a batch2 type
// (MXFP4: elements 0..15 in the low nibbles, 16..31 in the high ones), and its scale
// factor.
func weightQuants(t kernels.DType, blk []byte) (q [32]int32, d float32) {
	if t != kernels.MXFP4 {
		panic("cpu: no batch2 kernel for " + t.String())
	}
	for e := range q {
		q[e] = int32(int8(lutSignedMXFP4[blk[1+e%16]>>(4*(e/16))&15]))
	}
	return q, e8m0Halves[blk[0]]
}

// batch2Go is the pure-Go twin of the batch2 kernels of type t: per product eight
// float lanes, lane m taking elements 4m..4m+3 of every block, accumulated as
// fma(float32(Σ w·x), dw·dx, acc) block by block and reduced as reduce8 does.
func batch2Go(t kernels.DType, nb int, w []byte, wstride int, x []byte, xstride, ntok int, out *[8]float32) {
	bs := t.BlockBytes()
	for r := range 2 {
		for tk := range 4 {
			xt := x[min(tk, ntok-1)*xstride:]
			var acc [8]float32
			for b := range nb {
				wb := w[r*wstride+b*bs:]
				xb := xt[34*b:]
				q, dw := weightQuants(t, wb)
				d := dw * f16At(xb)
				for m := range 8 {
					var s int32
					for k := 4 * m; k < 4*m+4; k++ {
						s += q[k] * int32(int8(xb[2+k]))
					}
					acc[m] = fma32(float32(s), d, acc[m])
				}
			}
			out[4*r+tk] = reduce8(&acc)
		}
	}
}

// bandB2 computes rows [r0, r1) of the current job for every token with its batch2
// kernel: per pair of rows (a last odd row repeats itself, stride 0), every group of
// up to four tokens. out is the worker's scratch.
func (c *CPU) bandB2(j *job, r0, r1 int, out *[8]float32) {
	nb := j.cols / 32
	for r := r0; r < r1; r += 2 {
		k, ws := 2, j.wRow
		if r+1 >= r1 {
			k, ws = 1, 0
		}
		for t := 0; t < j.n; t += 4 {
			nt := min(4, j.n-t)
			j.b2(nb, j.w.Data[r*j.wRow:], ws, j.xq[t*j.xRow:], j.xRow, nt, out)
			for i := range nt {
				row := j.dst[(t+i)*j.rows+r:]
				for a := range k {
					row[a] = out[4*a+i]
				}
			}
		}
	}
}
