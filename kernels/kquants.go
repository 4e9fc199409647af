package kernels

// K-quant formats: super-blocks of QK_K = 256 elements (ggml-common.h). fp16 fields
// are little-endian; "element e" counts from the start of the super-block.
//
//	block_q2_K (84 bytes):  scales [16]byte | qs [64]byte | d fp16 | dmin fp16
//	    group g = e/16 has scale scales[g]&15 and min scales[g]>>4;
//	    e = 128n + 32j + l (l < 32): q = qs[32n+l]>>(2j) & 3;  x = d*sc*q - dmin*m
//	block_q3_K (110 bytes): hmask [32]byte | qs [64]byte | scales [12]byte | d fp16
//	    group g has a 6-bit scale: low 4 bits in scales[g] (g < 8) or scales[g-8]>>4,
//	    high 2 bits at scales[8+g%4]>>(2*(g/4)); the signed scale is that minus 32.
//	    e = 128n + 32j + l: q = qs[32n+l]>>(2j) & 3, minus 4 unless bit 4n+j of
//	    hmask[l] is set;  x = d*(sc-32)*q
//	block_q4_K (144 bytes): d fp16 | dmin fp16 | scales [12]byte | qs [128]byte
//	    eight groups of 32 with 6-bit scale and min (see unpackScaleMinK4);
//	    e = 64j + l: q = qs[32j+l]&15 (l < 32) or qs[32j+l-32]>>4;  x = d*sc*q - dmin*m
//	block_q5_K (176 bytes): d fp16 | dmin fp16 | scales [12]byte | qh [32]byte | qs [128]byte
//	    as Q4_K, plus a fifth bit: bit 2j of qh[l] for e = 64j+l, bit 2j+1 for e = 64j+32+l
//	block_q6_K (210 bytes): ql [128]byte | qh [64]byte | scales [16]int8 | d fp16
//	    e = 128n + 32k + l: low nibble from ql[64n + l + 32(k&1)] (k < 2 low, k ≥ 2
//	    high), two high bits qh[32n+l]>>(2k) & 3;  x = d*scales[e/16]*(q-32)
//
// The quantizers follow llama.cpp's reference ones (quantize_row_qN_K_ref with
// make_qkx2_quants, make_qx_quants and make_q3_quants), computed in float32 as
// there, so the quality is theirs.

import "math"

// groupMaxEps is ggml's GROUP_MAX_EPS: groups whose largest magnitude is below it
// quantize to zero.
const groupMaxEps = 1e-15

func init() {
	for _, e := range []struct {
		t    DType
		to   func([]byte, []float32)
		from func([]float32, []byte)
		dot  func(int, []byte, []byte) float32
	}{
		{Q2_K, q2_KToFloat, q2_KFromFloat, vecDotQ2_KQ8_K},
		{Q3_K, q3_KToFloat, q3_KFromFloat, vecDotQ3_KQ8_K},
		{Q4_K, q4_KToFloat, q4_KFromFloat, vecDotQ4_KQ8_K},
		{Q5_K, q5_KToFloat, q5_KFromFloat, vecDotQ5_KQ8_K},
		{Q6_K, q6_KToFloat, q6_KFromFloat, vecDotQ6_KQ8_K},
	} {
		t := traits[e.t]
		t.ToFloat = e.to
		t.FromFloat = e.from
		t.VecDotType = Q8_K
		t.VecDot = e.dot
	}
}

func clampInt(v, lo, hi int) int { return max(lo, min(hi, v)) }

// unpackScaleMinK4 decodes the eight 6-bit scales and mins that Q4_K and Q5_K pack
// into 12 bytes: for j < 4, scale j and min j are the low six bits of bytes j and
// j+4; for j ≥ 4 their low four bits are the two nibbles of byte j+4 and their high
// two bits the top bits of bytes j-4 (scale) and j (min).
func unpackScaleMinK4(s *[12]byte, sc, mn *[8]uint8) {
	for j := 0; j < 4; j++ {
		sc[j] = s[j] & 63
		mn[j] = s[j+4] & 63
		sc[j+4] = s[j+8]&15 | (s[j]>>6)<<4
		mn[j+4] = s[j+8]>>4 | (s[j+4]>>6)<<4
	}
}

// packScaleMinK4 is the inverse of unpackScaleMinK4 for values 0..63.
func packScaleMinK4(sc, mn *[8]uint8, s *[12]byte) {
	for j := 0; j < 4; j++ {
		s[j] = sc[j] | (sc[j+4]>>4)<<6
		s[j+4] = mn[j] | (mn[j+4]>>4)<<6
		s[j+8] = sc[j+4]&15 | (mn[j+4]&15)<<4
	}
}

// UnpackQ3Scales decodes the sixteen signed 6-bit scales of a Q3_K block (its 12 scale
// bytes) into sc, one per 16-element sub-block (−32…31).
func UnpackQ3Scales(s *[12]byte, sc *[16]int32) {
	for g := 0; g < 16; g++ {
		var lo byte
		if g < 8 {
			lo = s[g] & 15
		} else {
			lo = s[g-8] >> 4
		}
		hi := (s[8+g%4] >> (2 * (g / 4))) & 3
		sc[g] = int32(lo|hi<<4) - 32
	}
}

// ---- dequantization ----

func q2_KToFloat(src []byte, dst []float32) {
	nb := toFloatBlocks("Q2_K", qkK, 84, src, dst)
	for i := 0; i < nb; i++ {
		b := (*[84]byte)(src[84*i:])
		y := (*[qkK]float32)(dst[qkK*i:])
		d, dmin := half(b[80:]), half(b[82:])
		for n := 0; n < 2; n++ {
			q := (*[32]byte)(b[16+32*n:])
			for j := 0; j < 4; j++ {
				shift := 2 * j
				for h := 0; h < 2; h++ {
					sc := b[8*n+2*j+h]
					dl, ml := d*float32(sc&15), dmin*float32(sc>>4)
					out := (*[16]float32)(y[128*n+32*j+16*h:])
					for l := range out {
						out[l] = dl*float32(q[16*h+l]>>shift&3) - ml
					}
				}
			}
		}
	}
}

func q3_KToFloat(src []byte, dst []float32) {
	nb := toFloatBlocks("Q3_K", qkK, 110, src, dst)
	var sc [16]int32
	for i := 0; i < nb; i++ {
		b := (*[110]byte)(src[110*i:])
		y := (*[qkK]float32)(dst[qkK*i:])
		d := half(b[108:])
		UnpackQ3Scales((*[12]byte)(b[96:]), &sc)
		hm := (*[32]byte)(b[0:])
		for n := 0; n < 2; n++ {
			q := (*[32]byte)(b[32+32*n:])
			for j := 0; j < 4; j++ {
				shift, bit := 2*j, 4*n+j
				for h := 0; h < 2; h++ {
					dl := d * float32(sc[8*n+2*j+h])
					out := (*[16]float32)(y[128*n+32*j+16*h:])
					for l := range out {
						v := int32(q[16*h+l]>>shift&3) - 4 + 4*int32(hm[16*h+l]>>bit&1)
						out[l] = dl * float32(v)
					}
				}
			}
		}
	}
}

func q4_KToFloat(src []byte, dst []float32) {
	nb := toFloatBlocks("Q4_K", qkK, 144, src, dst)
	var sc, mn [8]uint8
	for i := 0; i < nb; i++ {
		b := (*[144]byte)(src[144*i:])
		y := (*[qkK]float32)(dst[qkK*i:])
		d, dmin := half(b[0:]), half(b[2:])
		unpackScaleMinK4((*[12]byte)(b[4:]), &sc, &mn)
		for j := 0; j < 4; j++ {
			q := (*[32]byte)(b[16+32*j:])
			d1, m1 := d*float32(sc[2*j]), dmin*float32(mn[2*j])
			d2, m2 := d*float32(sc[2*j+1]), dmin*float32(mn[2*j+1])
			lo := (*[32]float32)(y[64*j:])
			hi := (*[32]float32)(y[64*j+32:])
			for l := 0; l < 32; l++ {
				lo[l] = d1*float32(q[l]&15) - m1
				hi[l] = d2*float32(q[l]>>4) - m2
			}
		}
	}
}

func q5_KToFloat(src []byte, dst []float32) {
	nb := toFloatBlocks("Q5_K", qkK, 176, src, dst)
	var sc, mn [8]uint8
	for i := 0; i < nb; i++ {
		b := (*[176]byte)(src[176*i:])
		y := (*[qkK]float32)(dst[qkK*i:])
		d, dmin := half(b[0:]), half(b[2:])
		unpackScaleMinK4((*[12]byte)(b[4:]), &sc, &mn)
		qh := (*[32]byte)(b[16:])
		for j := 0; j < 4; j++ {
			q := (*[32]byte)(b[48+32*j:])
			d1, m1 := d*float32(sc[2*j]), dmin*float32(mn[2*j])
			d2, m2 := d*float32(sc[2*j+1]), dmin*float32(mn[2*j+1])
			lo := (*[32]float32)(y[64*j:])
			hi := (*[32]float32)(y[64*j+32:])
			for l := 0; l < 32; l++ {
				h := qh[l] >> (2 * j)
				lo[l] = d1*float32(q[l]&15|(h&1)<<4) - m1
				hi[l] = d2*float32(q[l]>>4|(h>>1&1)<<4) - m2
			}
		}
	}
}

func q6_KToFloat(src []byte, dst []float32) {
	nb := toFloatBlocks("Q6_K", qkK, 210, src, dst)
	for i := 0; i < nb; i++ {
		b := (*[210]byte)(src[210*i:])
		y := (*[qkK]float32)(dst[qkK*i:])
		d := half(b[208:])
		for n := 0; n < 2; n++ {
			ql := (*[64]byte)(b[64*n:])
			qh := (*[32]byte)(b[128+32*n:])
			sc := (*[8]byte)(b[192+8*n:])
			out := (*[128]float32)(y[128*n:])
			for l := 0; l < 32; l++ {
				g := l / 16
				h := qh[l]
				q1 := int32(ql[l]&15|(h&3)<<4) - 32
				q2 := int32(ql[l+32]&15|(h>>2&3)<<4) - 32
				q3 := int32(ql[l]>>4|(h>>4&3)<<4) - 32
				q4 := int32(ql[l+32]>>4|(h>>6&3)<<4) - 32
				out[l] = d * float32(int8(sc[g])) * float32(q1)
				out[l+32] = d * float32(int8(sc[g+2])) * float32(q2)
				out[l+64] = d * float32(int8(sc[g+4])) * float32(q3)
				out[l+96] = d * float32(int8(sc[g+6])) * float32(q4)
			}
		}
	}
}

// ---- quantization helpers (llama.cpp's algorithms, float32 throughout) ----

// makeQKX2Quants fits x ≈ scale*L - negMin with L in 0..nmax (an asymmetric grid)
// minimising the weighted error, trying nstep+1 grid scalings around the plain
// min/max fit (llama.cpp's make_qkx2_quants). useMad selects absolute instead of
// squared error. L and laux must have len(x) elements.
func makeQKX2Quants(x, weights []float32, L, laux []uint8, nmax int, rmin, rdelta float32, nstep int, useMad bool) (scale, negMin float32) {
	n := len(x)
	lo, hi := x[0], x[0]
	sumW := weights[0]
	sumX := sumW * x[0]
	for i := 1; i < n; i++ {
		lo = min(lo, x[i])
		hi = max(hi, x[i])
		w := weights[i]
		sumW += w
		sumX += w * x[i]
	}
	if lo > 0 {
		lo = 0
	}
	if hi == lo {
		clear(L[:n])
		return 0, -lo
	}
	fmax := float32(nmax)
	iscale := fmax / (hi - lo)
	scale = 1 / iscale
	var best float32
	for i, v := range x {
		l := clampInt(nearestInt(iscale*(v-lo)), 0, nmax)
		L[i] = uint8(l)
		diff := scale*float32(l) + lo - v
		if useMad {
			diff = abs32(diff)
		} else {
			diff *= diff
		}
		best += weights[i] * diff
	}
	if nstep < 1 {
		return scale, -lo
	}
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + rdelta*float32(is) + fmax) / (hi - lo)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := clampInt(nearestInt(iscale*(v-lo)), 0, nmax)
			laux[i] = uint8(l)
			w, fl := weights[i], float32(l)
			sumL += w * fl
			sumL2 += w * fl * fl
			sumXL += w * fl * v
		}
		det := sumW*sumL2 - sumL*sumL
		if det <= 0 {
			continue
		}
		thisScale := (sumW*sumXL - sumX*sumL) / det
		thisMin := (sumL2*sumX - sumL*sumXL) / det
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		var cur float32
		for i, v := range x {
			diff := thisScale*float32(laux[i]) + thisMin - v
			if useMad {
				diff = abs32(diff)
			} else {
				diff *= diff
			}
			cur += weights[i] * diff
		}
		if cur < best {
			copy(L[:n], laux[:n])
			best, scale, lo = cur, thisScale, thisMin
		}
	}
	return scale, -lo
}

// makeQXQuants fits x ≈ scale*(L-nmax) with L in 0..2*nmax-1 (a symmetric grid),
// weighting each element by x² and trying 18 grid scalings around the plain
// max-magnitude fit (llama.cpp's make_qx_quants with rmse_type 1).
func makeQXQuants(x []float32, L []uint8, nmax int) float32 {
	var amax, vmax float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, vmax = a, v
		}
	}
	if amax < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	fmax := float32(nmax)
	iscale := -fmax / vmax
	var sumLX, sumL2 float32
	for i, v := range x {
		l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = uint8(l + nmax)
		w, fl := v*v, float32(l)
		sumLX += w * v * fl
		sumL2 += w * fl * fl
	}
	var scale float32
	if sumL2 != 0 {
		scale = sumLX / sumL2
	}
	best := scale * sumLX
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(fmax + 0.1*float32(is)) / vmax
		sumLX, sumL2 = 0, 0
		for _, v := range x {
			l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
			w, fl := v*v, float32(l)
			sumLX += w * v * fl
			sumL2 += w * fl * fl
		}
		if sumL2 > 0 && sumLX*sumLX > best*sumL2 {
			for i, v := range x {
				L[i] = uint8(nmax + clampInt(nearestInt(iscale*v), -nmax, nmax-1))
			}
			scale = sumLX / sumL2
			best = scale * sumLX
		}
	}
	return scale
}

// makeQ3Quants fits x ≈ scale*(L-nmax) with L in 0..2*nmax-1, refining the plain
// max-magnitude fit by coordinate descent on the x²-weighted error (llama.cpp's
// make_q3_quants with do_rmse).
func makeQ3Quants(x []float32, L []int8, nmax int) float32 {
	var amax, vmax float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, vmax = a, v
		}
	}
	if amax < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	iscale := -float32(nmax) / vmax
	var sumLX, sumL2 float32
	for i, v := range x {
		l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l)
		w, fl := v*v, float32(l)
		sumLX += w * v * fl
		sumL2 += w * fl * fl
	}
	for try := 0; try < 5; try++ {
		changed := 0
		for i, v := range x {
			w, fl := v*v, float32(L[i])
			slx := sumLX - w*v*fl
			if slx <= 0 {
				continue
			}
			sl2 := sumL2 - w*fl*fl
			nl := clampInt(nearestInt(v*sl2/slx), -nmax, nmax-1)
			if nl == int(L[i]) {
				continue
			}
			fn := float32(nl)
			slx += w * v * fn
			sl2 += w * fn * fn
			if sl2 > 0 && slx*slx*sumL2 > sumLX*sumLX*sl2 {
				L[i] = int8(nl)
				sumLX, sumL2 = slx, sl2
				changed++
			}
		}
		if changed == 0 {
			break
		}
	}
	for i := range x {
		L[i] += int8(nmax)
	}
	return sumLX / sumL2
}

// ---- quantization ----

// q2_KFromFloat follows quantize_row_q2_K_ref: per group of 16 an asymmetric 2-bit
// fit (mean absolute error, weights |x|), then scales and mins on 4-bit grids.
func q2_KFromFloat(src []float32, dst []byte) {
	nb := fromFloatBlocks("Q2_K", qkK, 84, src, dst)
	var L [qkK]uint8
	var laux [16]uint8
	var weights [16]float32
	var scales, mins [16]float32
	const q4scale = 15
	for i := 0; i < nb; i++ {
		x := (*[qkK]float32)(src[qkK*i:])
		b := (*[84]byte)(dst[84*i:])
		var maxScale, maxMin float32
		for j := 0; j < 16; j++ {
			xg := x[16*j : 16*j+16]
			for l, v := range xg {
				weights[l] = abs32(v)
			}
			scales[j], mins[j] = makeQKX2Quants(xg, weights[:], L[16*j:16*j+16], laux[:], 3, -0.5, 0.1, 15, true)
			maxScale = max(maxScale, scales[j])
			maxMin = max(maxMin, mins[j])
		}
		sc := (*[16]byte)(b[0:])
		if maxScale > 0 {
			iscale := q4scale / maxScale
			for j := range sc {
				sc[j] = byte(nearestInt(iscale * scales[j]))
			}
			putHalf(b[80:], F32ToF16(maxScale/q4scale))
		} else {
			clear(sc[:])
			putHalf(b[80:], 0)
		}
		if maxMin > 0 {
			iscale := q4scale / maxMin
			for j := range sc {
				sc[j] |= byte(nearestInt(iscale*mins[j])) << 4
			}
			putHalf(b[82:], F32ToF16(maxMin/q4scale))
		} else {
			putHalf(b[82:], 0)
		}
		d, dmin := half(b[80:]), half(b[82:])
		for j := 0; j < 16; j++ {
			dl := d * float32(sc[j]&15)
			if dl == 0 {
				continue
			}
			ml := dmin * float32(sc[j]>>4)
			for l := 0; l < 16; l++ {
				L[16*j+l] = uint8(clampInt(nearestInt((x[16*j+l]+ml)/dl), 0, 3))
			}
		}
		qs := (*[64]byte)(b[16:])
		for n := 0; n < 2; n++ {
			for l := 0; l < 32; l++ {
				e := 128*n + l
				qs[32*n+l] = L[e] | L[e+32]<<2 | L[e+64]<<4 | L[e+96]<<6
			}
		}
	}
}

// q3_KFromFloat follows quantize_row_q3_K_ref: per group of 16 a symmetric 3-bit
// fit, then the group scales on a signed 6-bit grid.
func q3_KFromFloat(src []float32, dst []byte) {
	nb := fromFloatBlocks("Q3_K", qkK, 110, src, dst)
	var L [qkK]int8
	var scales [16]float32
	var sc [16]int32
	for i := 0; i < nb; i++ {
		x := (*[qkK]float32)(src[qkK*i:])
		b := (*[110]byte)(dst[110*i:])
		var maxScale, amax float32
		for j := 0; j < 16; j++ {
			scales[j] = makeQ3Quants(x[16*j:16*j+16], L[16*j:16*j+16], 4)
			if a := abs32(scales[j]); a > amax {
				amax, maxScale = a, scales[j]
			}
		}
		ps := (*[12]byte)(b[96:])
		clear(ps[:])
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := 0; j < 16; j++ {
				l := byte(clampInt(int(int8(nearestInt(iscale*scales[j]))), -32, 31) + 32)
				if j < 8 {
					ps[j] = l & 15
				} else {
					ps[j-8] |= (l & 15) << 4
				}
				ps[j%4+8] |= (l >> 4) << (2 * (j / 4))
			}
			putHalf(b[108:], F32ToF16(1/iscale))
		} else {
			putHalf(b[108:], 0)
		}
		d := half(b[108:])
		UnpackQ3Scales(ps, &sc)
		for j := 0; j < 16; j++ {
			dl := d * float32(sc[j])
			if dl == 0 {
				continue
			}
			for l := 0; l < 16; l++ {
				L[16*j+l] = int8(clampInt(nearestInt(x[16*j+l]/dl), -4, 3) + 4)
			}
		}
		hm := (*[32]byte)(b[0:])
		clear(hm[:])
		for e := 0; e < qkK; e++ {
			if L[e] > 3 {
				hm[e%32] |= 1 << (e / 32)
				L[e] -= 4
			}
		}
		qs := (*[64]byte)(b[32:])
		for n := 0; n < 2; n++ {
			for l := 0; l < 32; l++ {
				e := 128*n + l
				qs[32*n+l] = byte(L[e] | L[e+32]<<2 | L[e+64]<<4 | L[e+96]<<6)
			}
		}
	}
}

// quantizeScaleMinK quantizes x into 256 levels 0..nmax with eight (scale, min)
// pairs on 6-bit grids, as quantize_row_q4_K_ref / q5_K_ref do, storing d, dmin
// and the packed scales into hdr (the first 16 bytes of the block) and the levels
// into L.
func quantizeScaleMinK(x *[qkK]float32, hdr *[16]byte, L *[qkK]uint8, nmax int, rmin float32, nstep int) {
	var laux [32]uint8
	var weights [32]float32
	var scales, mins [8]float32
	var maxScale, maxMin float32
	for j := 0; j < 8; j++ {
		xg := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xg {
			sumX2 += v * v
		}
		avX := float32(math.Sqrt(float64(sumX2 / 32)))
		for l, v := range xg {
			weights[l] = avX + abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(xg, weights[:], L[32*j:32*j+32], laux[:], nmax, rmin, 0.1, nstep, false)
		maxScale = max(maxScale, scales[j])
		maxMin = max(maxMin, mins[j])
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	var ls, lm [8]uint8
	for j := 0; j < 8; j++ {
		ls[j] = uint8(min(63, nearestInt(invScale*scales[j])))
		lm[j] = uint8(min(63, nearestInt(invMin*mins[j])))
	}
	packScaleMinK4(&ls, &lm, (*[12]byte)(hdr[4:]))
	putHalf(hdr[0:], F32ToF16(maxScale/63))
	putHalf(hdr[2:], F32ToF16(maxMin/63))
	d, dmin := half(hdr[0:]), half(hdr[2:])
	for j := 0; j < 8; j++ {
		dl := d * float32(ls[j])
		if dl == 0 {
			continue
		}
		ml := dmin * float32(lm[j])
		for l := 0; l < 32; l++ {
			L[32*j+l] = uint8(clampInt(nearestInt((x[32*j+l]+ml)/dl), 0, nmax))
		}
	}
}

// q4_KFromFloat follows quantize_row_q4_K_ref.
func q4_KFromFloat(src []float32, dst []byte) {
	nb := fromFloatBlocks("Q4_K", qkK, 144, src, dst)
	var L [qkK]uint8
	for i := 0; i < nb; i++ {
		x := (*[qkK]float32)(src[qkK*i:])
		b := (*[144]byte)(dst[144*i:])
		quantizeScaleMinK(x, (*[16]byte)(b[0:]), &L, 15, -1, 20)
		for j := 0; j < 4; j++ {
			q := (*[32]byte)(b[16+32*j:])
			for l := range q {
				q[l] = L[64*j+l] | L[64*j+32+l]<<4
			}
		}
	}
}

// q5_KFromFloat follows quantize_row_q5_K_ref.
func q5_KFromFloat(src []float32, dst []byte) {
	nb := fromFloatBlocks("Q5_K", qkK, 176, src, dst)
	var L [qkK]uint8
	for i := 0; i < nb; i++ {
		x := (*[qkK]float32)(src[qkK*i:])
		b := (*[176]byte)(dst[176*i:])
		quantizeScaleMinK(x, (*[16]byte)(b[0:]), &L, 31, -0.5, 15)
		qh := (*[32]byte)(b[16:])
		clear(qh[:])
		for j := 0; j < 4; j++ {
			q := (*[32]byte)(b[48+32*j:])
			for l := range q {
				l1, l2 := L[64*j+l], L[64*j+32+l]
				qh[l] |= (l1>>4&1)<<(2*j) | (l2>>4&1)<<(2*j+1)
				q[l] = l1&15 | (l2&15)<<4
			}
		}
	}
}

// q6_KFromFloat follows quantize_row_q6_K_ref: per group of 16 a symmetric 6-bit
// fit, then the group scales as int8 with the largest at -128.
func q6_KFromFloat(src []float32, dst []byte) {
	nb := fromFloatBlocks("Q6_K", qkK, 210, src, dst)
	var L [qkK]uint8
	var scales [16]float32
	for i := 0; i < nb; i++ {
		x := (*[qkK]float32)(src[qkK*i:])
		b := (*[210]byte)(dst[210*i:])
		var maxScale, maxAbs float32
		for g := 0; g < 16; g++ {
			scales[g] = makeQXQuants(x[16*g:16*g+16], L[16*g:16*g+16], 32)
			if a := abs32(scales[g]); a > maxAbs {
				maxAbs, maxScale = a, scales[g]
			}
		}
		if maxAbs < groupMaxEps {
			clear(b[:])
			continue
		}
		iscale := -128 / maxScale
		putHalf(b[208:], F32ToF16(1/iscale))
		sc := (*[16]byte)(b[192:])
		for g := range sc {
			sc[g] = byte(int8(min(127, nearestInt(iscale*scales[g]))))
		}
		d := half(b[208:])
		for g := 0; g < 16; g++ {
			dl := d * float32(int8(sc[g]))
			if dl == 0 {
				continue
			}
			for l := 0; l < 16; l++ {
				L[16*g+l] = uint8(clampInt(nearestInt(x[16*g+l]/dl), -32, 31) + 32)
			}
		}
		for n := 0; n < 2; n++ {
			ql := (*[64]byte)(b[64*n:])
			qh := (*[32]byte)(b[128+32*n:])
			e := L[128*n : 128*n+128]
			for l := 0; l < 32; l++ {
				ql[l] = e[l]&15 | (e[l+64]&15)<<4
				ql[l+32] = e[l+32]&15 | (e[l+96]&15)<<4
				qh[l] = e[l]>>4 | (e[l+32]>>4)<<2 | (e[l+64]>>4)<<4 | (e[l+96]>>4)<<6
			}
		}
	}
}

// ---- dot products with Q8_K activations ----
//
// Each computes, per super-block, integer sums of quant products per group, scales
// them by the integer group scales, and multiplies once by the float scales (ggml's
// scheme); the contribution of the mins comes from the activations' bsums.

// q8KSums returns the sixteen bsums of a Q8_K block.
func q8KSums(b *[292]byte, s *[16]int32) {
	for j := range s {
		s[j] = getI16(b[260+2*j:])
	}
}

func vecDotQ2_KQ8_K(n int, w, x []byte) float32 {
	nb := vecDotBlocks("Q2_K", n, qkK, 84, 292, w, x)
	var sum float32
	var bs [16]int32
	for i := 0; i < nb; i++ {
		a := (*[84]byte)(w[84*i:])
		b := (*[292]byte)(x[292*i:])
		q8KSums(b, &bs)
		var isum, smin int32
		for g := 0; g < 16; g++ {
			smin += int32(a[g]>>4) * bs[g]
		}
		for n := 0; n < 2; n++ {
			q := (*[32]byte)(a[16+32*n:])
			for j := 0; j < 4; j++ {
				shift := 2 * j
				y := (*[32]byte)(b[4+128*n+32*j:])
				var s0, s1 int32
				for l := 0; l < 16; l++ {
					s0 += int32(q[l]>>shift&3) * int32(int8(y[l]))
					s1 += int32(q[l+16]>>shift&3) * int32(int8(y[l+16]))
				}
				g := 8*n + 2*j
				isum += int32(a[g]&15)*s0 + int32(a[g+1]&15)*s1
			}
		}
		dy := getF32(b[0:])
		sum += dy*half(a[80:])*float32(isum) - dy*half(a[82:])*float32(smin)
	}
	return sum
}

func vecDotQ3_KQ8_K(n int, w, x []byte) float32 {
	nb := vecDotBlocks("Q3_K", n, qkK, 110, 292, w, x)
	var sum float32
	var bs, sc [16]int32
	for i := 0; i < nb; i++ {
		a := (*[110]byte)(w[110*i:])
		b := (*[292]byte)(x[292*i:])
		q8KSums(b, &bs)
		UnpackQ3Scales((*[12]byte)(a[96:]), &sc)
		hm := (*[32]byte)(a[0:])
		var isum int32
		for n := 0; n < 2; n++ {
			q := (*[32]byte)(a[32+32*n:])
			for j := 0; j < 4; j++ {
				shift, bit := 2*j, 4*n+j
				y := (*[32]byte)(b[4+128*n+32*j:])
				// Σ (q + 4h - 4)*y = Σ (q + 4h)*y - 4*bsum.
				var s0, s1 int32
				for l := 0; l < 16; l++ {
					s0 += (int32(q[l]>>shift&3) | int32(hm[l]>>bit&1)<<2) * int32(int8(y[l]))
					s1 += (int32(q[l+16]>>shift&3) | int32(hm[l+16]>>bit&1)<<2) * int32(int8(y[l+16]))
				}
				g := 8*n + 2*j
				isum += sc[g]*(s0-4*bs[g]) + sc[g+1]*(s1-4*bs[g+1])
			}
		}
		sum += half(a[108:]) * getF32(b[0:]) * float32(isum)
	}
	return sum
}

func vecDotQ4_KQ8_K(n int, w, x []byte) float32 {
	nb := vecDotBlocks("Q4_K", n, qkK, 144, 292, w, x)
	var sum float32
	var sc, mn [8]uint8
	for i := 0; i < nb; i++ {
		a := (*[144]byte)(w[144*i:])
		b := (*[292]byte)(x[292*i:])
		unpackScaleMinK4((*[12]byte)(a[4:]), &sc, &mn)
		var isum, smin int32
		for j := 0; j < 8; j++ {
			smin += int32(mn[j]) * (getI16(b[260+4*j:]) + getI16(b[262+4*j:]))
		}
		for j := 0; j < 4; j++ {
			q := (*[32]byte)(a[16+32*j:])
			y0 := (*[32]byte)(b[4+64*j:])
			y1 := (*[32]byte)(b[36+64*j:])
			var s0, s1 int32
			for l := 0; l < 32; l++ {
				s0 += int32(q[l]&15) * int32(int8(y0[l]))
				s1 += int32(q[l]>>4) * int32(int8(y1[l]))
			}
			isum += int32(sc[2*j])*s0 + int32(sc[2*j+1])*s1
		}
		dy := getF32(b[0:])
		sum += dy*half(a[0:])*float32(isum) - dy*half(a[2:])*float32(smin)
	}
	return sum
}

func vecDotQ5_KQ8_K(n int, w, x []byte) float32 {
	nb := vecDotBlocks("Q5_K", n, qkK, 176, 292, w, x)
	var sum float32
	var sc, mn [8]uint8
	for i := 0; i < nb; i++ {
		a := (*[176]byte)(w[176*i:])
		b := (*[292]byte)(x[292*i:])
		unpackScaleMinK4((*[12]byte)(a[4:]), &sc, &mn)
		var isum, smin int32
		for j := 0; j < 8; j++ {
			smin += int32(mn[j]) * (getI16(b[260+4*j:]) + getI16(b[262+4*j:]))
		}
		qh := (*[32]byte)(a[16:])
		for j := 0; j < 4; j++ {
			q := (*[32]byte)(a[48+32*j:])
			y0 := (*[32]byte)(b[4+64*j:])
			y1 := (*[32]byte)(b[36+64*j:])
			shift := 2 * j
			var s0, s1 int32
			for l := 0; l < 32; l++ {
				h := int32(qh[l] >> shift)
				s0 += (int32(q[l]&15) | (h&1)<<4) * int32(int8(y0[l]))
				s1 += (int32(q[l]>>4) | (h&2)<<3) * int32(int8(y1[l]))
			}
			isum += int32(sc[2*j])*s0 + int32(sc[2*j+1])*s1
		}
		dy := getF32(b[0:])
		sum += dy*half(a[0:])*float32(isum) - dy*half(a[2:])*float32(smin)
	}
	return sum
}

func vecDotQ6_KQ8_K(n int, w, x []byte) float32 {
	nb := vecDotBlocks("Q6_K", n, qkK, 210, 292, w, x)
	var sum float32
	var bs [16]int32
	for i := 0; i < nb; i++ {
		a := (*[210]byte)(w[210*i:])
		b := (*[292]byte)(x[292*i:])
		q8KSums(b, &bs)
		var isum int32
		for n := 0; n < 2; n++ {
			ql := (*[64]byte)(a[64*n:])
			qh := (*[32]byte)(a[128+32*n:])
			y := (*[128]byte)(b[4+128*n:])
			for h := 0; h < 2; h++ {
				var s0, s1, s2, s3 int32
				for l := 16 * h; l < 16*h+16; l++ {
					hb := int32(qh[l])
					s0 += (int32(ql[l]&15) | (hb&3)<<4) * int32(int8(y[l]))
					s1 += (int32(ql[l+32]&15) | (hb>>2&3)<<4) * int32(int8(y[l+32]))
					s2 += (int32(ql[l]>>4) | (hb>>4&3)<<4) * int32(int8(y[l+64]))
					s3 += (int32(ql[l+32]>>4) | (hb>>6&3)<<4) * int32(int8(y[l+96]))
				}
				g := 8*n + h
				// Σ (q-32)*y = Σ q*y - 32*bsum; group g+2k holds the k-th quarter.
				isum += int32(int8(a[192+g]))*(s0-32*bs[g]) +
					int32(int8(a[194+g]))*(s1-32*bs[g+2]) +
					int32(int8(a[196+g]))*(s2-32*bs[g+4]) +
					int32(int8(a[198+g]))*(s3-32*bs[g+6])
			}
		}
		sum += half(a[208:]) * getF32(b[0:]) * float32(isum)
	}
	return sum
}
