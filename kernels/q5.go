package kernels

import "encoding/binary"

// 5-bit formats of 32 elements (ggml-common.h):
//
//	block_q5_0 (22 bytes): d fp16 | qh uint32 | qs [16]byte          x[j] = d*(q[j]-16)
//	block_q5_1 (24 bytes): d fp16 | m fp16 | qh uint32 | qs [16]byte x[j] = d*q[j] + m
//
// The low four bits of element j are the low nibble of qs[j] (j < 16) or the high
// nibble of qs[j-16]; its fifth bit is bit j of the little-endian word qh.

func init() {
	t := traits[Q5_0]
	t.ToFloat = q5_0ToFloat
	t.FromFloat = q5_0FromFloat
	t.VecDotType = Q8_0
	t.VecDot = vecDotQ5_0Q8_0

	t = traits[Q5_1]
	t.ToFloat = q5_1ToFloat
	t.FromFloat = q5_1FromFloat
	t.VecDotType = Q8_1
	t.VecDot = vecDotQ5_1Q8_1
}

// q5Unpack expands the 32 five-bit quants of a block into q (values 0..31).
func q5Unpack(qh uint32, qs *[16]byte, q *[32]int32) {
	for j := 0; j < 16; j++ {
		q[j] = int32(qs[j]&15) | int32(qh>>j&1)<<4
		q[j+16] = int32(qs[j]>>4) | int32(qh>>(j+16)&1)<<4
	}
}

// q5Pack stores 32 five-bit quants (0..31) as qs nibbles and the qh bit word.
func q5Pack(q *[32]int, qs *[16]byte) (qh uint32) {
	for j := 0; j < 16; j++ {
		qs[j] = byte(q[j]&15) | byte(q[j+16]&15)<<4
		qh |= uint32(q[j]>>4&1)<<j | uint32(q[j+16]>>4&1)<<(j+16)
	}
	return qh
}

func q5_0ToFloat(src []byte, dst []float32) {
	nb := toFloatBlocks("Q5_0", 32, 22, src, dst)
	var q [32]int32
	for i := 0; i < nb; i++ {
		b := (*[22]byte)(src[22*i:])
		y := (*[32]float32)(dst[32*i:])
		d := half(b[0:])
		q5Unpack(binary.LittleEndian.Uint32(b[2:]), (*[16]byte)(b[6:]), &q)
		for j := range y {
			y[j] = float32(q[j]-16) * d
		}
	}
}

// q5_0FromFloat follows quantize_row_q5_0_ref: the value of largest magnitude maps
// to -16, the others round half up onto 0..31.
func q5_0FromFloat(src []float32, dst []byte) {
	nb := fromFloatBlocks("Q5_0", 32, 22, src, dst)
	var q [32]int
	for i := 0; i < nb; i++ {
		x := (*[32]float32)(src[32*i:])
		b := (*[22]byte)(dst[22*i:])
		var amax, vmax float32
		for _, v := range x {
			if a := abs32(v); a > amax {
				amax, vmax = a, v
			}
		}
		d := vmax / -16
		var id float32
		if d != 0 {
			id = 1 / d
		}
		for j, v := range x {
			q[j] = min(31, int(float32(v*id)+16.5))
		}
		putHalf(b[0:], F32ToF16(d))
		binary.LittleEndian.PutUint32(b[2:], q5Pack(&q, (*[16]byte)(b[6:])))
	}
}

func q5_1ToFloat(src []byte, dst []float32) {
	nb := toFloatBlocks("Q5_1", 32, 24, src, dst)
	var q [32]int32
	for i := 0; i < nb; i++ {
		b := (*[24]byte)(src[24*i:])
		y := (*[32]float32)(dst[32*i:])
		d, m := half(b[0:]), half(b[2:])
		q5Unpack(binary.LittleEndian.Uint32(b[4:]), (*[16]byte)(b[8:]), &q)
		for j := range y {
			y[j] = float32(q[j])*d + m
		}
	}
}

// q5_1FromFloat follows quantize_row_q5_1_ref: the block's range [min, max] maps
// onto 0..31.
func q5_1FromFloat(src []float32, dst []byte) {
	nb := fromFloatBlocks("Q5_1", 32, 24, src, dst)
	var q [32]int
	for i := 0; i < nb; i++ {
		x := (*[32]float32)(src[32*i:])
		b := (*[24]byte)(dst[24*i:])
		lo, hi := minMax32(x)
		d := (hi - lo) / 31
		var id float32
		if d != 0 {
			id = 1 / d
		}
		for j, v := range x {
			q[j] = min(31, int(float32((v-lo)*id)+0.5))
		}
		putHalf(b[0:], F32ToF16(d))
		putHalf(b[2:], F32ToF16(lo))
		binary.LittleEndian.PutUint32(b[4:], q5Pack(&q, (*[16]byte)(b[8:])))
	}
}

func vecDotQ5_0Q8_0(n int, w, x []byte) float32 {
	nb := vecDotBlocks("Q5_0", n, 32, 22, 34, w, x)
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[22]byte)(w[22*i:])
		b := (*[34]byte)(x[34*i:])
		qh := binary.LittleEndian.Uint32(a[2:])
		qa := (*[16]byte)(a[6:])
		lo := (*[16]byte)(b[2:])
		hi := (*[16]byte)(b[18:])
		var s int32
		h := uint64(qh) << 4 // bit j of qh at bit 4, bit j+16 at bit 20
		for j := 0; j < 16; j++ {
			q0 := int32(qa[j]&15) | int32(h&16) - 16
			q1 := int32(qa[j]>>4) | int32(h>>16&16) - 16
			s += q0*int32(int8(lo[j])) + q1*int32(int8(hi[j]))
			h >>= 1
		}
		sum += float32(s) * (half(a[0:]) * half(b[0:]))
	}
	return sum
}

func vecDotQ5_1Q8_1(n int, w, x []byte) float32 {
	nb := vecDotBlocks("Q5_1", n, 32, 24, 36, w, x)
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[24]byte)(w[24*i:])
		b := (*[36]byte)(x[36*i:])
		qh := binary.LittleEndian.Uint32(a[4:])
		qa := (*[16]byte)(a[8:])
		lo := (*[16]byte)(b[4:])
		hi := (*[16]byte)(b[20:])
		var s int32
		h := uint64(qh) << 4
		for j := 0; j < 16; j++ {
			q0 := int32(qa[j]&15) | int32(h&16)
			q1 := int32(qa[j]>>4) | int32(h>>16&16)
			s += q0*int32(int8(lo[j])) + q1*int32(int8(hi[j]))
			h >>= 1
		}
		sum += float32(s)*(half(a[0:])*half(b[0:])) + half(a[2:])*half(b[2:])
	}
	return sum
}
