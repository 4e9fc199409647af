package kernels

// 4-bit formats of 32 elements (ggml-common.h):
//
//	block_q4_0 (18 bytes): d fp16 | qs [16]byte         x[j] = d*(q[j]-8)
//	block_q4_1 (20 bytes): d fp16 | m fp16 | qs [16]byte  x[j] = d*q[j] + m
//
// Byte qs[j] holds element j in its low nibble and element j+16 in its high nibble.

func init() {
	t := traits[Q4_0]
	t.ToFloat = q4_0ToFloat
	t.FromFloat = q4_0FromFloat
	t.VecDotType = Q8_0
	t.VecDot = vecDotQ4_0Q8_0

	t = traits[Q4_1]
	t.ToFloat = q4_1ToFloat
	t.FromFloat = q4_1FromFloat
	t.VecDotType = Q8_1
	t.VecDot = vecDotQ4_1Q8_1
}

func q4_0ToFloat(src []byte, dst []float32) {
	nb := toFloatBlocks("Q4_0", 32, 18, src, dst)
	for i := 0; i < nb; i++ {
		b := (*[18]byte)(src[18*i:])
		y := (*[32]float32)(dst[32*i:])
		d := half(b[0:])
		for j := 0; j < 16; j++ {
			q := b[2+j]
			y[j] = float32(int32(q&15)-8) * d
			y[j+16] = float32(int32(q>>4)-8) * d
		}
	}
}

// q4_0FromFloat follows quantize_row_q4_0_ref: the value of largest magnitude maps
// to -8, the others round half up onto 0..15. x·(1/d) is rounded to float32 before
// 8.5 is added, as in a build of ggml without fused multiply-add (with FMA, ggml's
// own output differs in rare ties; Q5_0 likewise).
func q4_0FromFloat(src []float32, dst []byte) {
	nb := fromFloatBlocks("Q4_0", 32, 18, src, dst)
	for i := 0; i < nb; i++ {
		x := (*[32]float32)(src[32*i:])
		b := (*[18]byte)(dst[18*i:])
		var amax, vmax float32
		for _, v := range x {
			if a := abs32(v); a > amax {
				amax, vmax = a, v
			}
		}
		d := vmax / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putHalf(b[0:], F32ToF16(d))
		for j := 0; j < 16; j++ {
			q0 := min(15, int(float32(x[j]*id)+8.5))
			q1 := min(15, int(float32(x[j+16]*id)+8.5))
			b[2+j] = byte(q0) | byte(q1)<<4
		}
	}
}

func q4_1ToFloat(src []byte, dst []float32) {
	nb := toFloatBlocks("Q4_1", 32, 20, src, dst)
	for i := 0; i < nb; i++ {
		b := (*[20]byte)(src[20*i:])
		y := (*[32]float32)(dst[32*i:])
		d, m := half(b[0:]), half(b[2:])
		for j := 0; j < 16; j++ {
			q := b[4+j]
			y[j] = float32(q&15)*d + m
			y[j+16] = float32(q>>4)*d + m
		}
	}
}

// minMax32 returns the smallest and the largest of 32 values.
func minMax32(x *[32]float32) (lo, hi float32) {
	lo, hi = x[0], x[0]
	for _, v := range x[1:] {
		lo = min(lo, v)
		hi = max(hi, v)
	}
	return lo, hi
}

// q4_1FromFloat follows quantize_row_q4_1_ref: the block's range [min, max] maps
// onto 0..15.
func q4_1FromFloat(src []float32, dst []byte) {
	nb := fromFloatBlocks("Q4_1", 32, 20, src, dst)
	for i := 0; i < nb; i++ {
		x := (*[32]float32)(src[32*i:])
		b := (*[20]byte)(dst[20*i:])
		lo, hi := minMax32(x)
		d := (hi - lo) / 15
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putHalf(b[0:], F32ToF16(d))
		putHalf(b[2:], F32ToF16(lo))
		for j := 0; j < 16; j++ {
			q0 := min(15, int(float32((x[j]-lo)*id)+0.5))
			q1 := min(15, int(float32((x[j+16]-lo)*id)+0.5))
			b[4+j] = byte(q0) | byte(q1)<<4
		}
	}
}

func vecDotQ4_0Q8_0(n int, w, x []byte) float32 {
	nb := vecDotBlocks("Q4_0", n, 32, 18, 34, w, x)
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[18]byte)(w[18*i:])
		b := (*[34]byte)(x[34*i:])
		qa := (*[16]byte)(a[2:])
		lo := (*[16]byte)(b[2:])
		hi := (*[16]byte)(b[18:])
		// Σ (q-8)*y = Σ q*y - 8*Σ y.
		var s, sy int32
		for j := 0; j < 16; j++ {
			y0, y1 := int32(int8(lo[j])), int32(int8(hi[j]))
			s += int32(qa[j]&15)*y0 + int32(qa[j]>>4)*y1
			sy += y0 + y1
		}
		sum += float32(s-8*sy) * (half(a[0:]) * half(b[0:]))
	}
	return sum
}

func vecDotQ4_1Q8_1(n int, w, x []byte) float32 {
	nb := vecDotBlocks("Q4_1", n, 32, 20, 36, w, x)
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[20]byte)(w[20*i:])
		b := (*[36]byte)(x[36*i:])
		qa := (*[16]byte)(a[4:])
		lo := (*[16]byte)(b[4:])
		hi := (*[16]byte)(b[20:])
		var s int32
		for j := 0; j < 16; j++ {
			s += int32(qa[j]&15)*int32(int8(lo[j])) + int32(qa[j]>>4)*int32(int8(hi[j]))
		}
		sum += float32(s)*(half(a[0:])*half(b[0:])) + half(a[2:])*half(b[2:])
	}
	return sum
}
