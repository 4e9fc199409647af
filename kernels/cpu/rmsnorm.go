package cpu

import "math"

// The RMS norm's row helpers. sumSquares and scaleRow run in assembly where the CPU
// allows (rmsnorm_amd64.go); their Go versions are the fallbacks.
var (
	// sumSquares returns the float64 sum of the float32 squares of row, added in an
	// order of its own (meanSquare bounds what any order can change).
	sumSquares = sumSquaresGo
	// scaleRow sets out[j] = row[j]·scale·weight[j] (two rounded float32 products, in
	// that order).
	scaleRow = scaleRowGo
)

// rmsNormRows normalises rows [r0, r1) of x into dst (see RMSNorm).
func rmsNormRows(dst, x, weight []float32, eps float32, r0, r1 int) {
	d := len(weight)
	for r := r0; r < r1; r++ {
		row := x[r*d : (r+1)*d]
		scale := float32(1 / math.Sqrt(float64(meanSquare(row)+eps)))
		scaleRow(dst[r*d:(r+1)*d], row, weight, scale)
	}
}

// meanSquare returns ggml's mean square of row: float32(s/len(row)), where s is the
// float64 sum of the float32 squares added in element order. That order makes the sum
// one chain of dependent adds (a decode step's 2048-wide norm took ~4 µs, serial time
// on one thread, 45 norms per llama-1b token), so sumSquares adds them in independent
// chains instead. Any order of adding n non-negative float64 terms lands within about
// n·2⁻⁵³ of their exact sum (relative), so the element-order sum lies within slack =
// 4·n·2⁻⁵³·s of the fast one (twice both bounds together, which also covers rounding
// fast ± slack): where that whole interval, over n, rounds to one float32, that float32
// is the answer. Only when a float32 rounding boundary falls inside it (about once in
// 10⁵ rows of 2048) is the sum redone in element order; infinities and NaNs take that
// path too (their interval is NaN).
func meanSquare(row []float32) float32 {
	n := float64(len(row))
	fast := sumSquares(row)
	slack := fast * (4 * n * 0x1p-53)
	if lo, hi := float32((fast-slack)/n), float32((fast+slack)/n); lo == hi {
		return lo
	}
	return meanSquareInOrder(row)
}

// meanSquareInOrder is meanSquare by its definition: the float64 sum in element order.
func meanSquareInOrder(row []float32) float32 {
	var s float64
	for _, v := range row {
		s += float64(v * v)
	}
	return float32(s / float64(len(row)))
}

// sumSquaresGo is sumSquares in eight chains (eight variables, not an array, so that
// the compiler keeps them in registers).
func sumSquaresGo(row []float32) float64 {
	var a0, a1, a2, a3, a4, a5, a6, a7 float64
	i := 0
	for ; i+8 <= len(row); i += 8 {
		v := row[i : i+8 : i+8]
		a0 += float64(v[0] * v[0])
		a1 += float64(v[1] * v[1])
		a2 += float64(v[2] * v[2])
		a3 += float64(v[3] * v[3])
		a4 += float64(v[4] * v[4])
		a5 += float64(v[5] * v[5])
		a6 += float64(v[6] * v[6])
		a7 += float64(v[7] * v[7])
	}
	for _, v := range row[i:] {
		a0 += float64(v * v)
	}
	return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
}

func scaleRowGo(out, row, weight []float32, scale float32) {
	out, weight = out[:len(row)], weight[:len(row)]
	for j, v := range row {
		out[j] = v * scale * weight[j]
	}
}
