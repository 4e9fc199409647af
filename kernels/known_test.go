package kernels

import (
	"testing"
)

// Known-answer tests: blocks written byte by byte from ggml's layouts
// (ggml-common.h), with the values they must decode to worked out by hand.

func checkDecoded(t *testing.T, ty DType, block []byte, want []float32) {
	t.Helper()
	if len(block) != ty.BlockBytes() {
		t.Fatalf("%s: test block has %d bytes, want %d", ty, len(block), ty.BlockBytes())
	}
	got := dequantize(ty, block, len(want))
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: element %d = %v, want %v", ty, i, got[i], want[i])
		}
	}
}

func TestKnownQ4_0(t *testing.T) {
	// d = 0.5 (fp16 0x3800); qs[j] = j | (15-j)<<4.
	b := []byte{0x00, 0x38}
	for j := 0; j < 16; j++ {
		b = append(b, byte(j)|byte(15-j)<<4)
	}
	want := make([]float32, 32)
	for j := 0; j < 16; j++ {
		want[j] = float32(j-8) * 0.5    // low nibbles: -4 … 3.5
		want[j+16] = float32(7-j) * 0.5 // high nibbles: 3.5 … -4
	}
	checkDecoded(t, Q4_0, b, want)

	// And the quantizer: -4 is the largest magnitude, so d = -4/-8 = 0.5 and the
	// block encodes back to the same bytes.
	if got := quantize(t, Q4_0, want); string(got) != string(b) {
		t.Errorf("Q4_0 quantize = % x, want % x", got, b)
	}
}

func TestKnownQ8_0(t *testing.T) {
	// d = 0.25 (fp16 0x3400); qs[j] = 8j-128 as int8.
	b := []byte{0x00, 0x34}
	want := make([]float32, 32)
	for j := 0; j < 32; j++ {
		b = append(b, byte(int8(8*j-128)))
		want[j] = float32(8*j-128) * 0.25
	}
	checkDecoded(t, Q8_0, b, want)
}

func TestKnownQ5_0(t *testing.T) {
	// d = 1 (0x3c00); qh = 0xAAAA5555: the fifth bit is set for even elements
	// 0..14 and odd elements 17..31; qs[j] = j | j<<4.
	b := []byte{0x00, 0x3c, 0x55, 0x55, 0xaa, 0xaa}
	for j := 0; j < 16; j++ {
		b = append(b, byte(j)|byte(j)<<4)
	}
	want := make([]float32, 32)
	for j := 0; j < 16; j++ {
		lo, hi := j, j
		if j%2 == 0 {
			lo += 16
		} else {
			hi += 16
		}
		want[j] = float32(lo - 16)
		want[j+16] = float32(hi - 16)
	}
	checkDecoded(t, Q5_0, b, want)
}

func TestKnownQ4_K(t *testing.T) {
	// d = 1 (0x3c00), dmin = 0.5 (0x3800). Scales {1,2,3,4,17,33,50,63} and mins
	// {0,5,10,63,16,31,47,62} packed by hand: bytes 0-3 hold scales 0-3 with the
	// top two bits of scales 4-7 above them, bytes 4-7 the same for the mins,
	// bytes 8-11 the low nibbles of scale 4-7 (low) and min 4-7 (high).
	sc := []float32{1, 2, 3, 4, 17, 33, 50, 63}
	mn := []float32{0, 5, 10, 63, 16, 31, 47, 62}
	b := []byte{0x00, 0x3c, 0x00, 0x38,
		1 | 1<<6, 2 | 2<<6, 3 | 3<<6, 4 | 3<<6,
		0 | 1<<6, 5 | 1<<6, 10 | 2<<6, 63 | 3<<6,
		1 | 0<<4, 1 | 15<<4, 2 | 15<<4, 15 | 14<<4}
	// qs[32j+l] = (l%16) | (15-l%16)<<4: elements 64j+l get l%16 (group 2j),
	// elements 64j+32+l get 15-l%16 (group 2j+1).
	for j := 0; j < 4; j++ {
		for l := 0; l < 32; l++ {
			b = append(b, byte(l%16)|byte(15-l%16)<<4)
		}
	}
	want := make([]float32, 256)
	for j := 0; j < 4; j++ {
		for l := 0; l < 32; l++ {
			want[64*j+l] = sc[2*j]*float32(l%16) - 0.5*mn[2*j]
			want[64*j+32+l] = sc[2*j+1]*float32(15-l%16) - 0.5*mn[2*j+1]
		}
	}
	checkDecoded(t, Q4_K, b, want)
}

func TestKnownQ6_K(t *testing.T) {
	// d = 1/16 (0x2c00); scales[g] = 17g-128 (int8); element e has the 6-bit
	// quant e%64, stored as: low nibble in ql[64n + l + 32(k&1)], low half for
	// k < 2 and high half for k ≥ 2, high two bits in bits 2k of qh[32n+l], where
	// e = 128n + 32k + l.
	b := make([]byte, 210)
	for n := 0; n < 2; n++ {
		for k := 0; k < 4; k++ {
			for l := 0; l < 32; l++ {
				q := byte((128*n + 32*k + l) % 64)
				i := 64*n + l + 32*(k&1)
				if k < 2 {
					b[i] |= q & 15
				} else {
					b[i] |= (q & 15) << 4
				}
				b[128+32*n+l] |= (q >> 4) << (2 * k)
			}
		}
	}
	for g := 0; g < 16; g++ {
		b[192+g] = byte(int8(17*g - 128))
	}
	b[208], b[209] = 0x00, 0x2c
	want := make([]float32, 256)
	for e := range want {
		want[e] = float32(17*(e/16)-128) / 16 * float32(e%64-32)
	}
	checkDecoded(t, Q6_K, b, want)
	// The first bytes, spelled out: element 0 (q=0) and element 64 (q=0) share
	// ql[0]; element 32 (q=32) and 96 (q=32) share ql[32], whose high bits
	// (2 for both) sit at bits 2-3 and 6-7 of qh[0].
	if b[0] != 0x00 || b[1] != 0x11 || b[32] != 0x00 || b[128] != 0b10_00_10_00 {
		t.Fatalf("Q6_K test block built wrong: % x … qh[0]=%08b", b[:4], b[128])
	}
}

func TestKnownQ3_K(t *testing.T) {
	// d = 0.5 (0x3800). All 16 scales 6-bit value 33 (signed +1): low nibble 1 in
	// both halves of bytes 0-7, high bits 2 (0b10) in every 2-bit field of bytes
	// 8-11. qs = 0b11_10_01_00 everywhere, so element 128n+32j+l has low bits j;
	// hmask[l] = 0x0F for l < 16, 0xF0 for l ≥ 16: the high bit is set for n = 0
	// in the first half of each 32 and for n = 1 in the second half.
	b := make([]byte, 110)
	for l := 0; l < 32; l++ {
		if l < 16 {
			b[l] = 0x0f
		} else {
			b[l] = 0xf0
		}
	}
	for i := 32; i < 96; i++ {
		b[i] = 0b11_10_01_00
	}
	for i := 96; i < 104; i++ {
		b[i] = 0x11
	}
	for i := 104; i < 108; i++ {
		b[i] = 0b10_10_10_10
	}
	b[108], b[109] = 0x00, 0x38
	want := make([]float32, 256)
	for e := range want {
		n, j, l := e/128, e%128/32, e%32
		q := j
		if (n == 0) != (l < 16) {
			q -= 4
		}
		want[e] = 0.5 * float32(q)
	}
	checkDecoded(t, Q3_K, b, want)
}

func TestKnownQ2_K(t *testing.T) {
	// scales[g] = (g%16) | (15-g)<<4: scale g, min 15-g; qs[32n+l] = 0b00_01_10_11
	// so element 128n+32j+l has quant 3-j; d = 1, dmin = 0.25.
	b := make([]byte, 84)
	for g := 0; g < 16; g++ {
		b[g] = byte(g) | byte(15-g)<<4
	}
	for i := 16; i < 80; i++ {
		b[i] = 0b00_01_10_11
	}
	b[80], b[81] = 0x00, 0x3c
	b[82], b[83] = 0x00, 0x34
	want := make([]float32, 256)
	for e := range want {
		g, j := e/16, e%128/32
		want[e] = float32(g*(3-j)) - 0.25*float32(15-g)
	}
	checkDecoded(t, Q2_K, b, want)
}
