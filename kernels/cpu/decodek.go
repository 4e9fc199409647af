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

// halfKern is the float path of one 16-bit weight type (F16 or BF16). The activations
// are rounded to the weight type (its VecDotType), widened to float32 once per
// conversion (exact), and multiplied with the weights widened in registers, sixteen
// float lanes per output (element 16s+L in lane L) accumulated with fused
// multiply-adds in element order and reduced as the assembly does (reduce16, or
// reduce8 for the eight lanes of the AVX2 kernels; see dotGo). x4 (one token, four
// rows) and gemm (up to four tokens, four rows) sum every output in that one order, so
// a row's product is the same whichever kernel computes it and whatever the batch.
type halfKern struct {
	at func(b []byte) float32 // one stored value (little-endian) as float32
	// widen converts a row of stored activations to float32 (widenGo's output), or
	// copies them for the pairs kernels.
	widen   func(xq, dst []byte)
	widenGo func(xq, dst []byte)
	// x4 computes four rows (w, w[stride:], w[2·stride:], w[3·stride:]) times one
	// widened activation row over n32 steps of 32 elements; nil where the CPU lacks it.
	x4 func(n32 int, w []byte, stride int, x []byte, out *[4]float32)
	// rows computes nrows rows (w, w[stride:], …) times one activation row into
	// out[:nrows] (the rows of four quarters of the range at a time), each summed as
	// x4 sums it (the pairs order for the pairs kernels); nil where the CPU lacks it
	// (x4 then serves decode).
	rows func(n32 int, w []byte, stride, nrows int, x []byte, out []float32)
	// rowsWarm is rows without its software prefetch where rows prefetches ahead of
	// its streams (quartersPF), for weights that stay in cache (job.warm); nil elsewhere.
	rowsWarm func(n32 int, w []byte, stride, nrows int, x []byte, out []float32)
	// gemm computes four rows (w[r·wstride:]) times float32 token rows x[t·xstride:]
	// (tokens t ≥ ntok repeat token ntok−1) over n16 steps of 16 elements into
	// out[4t+r]; nil where the CPU lacks it.
	gemm func(n16 int, w []byte, wstride int, x []byte, xstride, ntok int, out *[16]float32)
	// gemm6 is gemm for four rows and six tokens (the same sums as gemm's), storing
	// token t's four at out[t·ostride:][:4] for t < ntok only (straight into the
	// matrix of outputs), nil where the CPU lacks it (the pairs kernels of AVX512-BF16
	// have it: 24 products per four weight loads where gemm has 16).
	gemm6 func(n16 int, w []byte, wstride int, x []byte, xstride, ntok int, out []float32, ostride int)
	gr    int // rows per gemm call: 4 (AVX-512), or 3 (AVX2: out[4t+r] for r < 3)
	// lanes is the kernels' number of float lanes: 16 (AVX-512) or 8 (AVX2).
	lanes int
	// pairs marks the bfloat16 kernels of CPUs with AVX512-BF16 (VDPBF16PS): the
	// activations stay bfloat16 (widen copies them, 2 bytes each) and each output's
	// 16 lanes sum element pairs, lane L taking element 32s+2L+1 and then 32s+2L of
	// every step s of 32 (dotPairsGo); gemm takes an even n16.
	pairs bool
}

// actBytes is the bytes per element of the activations the kernels take: float32, or
// bfloat16 for the pairs kernels.
func (h *halfKern) actBytes() int {
	if h.pairs {
		return 2
	}
	return 4
}

// halfKerns holds the float paths of F16 and BF16 weights; init fills in the assembly
// kernels where the CPU has them (simd_amd64.go).
var halfKerns = map[kernels.DType]*halfKern{
	kernels.F16:  {at: f16At, widen: prepF16Go, widenGo: prepF16Go, gr: 4, lanes: 16},
	kernels.BF16: {at: bf16At, widen: prepBF16Go, widenGo: prepBF16Go, gr: 4, lanes: 16},
}

// plainBF16 is the float32 BF16 path where the pairs path (pairsBF16, amd64) replaced
// it, nil elsewhere: kept so the tests still check its kernels on CPUs that do not
// run them.
var plainBF16 *halfKern

func bf16At(b []byte) float32 { return kernels.BF16ToF32(binary.LittleEndian.Uint16(b)) }

// prepF16Go widens fp16 values to float32.
func prepF16Go(xq, dst []byte) {
	for i := range len(xq) / 2 {
		v := kernels.F16ToF32(binary.LittleEndian.Uint16(xq[2*i:]))
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

// copyActs is the pairs kernels' widen: they take the bfloat16 activations as they are.
func copyActs(xq, dst []byte) { copy(dst, xq) }

// prepBF16Go widens bfloat16 values to float32.
func prepBF16Go(xq, dst []byte) {
	for i := range len(xq) / 2 {
		binary.LittleEndian.PutUint32(dst[4*i:], uint32(binary.LittleEndian.Uint16(xq[2*i:]))<<16)
	}
}

// dotGo is one product of n elements (row w, widened activations x) in the order of
// the kernels: h.lanes float lanes (element e in lane e mod lanes) accumulated with
// fused multiply-adds in element order, reduced as the assembly does.
func (h *halfKern) dotGo(w, x []byte, n int) float32 {
	if h.pairs {
		return dotPairsGo(w, x, n)
	}
	var acc [16]float32
	for e := range n {
		l := e % h.lanes
		acc[l] = fma32(h.at(w[2*e:]), math.Float32frombits(binary.LittleEndian.Uint32(x[4*e:])), acc[l])
	}
	if h.lanes == 8 {
		return reduce8((*[8]float32)(acc[:8]))
	}
	return reduce16(&acc)
}

// dotPairsGo is the pairs kernels' product of n bfloat16 weights w and activations
// x (n even): lane L adds element 32s+2L+1's product and then element 32s+2L's, each
// rounded once (the products of two bfloat16 values are exact in float32, so each
// step is fma32), with VDPBF16PS's denormal rule: inputs that are denormal read as
// zero, denormal sums flush to zero. The lanes are reduced as RED16 does.
func dotPairsGo(w, x []byte, n int) float32 {
	var acc [16]float32
	for e := 0; e+1 < n; e += 2 {
		l := e % 32 / 2
		for _, k := range [2]int{e + 1, e} {
			acc[l] = flushDenormal(fma32(flushDenormal(bf16At(w[2*k:])), flushDenormal(bf16At(x[2*k:])), acc[l]))
		}
	}
	return reduce16(&acc)
}

// flushDenormal returns f, or a zero of f's sign where f is denormal.
func flushDenormal(f float32) float32 {
	if b := math.Float32bits(f); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return f
}

// x4Go is the pure-Go twin of the x4 kernels.
func (h *halfKern) x4Go(n32 int, w []byte, stride int, x []byte, out *[4]float32) {
	for r := range 4 {
		out[r] = h.dotGo(w[r*stride:], x, 32*n32)
	}
}

// gemmGo is the pure-Go twin of the gemm kernels (h.gr rows; the other outputs are
// left as they are).
func (h *halfKern) gemmGo(n16 int, w []byte, wstride int, x []byte, xstride, ntok int, out *[16]float32) {
	for t := range 4 {
		xt := x[min(t, ntok-1)*xstride:]
		for r := range h.gr {
			out[4*t+r] = h.dotGo(w[r*wstride:], xt, 16*n16)
		}
	}
}

// gemm6Toks is the fewest tokens a product takes the six-token kernel (gemm6) for.
const gemm6Toks = 32

// halfGemmRows is about the band of weight rows one part of gemmHalf covers: the
// multiple of the kernel's row group nearest above it (partRows), so that only a
// matrix's last part has a row tail (a tail row runs a whole group's kernel alone).
const halfGemmRows = 16

// sixGemmRows is halfGemmRows for the six-token kernel, where there are at least
// four parts per thread: each group of six tokens reads its activations from the L3
// cache once per part, and BenchmarkMatMul F16 n512 ran 1.03–1.06× faster with 32
// rows than with 16 (AMD Zen 5, 2 threads).
const sixGemmRows = 32

// partRows is the rows of one part of gemmHalf for kernels of gr rows: 16 for four,
// 18 for three (sixteen would leave a one-row tail in every part, and the AVX2
// kernel would compute 18 rows' products for 16).
func partRows(gr int) int { return (halfGemmRows + gr - 1) / gr * gr }

// halfSix reports whether gemmHalf takes the six-token kernel for the job.
func (j *job) halfSix() bool { return j.hk.gemm6 != nil && j.n >= gemm6Toks }

// widenActs makes c.xp hold the n activation rows of the current job widened to
// float32 (once per conversion: Q, K and V, gate and up take the same activations),
// in parallel when there are several.
func (c *CPU) widenActs() {
	j := &c.job
	j.gBytes = j.hk.actBytes() * j.cols
	if c.xpGen != c.qGen || c.xpType != j.vtID || len(c.xp) != j.n*j.gBytes {
		c.xp = grow(c.xp, j.n*j.gBytes)
		j.act = c.xp
		if j.n == 1 {
			j.hk.widen(j.xq[:j.xRow], c.xp)
		} else {
			j.kind = taskHalfPrep
			c.runWork(j.n, j.n*j.cols)
		}
		c.xpGen, c.xpType = c.qGen, j.vtID
	}
	j.act = c.xp
}

// gemmHalf is MatMul's path for F16 and BF16 weights and more than one token: each
// part takes a band of weight rows (partRows, or sixGemmRows; job.band) and, for blocks of tokens that fit in
// the L2 cache, runs the gemm kernel on every group of (up to) four tokens and, for
// each, every group of its rows (four, or three at the AVX2 level), so a step reads
// each weight once however many tokens it serves. Tokens outside, rows inside: the
// part's rows (half the bytes of float32 activations) are what each group of tokens
// reads again from the L2 cache. Rows outside read each row group's activations again
// instead: BenchmarkMatMul F16 n512 ran 5–9 % slower that way on a 2-core AMD EPYC
// (Zen 5; BF16, with activations as narrow as its weights, within ±2 %). A row tail
// repeats a row (stride 0), so every output is computed in the same order wherever it
// falls.
func (c *CPU) gemmHalf() (parts, work int) {
	j := &c.job
	c.widenActs()
	j.kind = taskHalfGemm
	j.band = partRows(j.hk.gr)
	if j.halfSix() && j.rows >= 4*c.threads*sixGemmRows {
		j.band = sixGemmRows
	}
	return (j.rows + j.band - 1) / j.band, j.rows * j.cols * j.n
}

// gemmHalfRows computes one part of gemmHalf.
func (c *CPU) gemmHalfRows(j *job, part, worker int) {
	out := c.gemmScr[worker].out[:24]
	r0, r1 := part*j.band, min(j.rows, (part+1)*j.band)
	wRow, xRow := 2*j.cols, j.gBytes
	tb := max(4, (256<<10)/xRow&^3) // tokens per block: 256 KiB of activations
	six := j.halfSix()
	if six { // whole groups of six (a block of eight was six and a padded two)
		tb = max(6, (256<<10)/xRow/6*6)
	}
	for t0 := 0; t0 < j.n; t0 += tb {
		t1 := min(j.n, t0+tb)
		gr := j.hk.gr
		for t := t0; t < t1; {
			// Six tokens at a time in a prompt where the CPU has the kernel, else up to
			// four: batched decode steps of 8 and 16 tokens ran 8–17 % slower with six
			// (6+2: ten tokens' products for eight), 64 and 512 tokens 1.0–1.1× faster.
			nt := min(4, t1-t)
			if six && t1-t >= 6 {
				nt = 6
			}
			for r := r0; r < r1; r += gr {
				nr := min(gr, r1-r)
				// A full group of rows takes one call per group of tokens; a tail one call
				// per row (stride 0, so the kernel repeats it).
				rc, rs, rn := 1, wRow, gr
				if nr < gr {
					rc, rs, rn = nr, 0, 1
				}
				for a := range rc {
					ra := r + a
					if nt > 4 && rn == 4 { // straight into the outputs
						j.hk.gemm6(j.cols/16, j.w.Data[ra*wRow:], rs, j.act[t*xRow:], xRow, nt, j.dst[t*j.rows+ra:], j.rows)
						continue
					}
					if nt > 4 {
						j.hk.gemm6(j.cols/16, j.w.Data[ra*wRow:], rs, j.act[t*xRow:], xRow, nt, out, 4)
					} else {
						j.hk.gemm(j.cols/16, j.w.Data[ra*wRow:], rs, j.act[t*xRow:], xRow, nt, (*[16]float32)(out[:16]))
					}
					for k := range nt {
						row := (t + k) * j.rows
						copy(j.dst[row+ra:row+ra+rn], out[4*k:4*k+rn])
					}
				}
			}
			t += nt
		}
	}
}
