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

// tileScores sets s[p−p0], for the positions p0 ≤ p < p1, to the scaled score of q
// against the key head row at element offset off of the position's cache row (the
// row's dot product with q, times a.Scale); it reads the cache through a's block
// table, a run of contiguous rows per call. tmp holds dequantized Q8_0 rows (kvRows of
// them).
func tileScores(s, q []float32, a *kernels.Attention, p0, p1, off int, tmp []float32) {
	stride := a.KVHeads * a.HeadDim
	for p := p0; p < p1; {
		r, n := a.Span(p, p1)
		sp, o := s[p-p0:p-p0+n], r*stride+off
		switch a.K.Type {
		case kernels.F16:
			scoresF16s(sp, q, a.K.F16[o:], stride, a.Scale)
		case kernels.F32:
			scoresF32s(sp, q, a.K.F32[o:], stride, a.Scale)
		default: // Q8_0: up to kvRows rows dequantized at a time, then the float loop
			hd := len(q)
			for i0 := 0; i0 < n; i0 += kvRows {
				m := min(n-i0, kvRows)
				dequantRows(tmp[:m*hd], a.K.Q8, o+i0*stride, stride, hd)
				scoresF32s(sp[i0:i0+m], q, tmp, hd, a.Scale)
			}
		}
		p += n
	}
}

// kvRows is how many Q8_0 cache rows the tile helpers dequantize at a time (their
// scratch holds kvRows head rows).
const kvRows = flashTile

// dequantRows dequantizes len(dst)/hd head rows of hd values from the Q8_0 cache q8,
// the first at element offset off and each stride elements after the last, into dst
// (dequantQ8).
func dequantRows(dst []float32, q8 []byte, off, stride, hd int) {
	for i := range len(dst) / hd {
		e := off + i*stride
		dequantQ8(q8[e/32*34:(e+hd)/32*34], dst[i*hd:(i+1)*hd])
	}
}

// tileAccum adds w[p−p0] times the value head row at element offset off of each
// position p0 ≤ p < p1 to acc, position after position, one axpy per row; it reads the
// cache as tileScores does. tmp holds dequantized Q8_0 rows (kvRows of them).
func tileAccum(acc, w []float32, a *kernels.Attention, p0, p1, off int, tmp []float32) {
	stride := a.KVHeads * a.HeadDim
	for p := p0; p < p1; {
		r, n := a.Span(p, p1)
		wp, o := w[p-p0:p-p0+n], r*stride+off
		switch a.V.Type {
		case kernels.F16:
			accumF16s(acc, wp, a.V.F16[o:], stride)
		case kernels.F32:
			accumF32s(acc, wp, a.V.F32[o:], stride)
		default: // Q8_0, as tileScores
			hd := len(acc)
			for i0 := 0; i0 < n; i0 += kvRows {
				m := min(n-i0, kvRows)
				dequantRows(tmp[:m*hd], a.V.Q8, o+i0*stride, stride, hd)
				accumF32s(acc, wp[i0:i0+m], tmp, hd)
			}
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
