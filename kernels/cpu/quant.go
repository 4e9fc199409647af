package cpu

import (
	"encoding/binary"
	"math"

	"llmbench/kernels"
)

// quantizeQ8_0 is a faster twin of the reference Q8_0 FromFloat with identical output:
// scale amax/127, quants rounded half away from zero (done with an exact float64 add
// instead of math.Round, which the compiler does not turn into one instruction).
func quantizeQ8_0(src []float32, dst []byte) {
	nb := len(src) / 32
	_ = dst[nb*34-1]
	for b := 0; b < nb; b++ {
		x := (*[32]float32)(src[32*b:])
		o := (*[34]byte)(dst[34*b:])
		var amax float32
		for _, v := range x {
			amax = max(amax, math.Float32frombits(math.Float32bits(v)&^(1<<31)))
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(o[0:], kernels.F32ToF16(d))
		for j, v := range x {
			f := float64(v * id)
			var q int
			if f >= 0 {
				q = int(f + 0.5)
			} else {
				q = -int(-f + 0.5)
			}
			o[2+j] = byte(int8(q))
		}
	}
}

// quantQ8_0Fast and quantQ8_KFast are assembly twins of quantizeQ8_0 and the
// reference Q8_K FromFloat with byte-identical output (blocks with non-finite or tiny
// values are left to the Go code), or nil where the CPU lacks them.
var quantQ8_0Fast, quantQ8_KFast func(src []float32, dst []byte)

// toF16Fast is an assembly twin of the reference F16 FromFloat (identical output; a
// group with a NaN is left to the Go code), or nil where the CPU lacks it.
var toF16Fast func(src []float32, dst []byte)

// fromFloat returns the fastest conversion into the activation type t.
func fromFloat(t kernels.DType, tr *kernels.Traits) func(src []float32, dst []byte) {
	switch {
	case t == kernels.Q8_0 && quantQ8_0Fast != nil:
		return quantQ8_0Fast
	case t == kernels.Q8_0:
		return quantizeQ8_0
	case t == kernels.Q8_K && quantQ8_KFast != nil:
		return quantQ8_KFast
	case t == kernels.F16 && toF16Fast != nil:
		return toF16Fast
	}
	return tr.FromFloat
}
