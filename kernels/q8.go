package kernels

// 8-bit formats (ggml-common.h):
//
//	block_q8_0 (34 bytes, 32 elements): d fp16 | qs [32]int8        x = d*q
//	block_q8_1 (36 bytes, 32 elements): d fp16 | s fp16 | qs [32]int8, s = d*Σq
//	block_q8_K (292 bytes, 256 elements): d float32 | qs [256]int8 | bsums [16]int16
//	                                      (bsums[j] = Σ qs[16j:16j+16])
//
// Q8_1 and Q8_K are activation formats: the products of quantized weights are taken
// with them, so they have ToFloat and FromFloat but no VecDot of their own.

func init() {
	t := traits[Q8_0]
	t.ToFloat = q8_0ToFloat
	t.FromFloat = q8_0FromFloat
	t.VecDotType = Q8_0
	t.VecDot = vecDotQ8_0Q8_0

	t = traits[Q8_1]
	t.ToFloat = q8_1ToFloat
	t.FromFloat = q8_1FromFloat
	t.VecDotType = Q8_1

	t = traits[Q8_K]
	t.ToFloat = q8_KToFloat
	t.FromFloat = q8_KFromFloat
	t.VecDotType = Q8_K
}

func q8_0ToFloat(src []byte, dst []float32) {
	nb := toFloatBlocks("Q8_0", 32, 34, src, dst)
	for i := 0; i < nb; i++ {
		b := (*[34]byte)(src[34*i:])
		y := (*[32]float32)(dst[32*i:])
		d := half(b[0:])
		for j := range y {
			y[j] = float32(int8(b[2+j])) * d
		}
	}
}

// q8Block quantizes 32 values symmetrically to int8 with scale amax/127 (ggml's
// quantize_row_q8_0_ref / q8_1_ref: round half away from zero) and returns the
// scale and the sum of the quants.
func q8Block(x *[32]float32, qs *[32]byte) (d float32, sum int32) {
	var amax float32
	for _, v := range x {
		amax = max(amax, abs32(v))
	}
	d = amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	for j, v := range x {
		q := roundAway(v * id)
		qs[j] = byte(int8(q))
		sum += int32(q)
	}
	return d, sum
}

func q8_0FromFloat(src []float32, dst []byte) {
	nb := fromFloatBlocks("Q8_0", 32, 34, src, dst)
	for i := 0; i < nb; i++ {
		b := (*[34]byte)(dst[34*i:])
		d, _ := q8Block((*[32]float32)(src[32*i:]), (*[32]byte)(b[2:]))
		putHalf(b[0:], F32ToF16(d))
	}
}

func q8_1ToFloat(src []byte, dst []float32) {
	nb := toFloatBlocks("Q8_1", 32, 36, src, dst)
	for i := 0; i < nb; i++ {
		b := (*[36]byte)(src[36*i:])
		y := (*[32]float32)(dst[32*i:])
		d := half(b[0:])
		for j := range y {
			y[j] = float32(int8(b[4+j])) * d
		}
	}
}

func q8_1FromFloat(src []float32, dst []byte) {
	nb := fromFloatBlocks("Q8_1", 32, 36, src, dst)
	for i := 0; i < nb; i++ {
		b := (*[36]byte)(dst[36*i:])
		d, sum := q8Block((*[32]float32)(src[32*i:]), (*[32]byte)(b[4:]))
		putHalf(b[0:], F32ToF16(d))
		putHalf(b[2:], F32ToF16(float32(sum)*d))
	}
}

func q8_KToFloat(src []byte, dst []float32) {
	nb := toFloatBlocks("Q8_K", qkK, 292, src, dst)
	for i := 0; i < nb; i++ {
		b := (*[292]byte)(src[292*i:])
		y := (*[qkK]float32)(dst[qkK*i:])
		d := getF32(b[0:])
		for j := range y {
			y[j] = d * float32(int8(b[4+j]))
		}
	}
}

// q8_KFromFloat follows ggml's quantize_row_q8_K_ref: the scale maps the value of
// largest magnitude to -127 (ties to even), and the per-16 sums are stored for the
// K-quant dot products. An all-zero block is stored as zeros.
func q8_KFromFloat(src []float32, dst []byte) {
	nb := fromFloatBlocks("Q8_K", qkK, 292, src, dst)
	for i := 0; i < nb; i++ {
		x := (*[qkK]float32)(src[qkK*i:])
		b := (*[292]byte)(dst[292*i:])
		var amax, vmax float32
		for _, v := range x {
			if a := abs32(v); a > amax {
				amax, vmax = a, v
			}
		}
		if amax == 0 {
			clear(b[:])
			continue
		}
		iscale := -127 / vmax
		for j, v := range x {
			b[4+j] = byte(int8(min(127, nearestInt(iscale*v))))
		}
		for j := 0; j < qkK/16; j++ {
			var s int32
			for _, q := range b[4+16*j : 4+16*j+16] {
				s += int32(int8(q))
			}
			putI16(b[260+2*j:], int16(s))
		}
		putF32(b[0:], 1/iscale)
	}
}

func vecDotQ8_0Q8_0(n int, w, x []byte) float32 {
	nb := vecDotBlocks("Q8_0", n, 32, 34, 34, w, x)
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[34]byte)(w[34*i:])
		b := (*[34]byte)(x[34*i:])
		var s0, s1 int32
		for j := 2; j < 34; j += 2 {
			s0 += int32(int8(a[j])) * int32(int8(b[j]))
			s1 += int32(int8(a[j+1])) * int32(int8(b[j+1]))
		}
		sum += float32(s0+s1) * (half(a[0:]) * half(b[0:]))
	}
	return sum
}
