//go:build amd64 && !purego

package cpu

import (
	"math"
	"unsafe"

	"golang.org/x/sys/cpu"

	"llmbench/kernels"
)

// Assembly kernels (dot_amd64.s). The dot products take ggml block layouts; nb is the
// number of blocks (or of 32-element steps for F32 and F16).

//go:noescape
func dotQ8_0AVX2(nb int, w, x *byte) float32

//go:noescape
func dotQ8_0VNNI(nb int, w, x *byte) float32

//go:noescape
func dotQ4_0AVX2(nb int, w, x *byte) float32

//go:noescape
func dotQ4_0VNNI(nb int, w, x *byte) float32

//go:noescape
func dotF32FMA(n32 int, w, x *float32) float32

//go:noescape
func dotF32FMArows(n32 int, w *float32, wstride, nrows int, x, out *float32)

//go:noescape
func dotF32FMAxN(n32 int, w, x *float32, xstride, ntok int, dst *float32, dstride int)

//go:noescape
func dotF16FMA(n32 int, w, x *uint16) float32

//go:noescape
func dotQ4_KAVX2(nb int, w, x *byte) float32

//go:noescape
func dotQ6_KAVX2(nb int, w, x *byte) float32

//go:noescape
func dotF32F16(n8 int, a *float32, b *uint16) float32

//go:noescape
func dotF32x8(n8 int, a, b *float32) float32

//go:noescape
func axpyF32x8(n8 int, w float32, v, out *float32)

//go:noescape
func axpyF16x8(n8 int, w float32, v *uint16, out *float32)

//go:noescape
func scoresF16x8(n int, q *float32, n8 int, k *uint16, stride int, scale float32, out *float32)

//go:noescape
func scoresF32x8(n int, q *float32, n8 int, k *float32, stride int, scale float32, out *float32)

//go:noescape
func scoresF16x16(n int, q *float32, n8 int, k *uint16, stride int, scale float32, out *float32)

//go:noescape
func scoresF32x16(n int, q *float32, n8 int, k *float32, stride int, scale float32, out *float32)

//go:noescape
func accumF16x8(n int, w *float32, v *uint16, stride int, n8 int, acc *float32)

//go:noescape
func accumF32x8(n int, w *float32, v *float32, stride int, n8 int, acc *float32)

//go:noescape
func accumF32x16pair(n int, w0, w1 *float32, v *float32, stride int, n16 int, acc0, acc1 *float32)

//go:noescape
func expSumx8(n int, s *float32, m float32, c *expVec) float64

//go:noescape
func expSumx16(n int, s *float32, m float32, c *expVec) float64

//go:noescape
func maxF32x8(n8 int, s *float32, m float32) float32

//go:noescape
func scaleF32x8(n8 int, s *float32, f float32)

//go:noescape
func dequantQ8x8(nb int, b *byte, dst *float32)

// widenF16x8 is widenF16Rows for n rows of n8 chunks of eight, row i at src +
// i·stride bytes (attend_tile_amd64.s); widenF16x8pf also prefetches the rows ahead
// and the rows at also.
//
//go:noescape
func widenF16x8(n int, src *uint16, stride int, n8 int, dst *float32, also *uint16)

//go:noescape
func widenF16x8pf(n int, src *uint16, stride int, n8 int, dst *float32, also *uint16)

// prefetchRows prefetches the lines of n rows of the given bytes, row i at p +
// i·stride (attend_tile_amd64.s).
//
//go:noescape
func prefetchRows(n int, p *byte, stride int, bytes int)

// dequantQ8x8rows is dequantRows for n rows of nb blocks, row i at src + i·stride
// bytes (attend_tile_amd64.s); dequantQ8x8rowspf also prefetches as widenF16x8pf.
//
//go:noescape
func dequantQ8x8rows(n int, src *byte, stride int, nb int, dst *float32, also *byte)

//go:noescape
func dequantQ8x8rowspf(n int, src *byte, stride int, nb int, dst *float32, also *byte)

//go:noescape
func dotF16rows(n32 int, w *byte, stride, nrows int, x *byte, out *float32)

// dotF16rowsPF and dotBF16dpRowsPF are dotF16rows and dotBF16dpRows with software
// prefetch on the four streams (quarterPrefetch): the same sums.
//
//go:noescape
func dotF16rowsPF(n32 int, w *byte, stride, nrows int, x *byte, out *float32)

//go:noescape
func dotBF16dpRowsPF(n32 int, w *byte, stride, nrows int, x *byte, out *float32)

// dotF16rows8 and dotBF16rows8 are dotF16rows and dotBF16rows for the eight-lane
// (AVX2) kernels' order (half_avx2_amd64.s).
//
//go:noescape
func dotF16rows8(n32 int, w *byte, stride, nrows int, x *byte, out *float32)

//go:noescape
func dotBF16rows8(n32 int, w *byte, stride, nrows int, x *byte, out *float32)

//go:noescape
func dotBF16rows(n32 int, w *byte, stride, nrows int, x *byte, out *float32)

//go:noescape
func dotF16x4(n32 int, w *byte, stride int, x *byte, out *[4]float32)

//go:noescape
func dotBF16x4(n32 int, w *byte, stride int, x *byte, out *[4]float32)

//go:noescape
func gemmF16x4(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *[16]float32)

//go:noescape
func gemmBF16x4(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *[16]float32)

//go:noescape
func gemmF16x6(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *float32, ostride int)

//go:noescape
func gemmBF16x6(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *float32, ostride int)

//go:noescape
func gemmBF16dp6(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *float32, ostride int)

//go:noescape
func tileQ4x4(nu int, tile, act *byte, out *[64]float32)

// tileQ4x4AVX2 and tileQ4x1AVX2 are tileQ4x4 and tileQ4x1 for CPUs with AVX2 but
// without AVX512-VNNI (tile_avx2_amd64.s): the same results bit for bit.
//
//go:noescape
func tileQ4x4AVX2(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ4x1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)

// tileQ4x1mAVX2 is tileQ4x1AVX2 on four tiles at once (the x1m kernel of the AVX2
// level).
//
//go:noescape
func tileQ4x1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// tileQ4x4AVXVNNI, tileQ8x4AVXVNNI and the others below are the four-token AVX2 kernels
// of their types with AVX-VNNI (VPDPBUSD on ymm): the same results bit for bit.
//
//go:noescape
func tileQ4x4AVXVNNI(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ8x4AVXVNNI(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ4Kx4AVXVNNI(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ6Kx4AVXVNNI(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ3Kx4AVXVNNI(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ41x4AVXVNNI(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ50x4AVXVNNI(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ51x4AVXVNNI(nu int, tile, act *byte, out *[64]float32)

// tileQ4x1AVXVNNI, tileQ4x1mAVXVNNI and the others below are the one-token and
// four-tile AVX2 kernels of their types with AVX-VNNI: the same results bit for bit.
//
//go:noescape
func tileQ4x1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ8x1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ4Kx1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ6Kx1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ4x1mAVXVNNI(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ8x1mAVXVNNI(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ4Kx1mAVXVNNI(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ6Kx1mAVXVNNI(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileIQ4NLx4AVXVNNI(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileIQ4NLx1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileIQ4NLx1mAVXVNNI(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileIQ4XSx4AVXVNNI(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileIQ4XSx1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileIQ4XSx1mAVXVNNI(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ41x1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ50x1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ51x1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ5Kx4AVXVNNI(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ5Kx1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ3Kx1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ2Kx1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ2Kx4AVXVNNI(nu int, tile, act *byte, out *[64]float32)

// tileQ8x4AVX2 and tileQ8x1AVX2 are tileQ8x4 and tileQ8x1 for CPUs with AVX2 but
// without AVX512-VNNI: the same results bit for bit.
//
//go:noescape
func tileQ8x4AVX2(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ8x1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)

// tileQ4Kx4AVX2 and tileQ4Kx1AVX2 are tileQ4Kx4 and tileQ4Kx1 for CPUs with AVX2 but
// without AVX512-VNNI: the same results bit for bit.
//
//go:noescape
func tileQ4Kx4AVX2(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ4Kx1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)

// tileQ4Kx1mAVX2 is tileQ4Kx1AVX2 on four tiles at once.
//
//go:noescape
func tileQ4Kx1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// tileQ5Kx4AVX2 and tileQ5Kx1AVX2 are tileQ5Kx4 and tileQ5Kx1 for CPUs with AVX2 but
// without AVX512-VNNI: the same results bit for bit.
//
//go:noescape
func tileQ5Kx4AVX2(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ5Kx1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)

// tileQ5Kx1mAVX2 is tileQ5Kx1AVX2 on four tiles at once.
//
//go:noescape
func tileQ5Kx1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// tileQ3Kx4AVX2, tileQ3Kx1AVX2 and tileQ3Kx1mAVX2 are tileQ3Kx4, tileQ3Kx1 and the
// four-tile kernel for CPUs with AVX2 but without AVX512-VNNI: the same results bit for
// bit.
//
//go:noescape
func tileQ3Kx4AVX2(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ3Kx1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ3Kx1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// tileQ6Kx4AVX2 and tileQ6Kx1AVX2 are tileQ6Kx4 and tileQ6Kx1 for CPUs with AVX2 but
// without AVX512-VNNI: the same results bit for bit.
//
//go:noescape
func tileQ6Kx4AVX2(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ6Kx1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)

// tileQ6Kx1mAVX2 is tileQ6Kx1AVX2 on four tiles at once.
//
//go:noescape
func tileQ6Kx1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// tileIQ4NLx4AVX2 and tileIQ4NLx1AVX2 are tileIQ4NLx4 and tileIQ4NLx1 for CPUs with
// AVX2 but without AVX512-VNNI: the same results bit for bit.
//
//go:noescape
func tileIQ4NLx4AVX2(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileIQ4NLx1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)

// tileIQ4NLx1mAVX2 is tileIQ4NLx1AVX2 on four tiles at once.
//
//go:noescape
func tileIQ4NLx1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// tileIQ4XSx1mAVX2 is tileIQ4XSx1AVX2 on four tiles at once (tileQ4Kx1mAVX2's walk).
//
//go:noescape
func tileIQ4XSx1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// tileQ8x1mAVX2 is tileQ8x1AVX2 on four tiles at once (tileQ4x1mAVX2's walk), with
// software prefetch.
//
//go:noescape
func tileQ8x1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// tileIQ4XSx4AVX2 and tileIQ4XSx1AVX2 are tileIQ4XSx4 and tileIQ4XSx1 for CPUs with
// AVX2 but without AVX512-VNNI: the same results bit for bit.
//
//go:noescape
func tileIQ4XSx4AVX2(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileIQ4XSx1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ8x4(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ4Kx4(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ6Kx4(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ4x1m(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ8x1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ4x1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ4x1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ6Kx1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ5Kx1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ4Kx1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ3Kx1m(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ2Kx1m(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ8x1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ4Kx1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ6Kx1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ4x1(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ8x1(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ4Kx1(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ6Kx1(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ4x1np(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ8x1np(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ4Kx1np(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ6Kx1np(nu int, tile, act *byte, tok int, out *[16]float32)

// tileQ5Kx4, tileQ5Kx1 and tileQ5Kx1np are the Q4_K kernels for Q5_K tiles (the fifth
// bits added to the nibbles).
//
//go:noescape
func tileQ5Kx4(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ5Kx1(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ5Kx1np(nu int, tile, act *byte, tok int, out *[16]float32)

// The Q4_1 (tileQ41…), Q5_0 (tileQ50…) and Q5_1 (tileQ51…) tile kernels: four tokens,
// one token, and one token without software prefetch.
//
//go:noescape
func tileQ41x4(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ41x1(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ41x1np(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ50x4(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ50x1(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ50x1np(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ51x4(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ51x1(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ51x1np(nu int, tile, act *byte, tok int, out *[16]float32)

// The Q4_1, Q5_0 and Q5_1 tile kernels for CPUs with AVX2 but without AVX512-VNNI:
// the same results bit for bit.
//
//go:noescape
func tileQ41x4AVX2(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ41x1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ50x4AVX2(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ50x1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ51x4AVX2(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ51x1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)

// tileQ2Kx4, tileQ2Kx1, tileQ2Kx1np and tileQ2Kx1mnp are the Q2_K tile kernels (the
// two-bit chunks of Q3_K's, the mins of Q4_K's).
//
//go:noescape
func tileQ2Kx4(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ2Kx1(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ2Kx1np(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ2Kx1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// tileQ2Kx4AVX2, tileQ2Kx1AVX2 and tileQ2Kx1mAVX2 are the Q2_K kernels for CPUs with
// AVX2 but without AVX512-VNNI: the same results bit for bit.
//
//go:noescape
func tileQ2Kx4AVX2(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ2Kx1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ2Kx1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// tileQ3Kx4, tileQ3Kx1, tileQ3Kx1np and tileQ3Kx1mnp are the Q6_K kernels for Q3_K
// tiles (3-bit quants: crumbs and high bits).
//
//go:noescape
func tileQ3Kx4(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileQ3Kx1(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ3Kx1np(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileQ3Kx1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ5Kx1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileIQ4NLx1np(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileMXFP4x1np(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileIQ4XSx1np(nu int, tile, act *byte, tok int, out *[16]float32)

// setAVXVNNI puts the AVX2 level's AVX-VNNI kernels in place of the AVX2 ones that do
// the same sums with VPMADDUBSW: the four-token kernels of Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS (prompts), the one-token ones
// of the same types and the four-tile ones of Q4_0, Q8_0, Q4_K, Q6_K, IQ4_NL and IQ4_XS
// (decode). The CPUs with AVX-VNNI but no AVX512-VNNI are Intel's (Core from Alder
// Lake on, Xeon 6 with E-cores), which decode one tile at a time (adjacent order); the
// four-tile kernels run where LLMBENCH_CPU=avxvnni caps an AMD Zen 4 or Zen 5, so that
// level decodes in the same walk as the AVX2 one there.
func setAVXVNNI() {
	type kerns struct {
		x4  func(int, *byte, *byte, *[64]float32)
		x1  func(int, *byte, *byte, int, *[16]float32)
		x1m x1mFn
	}
	for t, k := range map[kernels.DType]kerns{
		kernels.Q4_0:   {tileQ4x4AVXVNNI, tileQ4x1AVXVNNI, tileQ4x1mAVXVNNI},
		kernels.Q8_0:   {tileQ8x4AVXVNNI, tileQ8x1AVXVNNI, tileQ8x1mAVXVNNI},
		kernels.Q4_K:   {tileQ4Kx4AVXVNNI, tileQ4Kx1AVXVNNI, tileQ4Kx1mAVXVNNI},
		kernels.Q6_K:   {tileQ6Kx4AVXVNNI, tileQ6Kx1AVXVNNI, tileQ6Kx1mAVXVNNI},
		kernels.IQ4_NL: {tileIQ4NLx4AVXVNNI, tileIQ4NLx1AVXVNNI, tileIQ4NLx1mAVXVNNI},
		kernels.IQ4_XS: {tileIQ4XSx4AVXVNNI, tileIQ4XSx1AVXVNNI, tileIQ4XSx1mAVXVNNI},
		kernels.Q4_1:   {x4: tileQ41x4AVXVNNI, x1: tileQ41x1AVXVNNI},
		kernels.Q5_0:   {x4: tileQ50x4AVXVNNI, x1: tileQ50x1AVXVNNI},
		kernels.Q5_1:   {x4: tileQ51x4AVXVNNI, x1: tileQ51x1AVXVNNI},
		kernels.Q5_K:   {x4: tileQ5Kx4AVXVNNI, x1: tileQ5Kx1AVXVNNI},
		kernels.Q3_K:   {x4: tileQ3Kx4AVXVNNI, x1: tileQ3Kx1AVXVNNI},
		kernels.Q2_K:   {x4: tileQ2Kx4AVXVNNI, x1: tileQ2Kx1AVXVNNI},
	} {
		tileFmts[t].x4, avxVNNI[t] = k.x4, vnniX4
		if k.x1 != nil {
			tileFmts[t].x1, avxVNNI[t] = k.x1, avxVNNI[t]|vnniX1
		}
		if m := x1mKernels[t]; k.x1m != nil {
			for i := range m { // the same walk (Q8_0: with prefetch), AVX-VNNI sums
				if m[i] != nil {
					m[i] = k.x1m
				}
			}
			x1mKernels[t], avxVNNI[t] = m, avxVNNI[t]|vnniX1m
		}
	}
}

func init() {
	x := &cpu.X86
	if !x.HasAVX2 || !x.HasFMA || !x.HasF16C || !allowed(capAVX2) {
		return
	}
	level = "avx2"
	dotF32s = func(a, b []float32) float32 {
		n8 := len(a) / 8
		var s float32
		if n8 > 0 {
			_ = b[len(a)-1]
			s = dotF32x8(n8, &a[0], &b[0])
		}
		for i := n8 * 8; i < len(a); i++ {
			s += a[i] * b[i]
		}
		return s
	}
	dotF16s = func(a []float32, b []uint16) float32 {
		n8 := len(a) / 8
		var s float32
		if n8 > 0 {
			_ = b[len(a)-1]
			s = dotF32F16(n8, &a[0], &b[0])
		}
		for i := n8 * 8; i < len(a); i++ {
			s += a[i] * kernels.F16ToF32(b[i])
		}
		return s
	}
	axpyF32s = func(out []float32, w float32, v []float32) {
		n8 := len(out) / 8
		if n8 > 0 {
			_ = v[len(out)-1]
			axpyF32x8(n8, w, &v[0], &out[0])
		}
		for i := n8 * 8; i < len(out); i++ {
			out[i] += w * v[i]
		}
	}
	// The tile helpers (attend_tile.go) run the rows in assembly when the head size is
	// a multiple of 8, the row kernels' case without a Go tail; otherwise row by row.
	attnTileAsm = true
	prefetchF16Rows = func(k []uint16, n, stride, hd int) {
		if n > 0 && hd > 0 {
			_ = k[(n-1)*stride+hd-1]
			prefetchRows(n, (*byte)(unsafe.Pointer(&k[0])), 2*stride, 2*hd)
		}
	}
	scoresF16s, scoresF32s = scoresOf(scoresF16x8, scoresF16Go), scoresOf(scoresF32x8, scoresF32Go)
	accumF16s = func(acc, w []float32, v []uint16, stride int) {
		if len(w) == 0 || len(acc) == 0 || len(acc)%8 != 0 {
			accumF16Go(acc, w, v, stride)
			return
		}
		_ = v[(len(w)-1)*stride+len(acc)-1]
		accumF16x8(len(w), &w[0], &v[0], 2*stride, len(acc)/8, &acc[0])
	}
	accumF32s = func(acc, w []float32, v []float32, stride int) {
		if len(w) == 0 || len(acc) == 0 || len(acc)%8 != 0 {
			accumF32Go(acc, w, v, stride)
			return
		}
		_ = v[(len(w)-1)*stride+len(acc)-1]
		accumF32x8(len(w), &w[0], &v[0], 4*stride, len(acc)/8, &acc[0])
	}
	widenF16Rows = func(dst []float32, src, also []uint16, stride, hd int, ahead bool) {
		n := len(dst) / max(hd, 1)
		if n == 0 || hd%8 != 0 {
			widenF16RowsGo(dst, src, also, stride, hd, ahead)
			return
		}
		_ = src[(n-1)*stride+hd-1]
		if !ahead {
			widenF16x8(n, &src[0], 2*stride, hd/8, &dst[0], &src[0])
			return
		}
		pf := &src[0]
		if len(also) > 0 {
			pf = &also[0]
		}
		widenF16x8pf(n, &src[0], 2*stride, hd/8, &dst[0], pf)
	}
	dequantRows = func(dst []float32, q8, also []byte, off, stride, hd int, ahead bool) {
		n := len(dst) / max(hd, 1)
		if n == 0 || off%32 != 0 || stride%32 != 0 || hd%32 != 0 {
			dequantRowsGo(dst, q8, also, off, stride, hd, ahead)
			return
		}
		src := q8[off/32*34:]
		_ = src[(n-1)*stride/32*34+hd/32*34-1]
		if !ahead {
			dequantQ8x8rows(n, &src[0], stride/32*34, hd/32, &dst[0], &src[0])
			return
		}
		pf := &src[0]
		if len(also) > off/32*34 {
			pf = &also[off/32*34]
		}
		dequantQ8x8rowspf(n, &src[0], stride/32*34, hd/32, &dst[0], pf)
	}
	dequantQ8 = func(src []byte, dst []float32) {
		if nb := len(dst) / 32; nb > 0 {
			_, _ = src[34*nb-1], dst[32*nb-1]
			dequantQ8x8(nb, &src[0], &dst[0])
		}
	}
	tileMax = func(s []float32) float32 {
		n8 := len(s) / 8
		m := float32(math.Inf(-1))
		if n8 > 0 {
			m = maxF32x8(n8, &s[0], m)
		}
		for _, v := range s[8*n8:] {
			if v > m {
				m = v
			}
		}
		return m
	}
	scaleScores = func(s []float32, f float32) {
		n8 := len(s) / 8
		if n8 > 0 {
			scaleF32x8(n8, &s[0], f)
		}
		for i := 8 * n8; i < len(s); i++ {
			s[i] *= f
		}
	}
	expSums = expSumsOf(expSumx8)
	axpyF16s = func(out []float32, w float32, v []uint16) {
		n8 := len(out) / 8
		if n8 > 0 {
			_ = v[len(out)-1]
			axpyF16x8(n8, w, &v[0], &out[0])
		}
		for i := n8 * 8; i < len(out); i++ {
			out[i] += w * kernels.F16ToF32(v[i])
		}
	}
	setHalf(kernels.F16, dotF16x4AVX2, gemmF16x3AVX2, 3, 8)
	setHalf(kernels.BF16, dotBF16x4AVX2, gemmBF16x3AVX2, 3, 8)
	toF16Fast, halfKerns[kernels.F16].widen = f16Converters(8, f32ToF16AVX2, f16ToF32AVX2)
	quantQ8_0Fast = q80Fast(quantQ8_0AVX2)
	regroupQ8_0 = func(nb int, row, y, tail []byte, blk, gsz int, k int32) {
		_, _, _ = row[34*nb-1], y[(nb-1)*blk+31], tail[(nb-1)*blk+8*gsz+3]
		regroupQ8_0AVX2(nb, &row[0], &y[0], &tail[0], blk, gsz, k)
	}
	regroupQ8_K = func(nsb int, row, y, tail []byte, blk, gsz, bs int, k int32) {
		nb := nsb * 256 / bs
		_, _, _ = row[292*nsb-1], y[(nb-1)*blk+bs-1], tail[(nb-1)*blk+8*gsz+3]
		regroupQ8_KAVX2(nsb, &row[0], &y[0], &tail[0], blk, gsz, bs, k)
	}
	if quarters() { // as at the AVX-512 level: four long streams per thread on AMD
		halfKerns[kernels.F16].rows = halfRows(dotF16rows8, 128)
		halfKerns[kernels.BF16].rows = halfRows(dotBF16rows8, 128)
	}
	quartersPF = quarterPrefetch()
	q40, q80 := dotQ4_0AVX2, dotQ8_0AVX2
	for _, t := range []kernels.DType{kernels.Q4_0, kernels.Q8_0, kernels.Q4_K, kernels.Q6_K, kernels.F32, kernels.F16} {
		dotISA[t] = "avx2"
	}
	setLUTDots()
	if x.HasAVX512F && x.HasAVX512VL && x.HasAVX512BW && x.HasAVX512VNNI && allowed(capAVX512) {
		level = "avx512vnni"
		q40, q80 = dotQ4_0VNNI, dotQ8_0VNNI
		dotISA[kernels.Q4_0], dotISA[kernels.Q8_0] = "vnni", "vnni"
		setHalf(kernels.F16, dotF16x4, gemmF16x4, 4, 16)
		setHalf(kernels.BF16, dotBF16x4, gemmBF16x4, 4, 16)
		halfKerns[kernels.F16].gemm6 = gemm6Of(gemmF16x6, 1, 64)
		halfKerns[kernels.BF16].gemm6 = gemm6Of(gemmBF16x6, 1, 64)
		scoresF16s, scoresF32s = scoresOf(scoresF16x16, scoresF16Go), scoresOf(scoresF32x16, scoresF32Go)
		attnScores16 = true
		expSums = expSumsOf(expSumx16)
		accumF32Pair = func(acc0, acc1, w0, w1, v []float32, stride int) {
			hd := len(acc0)
			if len(w0) == 0 || hd == 0 || hd%16 != 0 {
				accumF32s(acc0, w0, v, stride)
				accumF32s(acc1, w1, v, stride)
				return
			}
			_, _, _ = acc1[hd-1], w1[len(w0)-1], v[(len(w0)-1)*stride+hd-1]
			accumF32x16pair(len(w0), &w0[0], &w1[0], &v[0], 4*stride, hd/16, &acc0[0], &acc1[0])
		}
		if quarters() { // AMD's default: four long streams per thread read faster on Zen 4
			halfKerns[kernels.F16].rows = halfRows(dotF16rows, 128)
			if h := halfKerns[kernels.F16]; quartersPF { // Zen 5: with software prefetch
				h.rows, h.rowsWarm = halfRows(dotF16rowsPF, 128), h.rows
			}
			halfKerns[kernels.BF16].rows = halfRows(dotBF16rows, 128)
		}
		if x.HasAVX512BF16 {
			plainBF16 = halfKerns[kernels.BF16]
			halfKerns[kernels.BF16] = pairsBF16()
			if !quarters() { // as F16: Intel decodes four adjacent rows
				halfKerns[kernels.BF16].rows = nil
			}
		}
		quantQ8_0Fast = q80Fast(quantQ8_0AVX512)
		quantQ8_KFast = func(src []float32, dst []byte) {
			nb := len(src) / 256
			_ = dst[nb*292-1]
			for i := 0; i < nb; {
				i += quantQ8_KAVX512(nb-i, &src[256*i], &dst[292*i])
				if i < nb {
					kernels.TraitsOf(kernels.Q8_K).FromFloat(src[256*i:256*i+256], dst[292*i:292*i+292])
					i++
				}
			}
		}
		toF16Fast, halfKerns[kernels.F16].widen = f16Converters(16, f32ToF16AVX512, f16ToF32AVX512)
		// The one-token kernels without software prefetch (…np) stream faster on AMD
		// Zen 4 (see PFON in tile_amd64.s); both are kept, and tested, everywhere.
		x1Quarters = quarters()
		for t, k := range map[kernels.DType]struct {
			x4       func(int, *byte, *byte, *[64]float32)
			x1, x1np func(int, *byte, *byte, int, *[16]float32)
		}{
			kernels.Q4_0: {tileQ4x4, tileQ4x1, tileQ4x1np}, kernels.Q8_0: {tileQ8x4, tileQ8x1, tileQ8x1np},
			kernels.Q4_K: {tileQ4Kx4, tileQ4Kx1, tileQ4Kx1np}, kernels.Q6_K: {tileQ6Kx4, tileQ6Kx1, tileQ6Kx1np},
			kernels.IQ4_NL: {tileIQ4NLx4, tileIQ4NLx1, tileIQ4NLx1np}, kernels.MXFP4: {tileMXFP4x4, tileMXFP4x1, tileMXFP4x1np},
			kernels.IQ4_XS: {tileIQ4XSx4, tileIQ4XSx1, tileIQ4XSx1np}, kernels.Q5_K: {tileQ5Kx4, tileQ5Kx1, tileQ5Kx1np},
			kernels.Q3_K: {tileQ3Kx4, tileQ3Kx1, tileQ3Kx1np}, kernels.Q2_K: {tileQ2Kx4, tileQ2Kx1, tileQ2Kx1np},
			kernels.Q4_1: {tileQ41x4, tileQ41x1, tileQ41x1np}, kernels.Q5_0: {tileQ50x4, tileQ50x1, tileQ50x1np},
			kernels.Q5_1: {tileQ51x4, tileQ51x1, tileQ51x1np},
		} {
			tileFmts[t].x4, tileFmts[t].x1 = k.x4, k.x1
			if x1Quarters {
				tileFmts[t].x1 = k.x1np
			}
			x1Both[t] = [2]func(int, *byte, *byte, int, *[16]float32){k.x1, k.x1np}
		}
		tileX4 = tileX4Asm
		// Four tiles at once (x1m) keep a core's read rate up. An Intel Xeon reads four
		// adjacent tiles with software prefetch (measured for Q4_0 and IQ4_NL; the other
		// types keep x1 there). AMD Zen 4 reads one tile from each quarter of a band
		// without prefetch, 64 bytes of each in turn: 2-5 % faster per llama-1b Q4_0 token
		// than one tile at a time with a tile's block at a time, and that 3-6 % again
		// (in-process A/B, alternating tokens), where adjacent tiles with prefetch were
		// 12-15 % slower, and calls alternating between quarters every eight units 7-10 %.
		// AMD Zen 5 reads the quarters with software prefetch (quarterPrefetch), Q4_0,
		// Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS, MXFP4, Q8_0, Q4_K, Q5_K and Q6_K through
		// kernels that prefetch every line just before its load (tileQ4x1mq, tileIQ4NLx1mq,
		// tileIQ4XSx1mq, tileQ8x1mq, tileQ4Kx1mq, tileQ5Kx1mq, tileQ6Kx1mq: llama-1b decode steps ran
		// faster than with the kernels that prefetch in bursts, Q4_K_M 1.054–1.059×,
		// Q5_K_M 1.13–1.14×, IQ4_NL 1.06–1.08×, and than IQ4_XS's one tile at a time,
		// 1.13–1.15×); MXFP4's (tileMXFP4x1mq) read 5632×2048 products over 1 GiB at
		// 53–56 GB/s where one tile at a time read 35–40 (gpt-oss-tiny, whose experts
		// mostly stay in cache, decoded 1.02× faster); Q4_1's, Q5_0's and Q5_1's
		// (tileQ41x1mq, tileQ50x1mq, tileQ51x1mq) made llama-1b decode 1.34–1.39×,
		// 1.11–1.33× and 1.11–1.19× faster than one tile at a time. The IQ4_XS, MXFP4,
		// Q4_1, Q5_0 and Q5_1 four-tile kernels without prefetch (Zen 4's quarters, and
		// weights that stay in cache) are unmeasured on Zen 4.
		x1mKernels[kernels.Q4_0] = [3]x1mFn{tileQ4x1m, tileQ4x1mnp, tileQ4x1mq}
		x1mKernels[kernels.IQ4_NL] = [3]x1mFn{tileIQ4NLx1m, tileIQ4NLx1mnp, tileIQ4NLx1mq}
		x1mKernels[kernels.Q8_0] = [3]x1mFn{nil, tileQ8x1mnp, tileQ8x1mq}
		x1mKernels[kernels.Q4_K] = [3]x1mFn{nil, tileQ4Kx1mnp, tileQ4Kx1mq}
		x1mKernels[kernels.Q6_K] = [3]x1mFn{nil, tileQ6Kx1mnp, tileQ6Kx1mq}
		x1mKernels[kernels.Q5_K] = [3]x1mFn{nil, tileQ5Kx1mnp, tileQ5Kx1mq}
		x1mKernels[kernels.Q3_K] = [3]x1mFn{nil, tileQ3Kx1mnp, tileQ3Kx1m}
		x1mKernels[kernels.Q2_K] = [3]x1mFn{nil, tileQ2Kx1mnp, tileQ2Kx1m}
		x1mKernels[kernels.IQ4_XS] = [3]x1mFn{nil, tileIQ4XSx1mnp, tileIQ4XSx1mq}
		x1mKernels[kernels.MXFP4] = [3]x1mFn{nil, tileMXFP4x1mnp, tileMXFP4x1mq}
		x1mKernels[kernels.Q4_1] = [3]x1mFn{nil, tileQ41x1mnp, tileQ41x1mq}
		x1mKernels[kernels.Q5_0] = [3]x1mFn{nil, tileQ50x1mnp, tileQ50x1mq}
		x1mKernels[kernels.Q5_1] = [3]x1mFn{nil, tileQ51x1mnp, tileQ51x1mq}
		for t := range x1mKernels {
			setX1m(t)
		}
		tileX1m = tileX1mAsm
		tileX1 = tileX1Asm
	}
	if tileX4 == nil { // no VNNI: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS take the AVX2 tile kernels, MXFP4 the batched one
		tileFmts[kernels.Q4_0].x4, tileFmts[kernels.Q4_0].x1 = tileQ4x4AVX2, tileQ4x1AVX2
		tileFmts[kernels.Q8_0].x4, tileFmts[kernels.Q8_0].x1 = tileQ8x4AVX2, tileQ8x1AVX2
		tileFmts[kernels.Q4_K].x4, tileFmts[kernels.Q4_K].x1 = tileQ4Kx4AVX2, tileQ4Kx1AVX2
		tileFmts[kernels.Q5_K].x4, tileFmts[kernels.Q5_K].x1 = tileQ5Kx4AVX2, tileQ5Kx1AVX2
		tileFmts[kernels.Q3_K].x4, tileFmts[kernels.Q3_K].x1 = tileQ3Kx4AVX2, tileQ3Kx1AVX2
		tileFmts[kernels.Q2_K].x4, tileFmts[kernels.Q2_K].x1 = tileQ2Kx4AVX2, tileQ2Kx1AVX2
		tileFmts[kernels.Q4_1].x4, tileFmts[kernels.Q4_1].x1 = tileQ41x4AVX2, tileQ41x1AVX2
		tileFmts[kernels.Q5_0].x4, tileFmts[kernels.Q5_0].x1 = tileQ50x4AVX2, tileQ50x1AVX2
		tileFmts[kernels.Q5_1].x4, tileFmts[kernels.Q5_1].x1 = tileQ51x4AVX2, tileQ51x1AVX2
		tileFmts[kernels.Q6_K].x4, tileFmts[kernels.Q6_K].x1 = tileQ6Kx4AVX2, tileQ6Kx1AVX2
		tileFmts[kernels.IQ4_NL].x4, tileFmts[kernels.IQ4_NL].x1 = tileIQ4NLx4AVX2, tileIQ4NLx1AVX2
		tileFmts[kernels.IQ4_XS].x4, tileFmts[kernels.IQ4_XS].x1 = tileIQ4XSx4AVX2, tileIQ4XSx1AVX2
		tileX4, tileX1, tileX1m = tileX4Asm, tileX1Asm, tileX1mAsm
		// On AMD (quarters), Q4_0, IQ4_NL, IQ4_XS, Q2_K, Q3_K, Q4_K, Q5_K and Q6_K decode read four tiles at once, one from
		// each quarter of a band, as the VNNI level does there (Zen 4 at LLMBENCH_CPU=avx2:
		// Q4_0 tg32 1.25×, Q6_K's 6 % on Q4_K_M; Zen 5 at LLMBENCH_CPU=avx2: llama-1b
		// IQ4_XS decode 1.07–1.09×, in-process turns). Q8_0's four-tile kernel prefetches,
		// so only Zen 5's quarters (quartersPF) take it (LLMBENCH_CPU=avx2 there: llama-1b
		// Q8_0 decode 1.13–1.19× one tile at a time, in-process turns; the same walk
		// without prefetch 0.91–0.93×). Elsewhere one tile at a time: the other kernels
		// have no software prefetch, and four adjacent tiles without it are unmeasured on
		// Intel. The tests check the kernels everywhere (x1mKernels).
		x1Quarters = quarters()
		for t, k := range map[kernels.DType][3]x1mFn{
			kernels.Q4_0: {nil, tileQ4x1mAVX2, nil}, kernels.Q4_K: {nil, tileQ4Kx1mAVX2, nil}, kernels.Q6_K: {nil, tileQ6Kx1mAVX2, nil},
			kernels.Q5_K: {nil, tileQ5Kx1mAVX2, nil}, kernels.Q3_K: {nil, tileQ3Kx1mAVX2, nil}, kernels.Q2_K: {nil, tileQ2Kx1mAVX2, nil},
			kernels.IQ4_NL: {nil, tileIQ4NLx1mAVX2, nil}, kernels.IQ4_XS: {nil, tileIQ4XSx1mAVX2, nil}, kernels.Q8_0: {nil, nil, tileQ8x1mAVX2},
		} {
			x1mKernels[t] = k
		}
		if x.HasAVXVNNI && allowed(capAVXVNNI) { // VPDPBUSD ymm (Intel Core from Alder Lake on, Xeon 6 E-cores)
			setAVXVNNI()
		}
		for t := range x1mKernels {
			setX1m(t)
		}
		for t, k := range map[kernels.DType]func(int, *byte, int, *byte, int, int, *[8]float32){
			kernels.MXFP4: batchMXFP4AVX2,
		} {
			bs := t.BlockBytes()
			batch2[t] = func(nb int, w []byte, wstride int, x []byte, xstride, ntok int, out *[8]float32) {
				if nb == 0 || ntok < 1 {
					*out = [8]float32{}
					return
				}
				_, _ = w[wstride+nb*bs-1], x[(min(ntok, 4)-1)*xstride+nb*34-1]
				k(nb, &w[0], wstride, &x[0], xstride, ntok, out)
			}
		}
	}
	fastDots[kernels.Q4_0] = func(n int, w, x []byte) float32 {
		nb := n / 32
		if nb == 0 {
			return 0
		}
		_, _ = w[nb*18-1], x[nb*34-1]
		return q40(nb, &w[0], &x[0])
	}
	fastDots[kernels.Q8_0] = func(n int, w, x []byte) float32 {
		nb := n / 32
		if nb == 0 {
			return 0
		}
		_, _ = w[nb*34-1], x[nb*34-1]
		return q80(nb, &w[0], &x[0])
	}
	fastDots[kernels.Q4_K] = func(n int, w, x []byte) float32 {
		nb := n / 256
		if nb == 0 {
			return 0
		}
		_, _ = w[nb*144-1], x[nb*292-1]
		return dotQ4_KAVX2(nb, &w[0], &x[0])
	}
	fastDots[kernels.Q6_K] = func(n int, w, x []byte) float32 {
		nb := n / 256
		if nb == 0 {
			return 0
		}
		_, _ = w[nb*210-1], x[nb*292-1]
		return dotQ6_KAVX2(nb, &w[0], &x[0])
	}
	fastDots[kernels.F32] = func(n int, w, x []byte) float32 {
		if n <= 0 {
			return 0
		}
		_, _ = w[4*n-1], x[4*n-1]
		n32 := n / 32
		var s float32
		if n32 > 0 {
			s = dotF32FMA(n32, (*float32)(unsafe.Pointer(&w[0])), (*float32)(unsafe.Pointer(&x[0])))
		}
		return addTailF32(s, w, x, n32*32, n)
	}
	fastDotRows[kernels.F32] = func(n int, w []byte, wstride, nrows int, x []byte, dst []float32) {
		if nrows <= 0 {
			return
		}
		n32 := n / 32
		if n32 == 0 {
			clear(dst[:nrows])
		} else {
			_, _ = w[(nrows-1)*wstride+4*n-1], x[4*n-1]
			_ = dst[nrows-1]
			dotF32FMArows(n32, (*float32)(unsafe.Pointer(&w[0])), wstride, nrows, (*float32)(unsafe.Pointer(&x[0])), &dst[0])
		}
		if n32*32 == n {
			return
		}
		for r := range nrows {
			dst[r] = addTailF32(dst[r], w[r*wstride:], x, n32*32, n)
		}
	}
	fastDotsN[kernels.F32] = func(n int, w, x []byte, xstride, ntok int, dst []float32, dstride int) {
		if ntok <= 0 {
			return
		}
		n32 := n / 32
		if n32 == 0 {
			for t := range ntok {
				dst[t*dstride] = 0
			}
		} else {
			_, _ = w[4*n-1], x[(ntok-1)*xstride+4*n-1]
			_ = dst[(ntok-1)*dstride]
			dotF32FMAxN(n32, (*float32)(unsafe.Pointer(&w[0])), (*float32)(unsafe.Pointer(&x[0])), xstride, ntok, &dst[0], 4*dstride)
		}
		if n32*32 == n {
			return
		}
		for t := range ntok {
			dst[t*dstride] = addTailF32(dst[t*dstride], w, x[t*xstride:], n32*32, n)
		}
	}
	fastDots[kernels.F16] = func(n int, w, x []byte) float32 {
		if n <= 0 {
			return 0
		}
		_, _ = w[2*n-1], x[2*n-1]
		a := unsafe.Slice((*uint16)(unsafe.Pointer(&w[0])), n)
		b := unsafe.Slice((*uint16)(unsafe.Pointer(&x[0])), n)
		n32 := n / 32
		var s float32
		if n32 > 0 {
			s = dotF16FMA(n32, &a[0], &b[0])
		}
		for i := n32 * 32; i < n; i++ {
			s += kernels.F16ToF32(a[i]) * kernels.F16ToF32(b[i])
		}
		return s
	}
}

//go:noescape
func dotF16x4AVX2(n32 int, w *byte, stride int, x *byte, out *[4]float32)

//go:noescape
func dotBF16x4AVX2(n32 int, w *byte, stride int, x *byte, out *[4]float32)

//go:noescape
func gemmF16x3AVX2(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *[16]float32)

//go:noescape
func gemmBF16x3AVX2(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *[16]float32)

// setHalf installs the assembly kernels of type t's float path: x4, and gemm on gr
// rows; both sum in lanes float lanes.
func setHalf(t kernels.DType, x4 func(int, *byte, int, *byte, *[4]float32), gemm func(int, *byte, int, *byte, int, int, *[16]float32), gr, lanes int) {
	h := halfKerns[t]
	h.gr, h.lanes = gr, lanes
	h.x4 = func(n32 int, w []byte, stride int, x []byte, out *[4]float32) {
		if n32 == 0 {
			*out = [4]float32{}
			return
		}
		_, _ = w[3*stride+64*n32-1], x[128*n32-1]
		x4(n32, &w[0], stride, &x[0], out)
	}
	h.gemm = func(n16 int, w []byte, wstride int, x []byte, xstride, ntok int, out *[16]float32) {
		if n16 == 0 || ntok < 1 {
			*out = [16]float32{}
			return
		}
		_, _ = w[(gr-1)*wstride+32*n16-1], x[(min(ntok, 4)-1)*xstride+64*n16-1]
		gemm(n16, &w[0], wstride, &x[0], xstride, ntok, out)
	}
}

// pairsBF16 is the BF16 path of CPUs with AVX512-BF16: VDPBF16PS on the bfloat16
// activations themselves, two products per float lane and instruction where the
// float32 path widens the weights and runs one fused multiply-add per product; the
// activations were rounded to bfloat16 (BF16's VecDotType) either way, only the
// order of the sums differs (halfKern.pairs). The prompt's gemm and decode's rows
// share that order, so results stay the same whatever the batch.
func pairsBF16() *halfKern {
	h := &halfKern{at: bf16At, widen: copyActs, widenGo: copyActs, gr: 4, lanes: 16, pairs: true}
	h.rows = halfRows(dotBF16dpRows, 64)
	if quartersPF {
		h.rows, h.rowsWarm = halfRows(dotBF16dpRowsPF, 64), h.rows
	}
	h.x4 = func(n32 int, w []byte, stride int, x []byte, out *[4]float32) {
		if n32 == 0 {
			*out = [4]float32{}
			return
		}
		_, _ = w[3*stride+64*n32-1], x[64*n32-1]
		dotBF16dpX4(n32, &w[0], stride, &x[0], out)
	}
	h.gemm = func(n16 int, w []byte, wstride int, x []byte, xstride, ntok int, out *[16]float32) {
		if n16 < 2 || ntok < 1 {
			*out = [16]float32{}
			return
		}
		_, _ = w[3*wstride+32*n16-1], x[(min(ntok, 4)-1)*xstride+32*n16-1]
		gemmBF16dp(n16, &w[0], wstride, &x[0], xstride, ntok, out)
	}
	h.gemm6 = gemm6Of(gemmBF16dp6, 2, 32)
	return h
}

// expSumsOf is expSums over an assembly kernel.
func expSumsOf(a func(n int, s *float32, m float32, c *expVec) float64) func(s []float32, m float32) float64 {
	return func(s []float32, m float32) float64 {
		if len(s) == 0 {
			return 0
		}
		return a(len(s), &s[0], m, &expConsts)
	}
}

// scoresOf is scoresF16s or scoresF32s (rows of T) over an assembly kernel a, for
// head sizes a multiple of 8, and over the Go helper goFn for the others.
func scoresOf[T uint16 | float32](a func(n int, q *float32, n8 int, k *T, stride int, scale float32, out *float32), goFn func(s, q []float32, k []T, stride int, scale float32)) func(s, q []float32, k []T, stride int, scale float32) {
	eb := int(unsafe.Sizeof(T(0)))
	return func(s, q []float32, k []T, stride int, scale float32) {
		if len(s) == 0 || len(q) == 0 || len(q)%8 != 0 {
			goFn(s, q, k, stride, scale)
			return
		}
		_ = k[(len(s)-1)*stride+len(q)-1]
		a(len(s), &q[0], len(q)/8, &k[0], eb*stride, scale, &s[0])
	}
}

// gemm6Of is halfKern.gemm6 over a six-token kernel k that takes whole steps of
// step·16 elements (2 for the pairs kernels) and xb bytes of activations per 16
// elements (64 float32, or 32 bfloat16 for the pairs kernels).
func gemm6Of(k func(int, *byte, int, *byte, int, int, *float32, int), step, xb int) func(int, []byte, int, []byte, int, int, []float32, int) {
	return func(n16 int, w []byte, wstride int, x []byte, xstride, ntok int, out []float32, ostride int) {
		if ntok < 1 {
			return
		}
		_ = out[(min(ntok, 6)-1)*ostride+3]
		if n16 < step {
			for t := range min(ntok, 6) {
				clear(out[t*ostride : t*ostride+4])
			}
			return
		}
		_, _ = w[3*wstride+32*n16-1], x[(min(ntok, 6)-1)*xstride+xb*n16-1]
		k(n16, &w[0], wstride, &x[0], xstride, ntok, &out[0], ostride)
	}
}

// addTailF32 adds to s, in order, the products of the float32 elements [from, n) of w
// and x: the F32 kernels' elements past their last whole step of 32, added as Go
// adds them after the assembly sum.
func addTailF32(s float32, w, x []byte, from, n int) float32 {
	if from >= n {
		return s
	}
	a := unsafe.Slice((*float32)(unsafe.Pointer(&w[0])), n)
	b := unsafe.Slice((*float32)(unsafe.Pointer(&x[0])), n)
	for i := from; i < n; i++ {
		s += a[i] * b[i]
	}
	return s
}

// q80Fast returns quantQ8_0Fast over an assembly kernel k that quantizes blocks until
// one it leaves to Go (quantizeQ8_0), and returns how many it did.
func q80Fast(k func(nb int, src *float32, dst *byte) int) func(src []float32, dst []byte) {
	return func(src []float32, dst []byte) {
		nb := len(src) / 32
		_ = dst[nb*34-1]
		for i := 0; i < nb; {
			i += k(nb-i, &src[32*i], &dst[34*i])
			if i < nb { // a block the kernel leaves to Go
				quantizeQ8_0(src[32*i:32*i+32], dst[34*i:34*i+34])
				i++
			}
		}
	}
}

// f16Converters returns toF16Fast and the F16 halfKern's widen over assembly
// conversions of groups of g values (toF16 stops at a group holding a NaN and returns
// the groups done; the rest, and any tail, take the Go references).
func f16Converters(g int, toF16 func(n int, src *float32, dst *uint16) int, toF32 func(n int, src *uint16, dst *float32)) (func(src []float32, dst []byte), func(xq, dst []byte)) {
	to := func(src []float32, dst []byte) {
		if n := len(src) / g; n > 0 {
			_ = dst[2*len(src)-1]
			i := toF16(n, &src[0], (*uint16)(unsafe.Pointer(&dst[0])))
			src, dst = src[g*i:], dst[2*g*i:]
		}
		kernels.TraitsOf(kernels.F16).FromFloat(src, dst[:2*len(src)])
	}
	widen := func(xq, dst []byte) {
		n := len(xq) / 2
		ng := n / g
		if ng > 0 {
			_ = dst[4*n-1]
			toF32(ng, (*uint16)(unsafe.Pointer(&xq[0])), (*float32)(unsafe.Pointer(&dst[0])))
		}
		prepF16Go(xq[2*g*ng:2*n], dst[4*g*ng:4*n])
	}
	return to, widen
}

// tileX4Asm is tileX4 over a format's assembly kernel (VNNI, or AVX2 for Q4_0).
func tileX4Asm(f *tileFmt, nu int, tile, act []byte, out *[64]float32) {
	if nu == 0 {
		*out = [64]float32{}
		return
	}
	_, _ = tile[nu*f.unitBytes-1], act[nu*f.unit/f.pk.bs*(4*f.pk.bs+48)-1]
	f.x4(nu, &tile[0], &act[0], out)
}

// tileX1mAsm is tileX1m over a format's assembly kernel.
func tileX1mAsm(f *tileFmt, warm bool, nu int, tile []byte, stride int, act []byte, tok int, out *[64]float32) {
	_, _ = tile[3*stride+nu*f.unitBytes-1], act[nu*f.unit/f.pk.bs*(4*f.pk.bs+48)-1]
	k := f.x1m
	if warm && f.x1mWarm != nil {
		k = f.x1mWarm
	}
	k(nu, &tile[0], stride, &act[0], tok&3, out)
}

// tileX1Asm is tileX1 over a format's assembly kernel.
func tileX1Asm(f *tileFmt, nu int, tile, act []byte, tok int, out *[16]float32) {
	if nu == 0 {
		*out = [16]float32{}
		return
	}
	_, _ = tile[nu*f.unitBytes-1], act[nu*f.unit/f.pk.bs*(4*f.pk.bs+48)-1]
	f.x1(nu, &tile[0], &act[0], tok&3, out)
}

// halfRows wraps a one-row-after-another decode kernel as halfKern.rows; xb is the
// bytes of activations it reads per 32 elements.
func halfRows(rows func(int, *byte, int, int, *byte, *float32), xb int) func(int, []byte, int, int, []byte, []float32) {
	return func(n32 int, w []byte, stride, nrows int, x []byte, out []float32) {
		if nrows <= 0 {
			return
		}
		if n32 == 0 {
			clear(out[:nrows])
			return
		}
		_, _, _ = w[(nrows-1)*stride+64*n32-1], x[xb*n32-1], out[nrows-1]
		rows(n32, &w[0], stride, nrows, &x[0], &out[0])
	}
}

//go:noescape
func batchMXFP4AVX2(nb int, w *byte, wstride int, x *byte, xstride, ntok int, out *[8]float32)

//go:noescape
func quantQ8_0AVX512(nb int, src *float32, dst *byte) int

//go:noescape
func quantQ8_KAVX512(nb int, src *float32, dst *byte) int

//go:noescape
func f32ToF16AVX512(n16 int, src *float32, dst *uint16) int

//go:noescape
func f16ToF32AVX512(n16 int, src *uint16, dst *float32)

// f32ToF16AVX2 and f16ToF32AVX2 are f32ToF16AVX512 and f16ToF32AVX512 eight values at
// a time (F16C).
//
//go:noescape
func f32ToF16AVX2(n8 int, src *float32, dst *uint16) int

// regroupQ8_0AVX2 is regroupQ8_0 in AVX2 and F16C (quant_amd64.s).
//
//go:noescape
func regroupQ8_0AVX2(nb int, src, y, tail *byte, blk, gsz int, k int32)

// regroupQ8_KAVX2 is regroupQ8_K in AVX2 (quant_amd64.s); bs is 16 or 32.
//
//go:noescape
func regroupQ8_KAVX2(nsb int, src, y, tail *byte, blk, gsz, bs int, k int32)

// quantQ8_0AVX2 is quantQ8_0AVX512 with AVX2 and F16C.
//
//go:noescape
func quantQ8_0AVX2(nb int, src *float32, dst *byte) int

//go:noescape
func f16ToF32AVX2(n8 int, src *uint16, dst *float32)

//go:noescape
func tileIQ4NLx4(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileIQ4NLx1(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileIQ4NLx1m(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// tileIQ4NLx1mq is tileIQ4NLx1m with every line prefetched just before its load, for
// AMD Zen 5's quarters (tileQ4x1mq's shape).
//
//go:noescape
func tileIQ4NLx1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// tileIQ4XSx1mnp and tileIQ4XSx1mq are the IQ4_XS four-tile one-token kernels, without
// and with software prefetch (tileQ4Kx1mnp's and tileQ4Kx1mq's shapes).
//
//go:noescape
func tileIQ4XSx1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileIQ4XSx1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// tileMXFP4x1mnp and tileMXFP4x1mq are the MXFP4 four-tile one-token kernels, without
// and with software prefetch (tileIQ4NLx1mq's shape).
//
//go:noescape
func tileMXFP4x1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileMXFP4x1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// tileQ41x1mnp and tileQ41x1mq are the Q4_1 four-tile one-token kernels, without and
// with software prefetch (tileQ4x1mq's shape, with the mins).
//
//go:noescape
func tileQ41x1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ41x1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// tileQ50x1mnp, tileQ50x1mq, tileQ51x1mnp and tileQ51x1mq are the Q5_0 and Q5_1
// four-tile one-token kernels, without and with software prefetch (tileQ4x1mq's shape,
// with the high bits; Q5_1 with the mins).
//
//go:noescape
func tileQ50x1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ50x1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ51x1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileQ51x1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileIQ4NLx1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

//go:noescape
func tileMXFP4x4(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileMXFP4x1(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func tileIQ4XSx4(nu int, tile, act *byte, out *[64]float32)

//go:noescape
func tileIQ4XSx1(nu int, tile, act *byte, tok int, out *[16]float32)

//go:noescape
func dotIQ4NLAVX2(nb int, w, x *byte) float32

//go:noescape
func dotMXFP4AVX2(nb int, w, x *byte) float32

//go:noescape
func dotIQ4XSAVX2(nb int, w, x *byte) float32

// setLUTDots installs the AVX2 dot products of the lookup-table types (tile_lut.go).
func setLUTDots() {
	for t, k := range map[kernels.DType]struct {
		dot func(int, *byte, *byte) float32
		bs  int // elements per block
		wb  int // bytes per weight block
		xb  int // bytes per activation block
	}{
		kernels.IQ4_NL: {dotIQ4NLAVX2, 32, 18, 34},
		kernels.MXFP4:  {dotMXFP4AVX2, 32, 17, 34},
		kernels.IQ4_XS: {dotIQ4XSAVX2, 256, 136, 292},
	} {
		dotISA[t] = "avx2"
		fastDots[t] = func(n int, w, x []byte) float32 {
			nb := n / k.bs
			if nb == 0 {
				return 0
			}
			_, _ = w[nb*k.wb-1], x[nb*k.xb-1]
			return k.dot(nb, &w[0], &x[0])
		}
	}
}

//go:noescape
func dotBF16dpX4(n32 int, w *byte, stride int, x *byte, out *[4]float32)

//go:noescape
func dotBF16dpRows(n32 int, w *byte, stride, nrows int, x *byte, out *float32)

//go:noescape
func gemmBF16dp(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *[16]float32)
