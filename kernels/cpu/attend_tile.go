package cpu

import (
	"math"

	"llmbench/kernels"
)

// Tile helpers of the attention paths: the scores of one query head against a run of
// cache rows, the softmax's exponentials of a tile of scores, and the weighted sum of
// a run of value rows. Each gives, row by row, exactly what the one-row helpers (dotF16s
// or dotF32s, exp32, axpyF16s or axpyF32s; a Q8_0 row dequantized first, dequantQ8)
// give called once per row in the same order; they exist so that a tile
// of 64 positions costs one call (and, where the CPU allows, one assembly loop) instead
// of 64 calls of each. For a head size of 16 the calls were most of the prompt's
// attention time.
var (
	// scoresF16s sets s[i] = dotF16s(q, k[i*stride:][:len(q)]) · scale for every i.
	scoresF16s = scoresF16Go
	// scoresF32s sets s[i] = dotF32s(q, k[i*stride:][:len(q)]) · scale for every i.
	scoresF32s = scoresF32Go
	// accumF16s adds w[i]·f16(v[i*stride:][:len(acc)]) to acc for every i in order, as
	// axpyF16s row after row.
	accumF16s = accumF16Go
	// accumF32s adds w[i]·v[i*stride:][:len(acc)] to acc for every i in order, as
	// axpyF32s row after row.
	accumF32s = accumF32Go
	// expSums sets s[i] = exp32(s[i] − m) for every i and returns their sum in
	// float64, added in an order of its own (the same on every call at a CPU level).
	expSums = expSumGo
	// tileMax returns the largest of the scores s, NaNs passed over (−Inf for none),
	// as tileMaxGo (where both signs of zero tie, either may be returned: the
	// exponentials and the maximum's uses are the same for both).
	tileMax = tileMaxGo
	// scaleScores multiplies every s[i] by f (the plain path's normalisation).
	scaleScores = scaleScoresGo
	// attnTileAsm reports that the helpers above run in assembly (sysinfo says so).
	attnTileAsm bool
	// attnScores16 reports that the scores helpers run eight rows at a time in
	// AVX-512 registers (scoresF16x16, scoresF32x16), and accumF32Pair two heads.
	attnScores16 bool
	// accumF32Pair is accumF32s for two heads over the same rows (acc0 with the weights
	// w0, acc1 with w1, each head's sums accumF32s's), in one pass that loads each row
	// once; nil where the CPU has no such kernel (two accumF32s calls instead).
	accumF32Pair func(acc0, acc1, w0, w1, v []float32, stride int)
)

func scoresF16Go(s, q []float32, k []uint16, stride int, scale float32) {
	for i := range s {
		s[i] = dotF16s(q, k[i*stride:][:len(q)]) * scale
	}
}

func scoresF32Go(s, q []float32, k []float32, stride int, scale float32) {
	for i := range s {
		s[i] = dotF32s(q, k[i*stride:][:len(q)]) * scale
	}
}

func accumF16Go(acc, w []float32, v []uint16, stride int) {
	for i, x := range w {
		axpyF16s(acc, x, v[i*stride:][:len(acc)])
	}
}

func accumF32Go(acc, w []float32, v []float32, stride int) {
	for i, x := range w {
		axpyF32s(acc, x, v[i*stride:][:len(acc)])
	}
}

func scaleScoresGo(s []float32, f float32) {
	for i := range s {
		s[i] *= f
	}
}

func expSumGo(s []float32, m float32) float64 {
	var sum float64
	for i, v := range s {
		s[i] = exp32(v - m)
		sum += float64(s[i])
	}
	return sum
}

// pfRows is how many rows ahead the tile helpers prefetch an F16 cache they read in
// place (tileScores, tileAccum), a run of pfRows rows at a time; tileScores also
// prefetches the value rows of the keys it reads. A decode step reads each layer's
// cache after the step's weights have evicted it, so without it every row came from
// memory a latency at a time. A step of more than pfStepRows rows of one sequence
// (a prompt's) reads them in place without: its first row brings the rows into the
// cache for the rest, and the runs' extra calls made llama-small's pp512 10–15 %
// slower. (The float32 copies prefetch the same way: widenF16Rows, dequantRows.)
const (
	pfRows     = 16
	pfStepRows = 8
)

// coldStep reports whether a is a step of at most pfStepRows rows of its sequence (a
// decode step), whose cache rows the step's weights have evicted: its readers prefetch
// them, the in-place F16 ones pfRows rows a call.
func coldStep(a *kernels.Attention) bool { return a.N <= pfStepRows }

// prefetchF16Rows prefetches n head rows of hd halves, row i at k[i*stride:], where
// the assembly runs; nothing elsewhere.
var prefetchF16Rows = func(k []uint16, n, stride, hd int) {}

// tileScores sets s[p−p0], for the positions p0 ≤ p < p1, to the scaled score of q
// against the key head row at element offset off of the position's F16 or F32 cache
// row (the row's dot product with q, times a.Scale); it reads the cache through a's
// block table, a run of contiguous rows per call. (A Q8_0 cache is read through
// float32 copies, kvTileF32.)
func tileScores(s, q []float32, a *kernels.Attention, p0, p1, off int) {
	stride := a.KVHeads * a.HeadDim
	for p := p0; p < p1; {
		r, n := a.Span(p, p1)
		sp, o := s[p-p0:p-p0+n], r*stride+off
		if a.K.Type == kernels.F16 {
			cold, run := coldStep(a), n
			if cold {
				run = pfRows
			}
			for i0 := 0; i0 < n; i0 += run {
				i1 := min(n, i0+run)
				if cold {
					if i1 < n {
						prefetchF16Rows(a.K.F16[o+i1*stride:], min(run, n-i1), stride, len(q))
					}
					if a.V.Type == kernels.F16 {
						prefetchF16Rows(a.V.F16[o+i0*stride:], i1-i0, stride, len(q))
					}
				}
				scoresF16s(sp[i0:i1], q, a.K.F16[o+i0*stride:], stride, a.Scale)
			}
		} else {
			scoresF32s(sp, q, a.K.F32[o:], stride, a.Scale)
		}
		p += n
	}
}

// kvRows is how many cache rows kvTileF32 copies at a time (the tile helpers' scratch
// holds kvRows head rows).
const kvRows = flashTile

// dequantRows dequantizes len(dst)/hd head rows of hd values from the Q8_0 cache q8,
// the first at element offset off and each stride elements after the last, into dst
// (dequantQ8's values). With ahead, where the assembly runs, it prefetches as
// widenF16Rows does: the rows 16 further on, and the same rows of the Q8_0 cache also
// (nil: none).
var dequantRows = dequantRowsGo

func dequantRowsGo(dst []float32, q8, _ []byte, off, stride, hd int, _ bool) {
	for i := range len(dst) / hd {
		e := off + i*stride
		dequantQ8(q8[e/32*34:(e+hd)/32*34], dst[i*hd:(i+1)*hd])
	}
}

// tileAccum adds w[p−p0] times the value head row at element offset off of each
// position p0 ≤ p < p1 to acc, position after position, one axpy per row; it reads an
// F16 or F32 cache as tileScores does.
func tileAccum(acc, w []float32, a *kernels.Attention, p0, p1, off int) {
	stride := a.KVHeads * a.HeadDim
	for p := p0; p < p1; {
		r, n := a.Span(p, p1)
		wp, o := w[p-p0:p-p0+n], r*stride+off
		if a.V.Type == kernels.F16 {
			cold, run := coldStep(a), n
			if cold {
				run = pfRows
			}
			for i0 := 0; i0 < n; i0 += run { // rows in order: the same sums
				i1 := min(n, i0+run)
				if cold && i1 < n {
					prefetchF16Rows(a.V.F16[o+i1*stride:], min(run, n-i1), stride, len(acc))
				}
				accumF16s(acc, wp[i0:i1], a.V.F16[o+i0*stride:], stride)
			}
		} else {
			accumF32s(acc, wp, a.V.F32[o:], stride)
		}
		p += n
	}
}

// tileMaxGo returns the largest of the scores s (−Inf for none). A NaN score is
// passed over (the builtin max would return it, at several times the cost); its
// exponential makes the row's sum, and so its output, NaN all the same.
func tileMaxGo(s []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range s {
		if v > m {
			m = v
		}
	}
	return m
}

// expVec holds exp32's constants, eight lanes each, in the order the assembly reads
// them (expSumx8): log2e, 0.5, ln2Hi, ln2Lo, P0 … P5, 1, the exponent bias 127 (an
// integer), expLo, expHi, +Inf, and the lane numbers 0 … 7.
type expVec [16][8]uint32

// expConsts is exp32's constants for the assembly exponential.
var expConsts = func() (c expVec) {
	for i, v := range []float32{log2e, 0.5, ln2Hi, ln2Lo, expP0, expP1, expP2, expP3, expP4, expP5, 1} {
		c[i] = lanes8(math.Float32bits(v))
	}
	c[11] = lanes8(127)
	c[12] = lanes8(math.Float32bits(expLo))
	c[13] = lanes8(math.Float32bits(expHi))
	c[14] = lanes8(math.Float32bits(float32(math.Inf(1))))
	c[15] = [8]uint32{0, 1, 2, 3, 4, 5, 6, 7}
	return c
}()

func lanes8(v uint32) [8]uint32 { return [8]uint32{v, v, v, v, v, v, v, v} }

// widenF16Rows sets the len(dst)/hd rows of hd float32 values in dst to the F16 rows
// src[i*stride:][:hd], exactly (every half has a float32 equal to it). With ahead,
// where the assembly runs, it prefetches the rows 16 further on as it goes, and the
// same rows of also (nil: none), the values of the keys being widened: a decode step
// reads each layer's cache after the step's weights have evicted it, so every row came
// from memory a latency at a time. On llama-1b Q8_0 at depth 1024 (AMD Zen 5, two
// threads) the widening took 8.5 % of decode samples without either prefetch, 5.1 %
// with the one ahead and 3.5 % with both.
var widenF16Rows = widenF16RowsGo

func widenF16RowsGo(dst []float32, src, _ []uint16, stride, hd int, _ bool) {
	for i := range len(dst) / hd {
		for e, h := range src[i*stride:][:hd] {
			dst[i*hd+e] = kernels.F16ToF32(h)
		}
	}
}

// shareKV switches shared tiles on (shareTiles); tests switch it off to compare.
var shareKV = true

// shareTiles reports whether the w query heads of one key/value head read each tile of
// an F16 cache from one float32 copy (kvTileF32, then scoresF32s and accumF32s for
// each head) rather than head by head through tileScores and tileAccum: with the
// assembly loops and a head size they take whole, where the float32 loops add the
// exact copies in the F16 loops' order (TestAttendSharedTilesSameBits), so no output
// changes and the conversion is done once for the w heads instead of w times (an F16
// decode row's attention ran ~13 % faster for it on AMD Zen 4). A Q8_0 cache is always
// read through copies (its rows must be dequantized before any loop); shareTiles says
// whether the w heads share them.
func shareTiles(w int, a *kernels.Attention) bool {
	return w > 1 && shareKV && (a.K.Type == kernels.Q8_0 || attnTileAsm && a.HeadDim%8 == 0 && a.K.Type == kernels.F16)
}

// kvTileF32 writes the head rows at element offset off of the positions p0 ≤ p < p1
// (at most kvRows of them) of the F16 or Q8_0 cache kv, read through a's block table,
// to tmp as float32 (hd values a row: widenF16Rows or dequantRows) and returns them.
// In a cold step (coldStep) the rows ahead are prefetched, and where also is a cache
// of kv's type (the values, while kv holds the keys) the same rows of it
// (widenF16Rows, dequantRows); nil for none.
func kvTileF32(tmp []float32, kv, also *kernels.KVView, a *kernels.Attention, p0, p1, off int) []float32 {
	hd, stride := a.HeadDim, a.KVHeads*a.HeadDim
	ahead := coldStep(a)
	for p := p0; p < p1; {
		r, n := a.Span(p, p1)
		dst := tmp[(p-p0)*hd : (p-p0+n)*hd]
		if kv.Type == kernels.F16 {
			var pf []uint16
			if also != nil && also.Type == kernels.F16 {
				pf = also.F16[r*stride+off:]
			}
			widenF16Rows(dst, kv.F16[r*stride+off:], pf, stride, hd, ahead)
		} else {
			var pf []byte
			if also != nil && also.Type == kernels.Q8_0 {
				pf = also.Q8
			}
			dequantRows(dst, kv.Q8, pf, r*stride+off, stride, hd, ahead)
		}
		p += n
	}
	return tmp[:(p1-p0)*hd]
}

// copies reports whether a group of w heads over the cache kv reads it through float32
// copies of its tiles, and how many heads share each copy (w, or 1: each head its own).
func copies(w int, a *kernels.Attention, kv *kernels.KVView) (bool, int) {
	if shareTiles(w, a) {
		return true, w
	}
	return kv.Type == kernels.Q8_0, 1
}

// groupScores sets, for each of the w query heads q[k*hd:][:hd], the scores
// s[k*n+p−p0] of the positions p0 ≤ p < p1 (n = p1−p0 or more), each head's as
// tileScores computes it alone; through float32 copies of 64 keys at a time where
// the cache needs them or the heads share them (copies).
func groupScores(s []float32, n int, q []float32, w int, a *kernels.Attention, p0, p1, off int, tmp []float32) {
	hd := a.HeadDim
	viaCopies, g := copies(w, a, &a.K)
	if !viaCopies {
		for k := range w {
			tileScores(s[k*n:k*n+p1-p0], q[k*hd:(k+1)*hd], a, p0, p1, off)
		}
		return
	}
	for k0 := 0; k0 < w; k0 += g {
		for t0 := p0; t0 < p1; t0 += kvRows {
			t1 := min(p1, t0+kvRows)
			rows := kvTileF32(tmp, &a.K, &a.V, a, t0, t1, off)
			for k := k0; k < k0+g; k++ {
				scoresF32s(s[k*n+t0-p0:k*n+t1-p0], q[k*hd:(k+1)*hd], rows, hd, a.Scale)
			}
		}
	}
}

// groupAccum adds, for each of the w heads, the weights s[k*n+p−p0] times the value
// rows of the positions p0 ≤ p < p1 to acc[k*as:][:hd], each head's as tileAccum adds
// them alone; through float32 copies as groupScores.
func groupAccum(acc []float32, as int, s []float32, n, w int, a *kernels.Attention, p0, p1, off int, tmp []float32) {
	hd := a.HeadDim
	viaCopies, g := copies(w, a, &a.V)
	if !viaCopies {
		for k := range w {
			tileAccum(acc[k*as:k*as+hd], s[k*n:k*n+p1-p0], a, p0, p1, off)
		}
		return
	}
	for k0 := 0; k0 < w; k0 += g {
		for t0 := p0; t0 < p1; t0 += kvRows {
			t1 := min(p1, t0+kvRows)
			rows := kvTileF32(tmp, &a.V, nil, a, t0, t1, off)
			k := k0
			for ; accumF32Pair != nil && k+1 < k0+g; k += 2 {
				accumF32Pair(acc[k*as:k*as+hd], acc[(k+1)*as:(k+1)*as+hd], s[k*n+t0-p0:k*n+t1-p0], s[(k+1)*n+t0-p0:(k+1)*n+t1-p0], rows, hd)
			}
			for ; k < k0+g; k++ {
				accumF32s(acc[k*as:k*as+hd], s[k*n+t0-p0:k*n+t1-p0], rows, hd)
			}
		}
	}
}
