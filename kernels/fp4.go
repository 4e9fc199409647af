package kernels

import "math"

// Non-linear 4-bit formats of 32 elements whose nibbles index a table of levels
// (ggml-common.h, dequantize_row_iq4_nl / dequantize_row_mxfp4 in ggml-quants.c):
//
//	block_iq4_nl (18 bytes): d fp16 | qs [16]byte   x[j] = d * kvaluesIQ4NL[q[j]]
//	block_mxfp4  (17 bytes): e byte | qs [16]byte   x[j] = e8m0Half(e) * kvaluesMXFP4[q[j]]
//	block_iq4_xs (136 bytes, 256 elements): d fp16 | scales_h uint16 | scales_l [4]byte |
//	             qs [128]byte; sub-block b (32 elements, qs[16b:16b+16]) has the 6-bit
//	             scale ls = scales_l[b/2]>>(4·(b%2))&15 | (scales_h>>(2b)&3)<<4 and
//	             x[j] = d·(ls-32) * kvaluesIQ4NL[q[j]]
//
// As in Q4_0, byte qs[j] holds element j in its low nibble and element j+16 in its
// high nibble. MXFP4's nibbles are E2M1 codes (sign bit 3); ggml stores their values
// doubled (kvalues_mxfp4) and halves the E8M0 block scale to match, so a block's
// value is 2^(e-127) · E2M1(q) as the OCP MX format defines it. Both types take their
// dot products with Q8_0 activations (IQ4_XS with Q8_K), as ggml's CPU backend does.
// Every dequantized value is an exact float32 product (at most 11+6+7 significant
// bits), so the order of the multiplications cannot change a bit.

// kvaluesIQ4NL is ggml's kvalues_iq4nl: the 16 levels of IQ4_NL and IQ4_XS.
var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// kvaluesMXFP4 is ggml's kvalues_mxfp4: twice the E2M1 value of each 4-bit code.
var kvaluesMXFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

func init() {
	t := traits[IQ4_NL]
	t.ToFloat = iq4NLToFloat
	t.FromFloat = iq4NLFromFloat
	t.VecDotType = Q8_0
	t.VecDot = vecDotIQ4NLQ8_0

	t = traits[IQ4_XS]
	t.ToFloat = iq4XSToFloat
	t.FromFloat = iq4XSFromFloat
	t.VecDotType = Q8_K
	t.VecDot = vecDotIQ4XSQ8_K

	t = traits[MXFP4]
	t.ToFloat = mxfp4ToFloat
	t.FromFloat = mxfp4FromFloat
	t.VecDotType = Q8_0
	t.VecDot = vecDotMXFP4Q8_0
}

// Levels returns the level table of a block type whose nibbles index one: IQ4_NL's
// and IQ4_XS's kvalues_iq4nl, MXFP4's kvalues_mxfp4 (twice the E2M1 values), for fast
// kernels that look the nibbles up themselves; ok is false for every other type.
func Levels(t DType) (lut [16]int8, ok bool) {
	switch t {
	case IQ4_NL, IQ4_XS:
		return kvaluesIQ4NL, true
	case MXFP4:
		return kvaluesMXFP4, true
	}
	return lut, false
}

// E8M0Half returns the factor of an MXFP4 block's E8M0 scale byte e against the
// Levels table, 2^(e-128), exactly (ggml_e8m0_to_fp32_half).
func E8M0Half(e uint8) float32 { return e8m0Half(e) }

// e8m0Half is ggml's ggml_e8m0_to_fp32_half: 2^(e-128) as a float32, exact for every
// byte (e 0 and 1 give the subnormals 2^-128 and 2^-127; 255 is not a NaN here).
func e8m0Half(e uint8) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// lutBlockToFloat dequantizes one block's 16 nibble bytes through the level table
// lut with scale d.
func lutBlockToFloat(qs *[16]byte, lut *[16]int8, d float32, y *[32]float32) {
	for j := 0; j < 16; j++ {
		q := qs[j]
		y[j] = d * float32(lut[q&15])
		y[j+16] = d * float32(lut[q>>4])
	}
}

// lutBlockDot returns Σ lut[q]·y over one block's 32 nibbles and the 32 int8
// activations of a Q8_0 block.
func lutBlockDot(qs *[16]byte, lut *[16]int8, y *[32]byte) int32 {
	var s int32
	for j := 0; j < 16; j++ {
		q := qs[j]
		s += int32(lut[q&15])*int32(int8(y[j])) + int32(lut[q>>4])*int32(int8(y[j+16]))
	}
	return s
}

func iq4NLToFloat(src []byte, dst []float32) {
	nb := toFloatBlocks("IQ4_NL", 32, 18, src, dst)
	for i := 0; i < nb; i++ {
		b := (*[18]byte)(src[18*i:])
		lutBlockToFloat((*[16]byte)(b[2:]), &kvaluesIQ4NL, half(b[0:]), (*[32]float32)(dst[32*i:]))
	}
}

func mxfp4ToFloat(src []byte, dst []float32) {
	nb := toFloatBlocks("MXFP4", 32, 17, src, dst)
	for i := 0; i < nb; i++ {
		b := (*[17]byte)(src[17*i:])
		lutBlockToFloat((*[16]byte)(b[1:]), &kvaluesMXFP4, e8m0Half(b[0]), (*[32]float32)(dst[32*i:]))
	}
}

// mxfp4FromFloat follows quantize_row_mxfp4_ref: the shared exponent is
// e = floor(log2f(amax)) - 2 + 127 (0 for an all-zero block), so the largest value
// lands near the top of E2M1's range (6·2^(e-127); values up to twice that clip to
// ±6), and each value takes the table entry nearest to it, the first on a tie, the
// distance |level·d - x| rounded to float32 as in ggml. log2f is taken as the
// correctly rounded float32 log2, which decides the floor right below powers of two.
func mxfp4FromFloat(src []float32, dst []byte) {
	nb := fromFloatBlocks("MXFP4", 32, 17, src, dst)
	for i := 0; i < nb; i++ {
		x := (*[32]float32)(src[32*i:])
		b := (*[17]byte)(dst[17*i:])
		var amax float32
		for _, v := range x {
			amax = max(amax, abs32(v))
		}
		var e uint8
		if amax > 0 {
			l := math.Floor(float64(float32(math.Log2(float64(amax)))))
			e = uint8(min(255, max(0, int(l)-2+127)))
		}
		b[0] = e
		d := e8m0Half(e)
		for j := 0; j < 16; j++ {
			b[1+j] = mxfp4Index(x[j], d) | mxfp4Index(x[j+16], d)<<4
		}
	}
}

// mxfp4Index is ggml's best_index_mxfp4: the first code whose level·d is nearest x.
func mxfp4Index(x, d float32) byte {
	best, bestErr := 0, abs32(float32(kvaluesMXFP4[0])*d-x)
	for i := 1; i < 16; i++ {
		if err := abs32(float32(kvaluesMXFP4[i])*d - x); err < bestErr {
			best, bestErr = i, err
		}
	}
	return byte(best)
}

// vecDotIQ4NLQ8_0 follows ggml_vec_dot_iq4_nl_q8_0's reference: per block
// d_w·d_x·Σ level·q, summed in float32.
func vecDotIQ4NLQ8_0(n int, w, x []byte) float32 {
	nb := vecDotBlocks("IQ4_NL", n, 32, 18, 34, w, x)
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[18]byte)(w[18*i:])
		b := (*[34]byte)(x[34*i:])
		s := lutBlockDot((*[16]byte)(a[2:]), &kvaluesIQ4NL, (*[32]byte)(b[2:]))
		sum += (half(a[0:]) * half(b[0:])) * float32(s)
	}
	return sum
}

// vecDotMXFP4Q8_0 follows ggml_vec_dot_mxfp4_q8_0_generic: per block
// (d_x·e8m0Half(e))·Σ level·q, summed in float32.
func vecDotMXFP4Q8_0(n int, w, x []byte) float32 {
	nb := vecDotBlocks("MXFP4", n, 32, 17, 34, w, x)
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[17]byte)(w[17*i:])
		b := (*[34]byte)(x[34*i:])
		s := lutBlockDot((*[16]byte)(a[1:]), &kvaluesMXFP4, (*[32]byte)(b[2:]))
		sum += (half(b[0:]) * e8m0Half(a[0])) * float32(s)
	}
	return sum
}

// iq4XSScale returns the 6-bit scale ls of sub-block ib of an IQ4_XS block.
func iq4XSScale(b *[136]byte, ib int) int32 {
	h := uint16(b[2]) | uint16(b[3])<<8
	return int32(b[4+ib/2]>>(4*(ib%2))&15 | byte(h>>(2*ib)&3)<<4)
}

func iq4XSToFloat(src []byte, dst []float32) {
	nb := toFloatBlocks("IQ4_XS", qkK, 136, src, dst)
	for i := 0; i < nb; i++ {
		b := (*[136]byte)(src[136*i:])
		d := half(b[0:])
		for ib := 0; ib < qkK/32; ib++ {
			dl := d * float32(iq4XSScale(b, ib)-32)
			lutBlockToFloat((*[16]byte)(b[8+16*ib:]), &kvaluesIQ4NL, dl, (*[32]float32)(dst[qkK*i+32*ib:]))
		}
	}
}

// vecDotIQ4XSQ8_K follows ggml_vec_dot_iq4_xs_q8_K's reference: per 32-element
// sub-block (d_w·d_x·(ls-32))·Σ level·q, summed in float32.
func vecDotIQ4XSQ8_K(n int, w, x []byte) float32 {
	nb := vecDotBlocks("IQ4_XS", n, qkK, 136, 292, w, x)
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[136]byte)(w[136*i:])
		b := (*[292]byte)(x[292*i:])
		d4d8 := half(a[0:]) * getF32(b[0:])
		for ib := 0; ib < qkK/32; ib++ {
			s := lutBlockDot((*[16]byte)(a[8+16*ib:]), &kvaluesIQ4NL, (*[32]byte)(b[4+32*ib:]))
			sum += (d4d8 * float32(iq4XSScale(a, ib)-32)) * float32(s)
		}
	}
	return sum
}

// bestIndexInt8 is ggml's best_index_int8 over a sorted level table: the index of
// the level nearest x, the upper one on a tie.
func bestIndexInt8(lut *[16]int8, x float32) int {
	if x <= float32(lut[0]) {
		return 0
	}
	if x >= float32(lut[15]) {
		return 15
	}
	ml, mu := 0, 15
	for mu-ml > 1 {
		if mav := (ml + mu) / 2; x < float32(lut[mav]) {
			mu = mav
		} else {
			ml = mav
		}
	}
	if x-float32(lut[mu-1]) < float32(lut[mu])-x {
		return mu - 1
	}
	return mu
}

// iq4BlockScale is the per-32-element search of ggml's quantize_row_iq4_nl_impl
// (no importance weights: weight x², ntry 7): a first scale from the value of
// largest magnitude, its least-squares refinement, and 15 further trial scales,
// keeping the one with the largest sumqx²/sumq2. It returns 0 for a block below
// groupMaxEps.
func iq4BlockScale(xb *[32]float32) float32 {
	const ntry = 7
	var amax, vmax float32
	for _, v := range xb {
		if a := abs32(v); a > amax {
			amax, vmax = a, v
		}
	}
	if amax < groupMaxEps {
		return 0
	}
	fit := func(id float32) (sumqx, sumq2 float32) {
		for _, v := range xb {
			q := float32(kvaluesIQ4NL[bestIndexInt8(&kvaluesIQ4NL, id*v)])
			w := v * v
			sumqx += w * q * v
			sumq2 += w * q * q
		}
		return sumqx, sumq2
	}
	d := -vmax / float32(kvaluesIQ4NL[0])
	sumqx, sumq2 := fit(1 / d)
	d = sumqx / sumq2
	best := d * sumqx
	for itry := -ntry; itry <= ntry; itry++ {
		sumqx, sumq2 = fit(float32(itry+int(kvaluesIQ4NL[0])) / vmax)
		if sumq2 > 0 && sumqx*sumqx > best*sumq2 {
			d = sumqx / sumq2
			best = d * sumqx
		}
	}
	return d
}

// iq4Levels writes the nearest-level nibbles of 32 values for inverse scale id.
func iq4Levels(xb *[32]float32, id float32, qs *[16]byte) {
	for j := 0; j < 16; j++ {
		lo := bestIndexInt8(&kvaluesIQ4NL, id*xb[j])
		hi := bestIndexInt8(&kvaluesIQ4NL, id*xb[j+16])
		qs[j] = byte(lo) | byte(hi)<<4
	}
}

// inv returns 1/v, or 0 for v = 0 (ggml's `v ? 1/v : 0`).
func inv(v float32) float32 {
	if v == 0 {
		return 0
	}
	return 1 / v
}

// iq4NLFromFloat follows quantize_iq4_nl without an importance matrix: the block's
// searched scale is stored as fp16 and the levels are chosen with the float32 one.
func iq4NLFromFloat(src []float32, dst []byte) {
	nb := fromFloatBlocks("IQ4_NL", 32, 18, src, dst)
	for i := 0; i < nb; i++ {
		xb := (*[32]float32)(src[32*i:])
		b := (*[18]byte)(dst[18*i:])
		d := iq4BlockScale(xb)
		putHalf(b[0:], F32ToF16(d))
		iq4Levels(xb, inv(d), (*[16]byte)(b[2:]))
	}
}

// iq4XSFromFloat follows quantize_iq4_xs without an importance matrix: each
// sub-block's searched scale is expressed in 6 bits of d = -maxScale/32 (the one of
// largest magnitude maps to -32), and the levels are chosen again with d·l in float32.
func iq4XSFromFloat(src []float32, dst []byte) {
	nb := fromFloatBlocks("IQ4_XS", qkK, 136, src, dst)
	for i := 0; i < nb; i++ {
		b := (*[136]byte)(dst[136*i:])
		var scales [qkK / 32]float32
		var maxScale, amaxScale float32
		for ib := range scales {
			scales[ib] = iq4BlockScale((*[32]float32)(src[qkK*i+32*ib:]))
			if a := abs32(scales[ib]); a > amaxScale {
				amaxScale, maxScale = a, scales[ib]
			}
		}
		d := -maxScale / 32
		putHalf(b[0:], F32ToF16(d))
		id := inv(d)
		var h uint16
		clear(b[4:8])
		for ib, s := range scales {
			l := min(31, max(-32, nearestInt(id*s)))
			dl := d * float32(l)
			iq4Levels((*[32]float32)(src[qkK*i+32*ib:]), inv(dl), (*[16]byte)(b[8+16*ib:]))
			l += 32
			b[4+ib/2] |= byte(l&15) << (4 * (ib % 2))
			h |= uint16(l>>4) << (2 * ib)
		}
		b[2], b[3] = byte(h), byte(h>>8)
	}
}
