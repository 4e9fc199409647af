package cpu

import (
	"encoding/binary"
	"math"
)

// Decode (matrix × one token) layout for Q4_0 weights. The Q8_0 activations of a row
// are regrouped four blocks (128 elements) at a time into q40x4Group bytes: the low
// halves (elements 0–15) of the four blocks, then their high halves, then sixteen
// int32 starting sums (lane 4k holds −8·Σy of block k, the others zero) and sixteen
// float32 scales (block k's scale in lanes 4k…4k+3). A kernel then takes four weight
// rows against one such row, unpacking each group of four weight blocks into one
// 512-bit register.
const q40x4Group = 256

// q40x4 computes four Q4_0 rows (w, w[stride:], w[2·stride:], w[3·stride:]) times one
// activation row prepared by prepQ40x4, over ng groups of four blocks, or is nil where
// the CPU lacks it.
var q40x4 func(ng int, w []byte, stride int, x []byte, out *[4]float32)

// prepQ40x4 regroups one row of Q8_0 activations (a multiple of four blocks) into the
// q40x4 layout.
func prepQ40x4(xq, dst []byte) {
	ng := len(xq) / (4 * 34)
	for g := range ng {
		o := dst[g*q40x4Group : (g+1)*q40x4Group]
		for k := range 4 {
			src := xq[34*(4*g+k) : 34*(4*g+k)+34]
			y := src[2:34]
			copy(o[16*k:16*k+16], y[:16])
			copy(o[64+16*k:64+16*k+16], y[16:])
			var sum int32
			for _, v := range y {
				sum += int32(int8(v))
			}
			s := o[128+16*k : 128+16*k+16]
			binary.LittleEndian.PutUint32(s, uint32(-8*sum))
			binary.LittleEndian.PutUint32(s[4:], 0)
			binary.LittleEndian.PutUint32(s[8:], 0)
			binary.LittleEndian.PutUint32(s[12:], 0)
			d := math.Float32bits(f16At(src))
			for m := range 4 {
				binary.LittleEndian.PutUint32(o[192+16*k+4*m:], d)
			}
		}
	}
}

// q40x4Go is the pure-Go twin of the q40x4 kernels: per 32-bit lane (four elements of
// one block) an integer sum, scaled and accumulated in sixteen float lanes, then
// reduced as the assembly does.
func q40x4Go(ng int, w []byte, stride int, x []byte, out *[4]float32) {
	for r := range 4 {
		row := w[r*stride:]
		var acc [16]float32
		for g := range ng {
			a := x[g*q40x4Group : (g+1)*q40x4Group]
			blk := row[72*g : 72*g+72]
			for l := range 16 {
				k, sub := l/4, l%4
				b := blk[18*k : 18*k+18]
				s := int32(binary.LittleEndian.Uint32(a[128+4*l:]))
				for e := range 4 {
					q := b[2+4*sub+e]
					s += int32(q&15) * int32(int8(a[4*l+e]))
					s += int32(q>>4) * int32(int8(a[64+4*l+e]))
				}
				sc := f16At(b) * math.Float32frombits(binary.LittleEndian.Uint32(a[192+4*l:]))
				acc[l] = float32(math.FMA(float64(float32(s)), float64(sc), float64(acc[l])))
			}
		}
		out[r] = reduce16(&acc)
	}
}

// reduce16 sums sixteen lanes in the order of the assembly's reduction.
func reduce16(a *[16]float32) float32 {
	var h [8]float32
	for i := range h {
		h[i] = a[i] + a[i+8]
	}
	var q [4]float32
	for i := range q {
		q[i] = h[i] + h[i+4]
	}
	return (q[0] + q[1]) + (q[2] + q[3])
}
