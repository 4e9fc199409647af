//go:build amd64 && !purego

package cpu

import "golang.org/x/sys/cpu"

//go:noescape
func sumSqF32x16(n16 int, x *float32) float64

//go:noescape
func scaleRowF32x8(n8 int, out, row, weight *float32, scale float32)

//go:noescape
func ropePairsAVX(n8 int, v, cs *float32)

//go:noescape
func ropeNeoXAVX(n8 int, lo, hi, cs *float32)

// The RMS norm's helpers (and RoPE's) run in AVX2 where the CPU has it and LLMBENCH_CPU allows it.
func init() {
	if !allowed(capAVX2) || !cpu.X86.HasAVX2 {
		return
	}
	ropePairs = func(v, cs []float32) {
		n8 := len(v) / 8
		if n8 > 0 {
			_ = cs[8*n8-1]
			ropePairsAVX(n8, &v[0], &cs[0])
		}
		ropePairsGo(v[8*n8:], cs[8*n8:len(v)])
	}
	ropeNeoX = func(v, cs []float32) {
		half := len(v) / 2
		n8 := half / 8
		if n8 > 0 {
			_, _ = v[2*half-1], cs[16*n8-1]
			ropeNeoXAVX(n8, &v[0], &v[half], &cs[0])
		}
		ropeNeoXFrom(v, cs, 8*n8)
	}
	sumSquares = func(row []float32) float64 {
		n16 := len(row) / 16
		var s float64
		if n16 > 0 {
			s = sumSqF32x16(n16, &row[0])
		}
		return s + sumSquaresGo(row[16*n16:])
	}
	scaleRow = func(out, row, weight []float32, scale float32) {
		n8 := len(row) / 8
		if n8 > 0 {
			_, _ = out[len(row)-1], weight[len(row)-1]
			scaleRowF32x8(n8, &out[0], &row[0], &weight[0], scale)
		}
		scaleRowGo(out[8*n8:len(row)], row[8*n8:], weight[8*n8:], scale)
	}
}
