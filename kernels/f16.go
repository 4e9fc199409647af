package kernels

import (
	"encoding/binary"
	"math"
)

// f16Table maps every IEEE binary16 bit pattern to its float32 value. It is built
// before any init function runs, so conversions work from anywhere in the package.
var f16Table = buildF16Table()

func buildF16Table() (t [1 << 16]float32) {
	for i := range t {
		t[i] = decodeF16(uint16(i))
	}
	return t
}

// decodeF16 converts binary16 bits to float32 exactly (every binary16 value,
// subnormals included, is representable in float32).
func decodeF16(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch exp {
	case 0x1f: // infinity or NaN; the payload moves to the top of the float32 mantissa
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: shift the leading one up to the implicit bit position.
		e := uint32(127 - 15 + 1)
		for man&0x400 == 0 {
			man <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (man&0x3ff)<<13)
	default:
		return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
	}
}

// F16ToF32 converts an IEEE binary16 value (ggml_fp16_t) to float32. The conversion
// is exact; NaN payloads are kept.
func F16ToF32(h uint16) float32 { return f16Table[h] }

// F32ToF16 converts f to IEEE binary16 (ggml_fp16_t) rounding to nearest, ties to
// even, as ggml does: values too large become ±Inf, tiny values become subnormals or
// ±0, and every NaN becomes the quiet NaN 0x7E00 with f's sign (ggml's portable
// conversion; F16C hardware would keep part of the payload instead).
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Result is subnormal (or rounds up to the smallest normal, which the carry
		// out of the mantissa encodes correctly).
		if e < -10 {
			return sign // below half the smallest subnormal: rounds to zero
		}
		m := man | 0x800000
		shift := uint(14 - e)
		r := m >> shift
		rem := m & (1<<shift - 1)
		halfway := uint32(1) << (shift - 1)
		if rem > halfway || (rem == halfway && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // a carry into the exponent is correct, up to and including Inf
	}
	return sign | uint16(r)
}

// BF16ToF32 converts a bfloat16 value (ggml_bf16_t) to float32. The conversion is
// exact.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 converts f to bfloat16 as ggml does: round to nearest, ties to even;
// subnormals are rounded, not flushed; a NaN keeps its sign and top payload bits and
// is made quiet.
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}

func init() {
	t := traits[F32]
	t.ToFloat = f32ToFloat
	t.FromFloat = f32FromFloat
	t.VecDotType = F32
	t.VecDot = vecDotF32

	t = traits[F16]
	t.ToFloat = f16ToFloat
	t.FromFloat = f16FromFloat
	t.VecDotType = F16
	t.VecDot = vecDotF16

	t = traits[BF16]
	t.ToFloat = bf16ToFloat
	t.FromFloat = bf16FromFloat
	t.VecDotType = BF16
	t.VecDot = vecDotBF16
}

func f32ToFloat(src []byte, dst []float32) {
	n := len(dst)
	needBytes("F32", "source", src, 4*n)
	if v, ok := floatView(src, n); ok {
		copy(dst, v)
		return
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func f32FromFloat(src []float32, dst []byte) {
	n := len(src)
	needBytes("F32", "destination", dst, 4*n)
	if v, ok := floatView(dst, n); ok {
		copy(v, src)
		return
	}
	for i, f := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(f))
	}
}

func f16ToFloat(src []byte, dst []float32) {
	needBytes("F16", "source", src, 2*len(dst))
	for i := range dst {
		dst[i] = f16Table[binary.LittleEndian.Uint16(src[2*i:])]
	}
}

func f16FromFloat(src []float32, dst []byte) {
	needBytes("F16", "destination", dst, 2*len(src))
	for i, f := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToF16(f))
	}
}

func bf16ToFloat(src []byte, dst []float32) {
	needBytes("BF16", "source", src, 2*len(dst))
	for i := range dst {
		dst[i] = BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func bf16FromFloat(src []float32, dst []byte) {
	needBytes("BF16", "destination", dst, 2*len(src))
	for i, f := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToBF16(f))
	}
}

// The float dot products keep eight float32 partial sums, one per lane of a 256-bit
// vector, like ggml's SIMD paths (which accumulate F32, F16 and BF16 products in
// float32 registers and reduce them at the end); the lanes are summed pairwise and
// the tail is added last.

func vecDotF32(n int, w, x []byte) float32 {
	if n < 0 {
		blocksFor("F32", n, 1)
	}
	needBytes("F32", "weights", w, 4*n)
	needBytes("F32", "activations", x, 4*n)
	a, okA := floatView(w, n)
	b, okB := floatView(x, n)
	if !okA || !okB {
		var s float32
		for i := 0; i < n; i++ {
			s += getF32(w[4*i:]) * getF32(x[4*i:])
		}
		return s
	}
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		p := (*[8]float32)(a[i:])
		q := (*[8]float32)(b[i:])
		s0 += p[0] * q[0]
		s1 += p[1] * q[1]
		s2 += p[2] * q[2]
		s3 += p[3] * q[3]
		s4 += p[4] * q[4]
		s5 += p[5] * q[5]
		s6 += p[6] * q[6]
		s7 += p[7] * q[7]
	}
	s := ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))
	for ; i < n; i++ {
		s += a[i] * b[i]
	}
	return s
}

func vecDotF16(n int, w, x []byte) float32 {
	if n < 0 {
		blocksFor("F16", n, 1)
	}
	needBytes("F16", "weights", w, 2*n)
	needBytes("F16", "activations", x, 2*n)
	tab := &f16Table
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	a, okA := halfView(w, n)
	b, okB := halfView(x, n)
	if okA && okB {
		for ; i+8 <= n; i += 8 {
			p := (*[8]uint16)(a[i:])
			q := (*[8]uint16)(b[i:])
			s0 += tab[p[0]] * tab[q[0]]
			s1 += tab[p[1]] * tab[q[1]]
			s2 += tab[p[2]] * tab[q[2]]
			s3 += tab[p[3]] * tab[q[3]]
			s4 += tab[p[4]] * tab[q[4]]
			s5 += tab[p[5]] * tab[q[5]]
			s6 += tab[p[6]] * tab[q[6]]
			s7 += tab[p[7]] * tab[q[7]]
		}
	} else {
		for ; i+8 <= n; i += 8 {
			p := (*[16]byte)(w[2*i:])
			q := (*[16]byte)(x[2*i:])
			s0 += tab[binary.LittleEndian.Uint16(p[0:])] * tab[binary.LittleEndian.Uint16(q[0:])]
			s1 += tab[binary.LittleEndian.Uint16(p[2:])] * tab[binary.LittleEndian.Uint16(q[2:])]
			s2 += tab[binary.LittleEndian.Uint16(p[4:])] * tab[binary.LittleEndian.Uint16(q[4:])]
			s3 += tab[binary.LittleEndian.Uint16(p[6:])] * tab[binary.LittleEndian.Uint16(q[6:])]
			s4 += tab[binary.LittleEndian.Uint16(p[8:])] * tab[binary.LittleEndian.Uint16(q[8:])]
			s5 += tab[binary.LittleEndian.Uint16(p[10:])] * tab[binary.LittleEndian.Uint16(q[10:])]
			s6 += tab[binary.LittleEndian.Uint16(p[12:])] * tab[binary.LittleEndian.Uint16(q[12:])]
			s7 += tab[binary.LittleEndian.Uint16(p[14:])] * tab[binary.LittleEndian.Uint16(q[14:])]
		}
	}
	s := ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))
	for ; i < n; i++ {
		s += tab[binary.LittleEndian.Uint16(w[2*i:])] * tab[binary.LittleEndian.Uint16(x[2*i:])]
	}
	return s
}

func vecDotBF16(n int, w, x []byte) float32 {
	if n < 0 {
		blocksFor("BF16", n, 1)
	}
	needBytes("BF16", "weights", w, 2*n)
	needBytes("BF16", "activations", x, 2*n)
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		p := (*[16]byte)(w[2*i:])
		q := (*[16]byte)(x[2*i:])
		s0 += bf(p[0:]) * bf(q[0:])
		s1 += bf(p[2:]) * bf(q[2:])
		s2 += bf(p[4:]) * bf(q[4:])
		s3 += bf(p[6:]) * bf(q[6:])
		s4 += bf(p[8:]) * bf(q[8:])
		s5 += bf(p[10:]) * bf(q[10:])
		s6 += bf(p[12:]) * bf(q[12:])
		s7 += bf(p[14:]) * bf(q[14:])
	}
	s := ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))
	for ; i < n; i++ {
		s += bf(w[2*i:]) * bf(x[2*i:])
	}
	return s
}

// bf reads a little-endian bfloat16 at b[0:2] as float32.
func bf(b []byte) float32 { return math.Float32frombits(uint32(b[0])<<16 | uint32(b[1])<<24) }
