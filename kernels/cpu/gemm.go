package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"

	"llmbench/kernels"
)

// level names the fastest instruction set the kernels use ("go", "avx2", "avx512vnni").
var level = "go"

// EnvLevel names the environment variable that caps the kernels' instruction set:
// "go" (pure Go), "avx2" (AVX2/FMA/F16C, no AVX-512, no AMX), "avx512" (AVX-512 and
// VNNI, no AMX); unset or empty, the best the CPU has. It is read once, at start-up.
const EnvLevel = "LLMBENCH_CPU"

// cpuCap is a ceiling on the instruction sets the kernels may use.
type cpuCap int

// The ceilings LLMBENCH_CPU selects, lowest first.
const (
	capGo     cpuCap = iota // pure Go
	capAVX2                 // AVX2, FMA and F16C
	capAVX512               // AVX-512 (F, VL, BW) and AVX512-VNNI
	capBest                 // whatever the CPU has, AMX included
)

// levelCap is the ceiling LLMBENCH_CPU asks for; levelErr says why its value was
// refused (the backend then refuses to start; the kernels run at capBest).
var levelCap, levelErr = parseLevel(os.Getenv(EnvLevel))

// parseLevel reads a value of LLMBENCH_CPU.
func parseLevel(v string) (cpuCap, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "amx":
		return capBest, nil
	case "go":
		return capGo, nil
	case "avx2":
		return capAVX2, nil
	case "avx512":
		return capAVX512, nil
	}
	return capBest, fmt.Errorf("%s=%q: want go, avx2, avx512 or amx (or unset for the best the CPU has)", EnvLevel, v)
}

// EnvDecodeOrder names the environment variable that chooses how the one-token
// (decode) kernels of the AVX-512 level (and the AVX2 level's Q4_0, Q4_K and Q6_K
// tiles) walk a worker's band of rows: "quarters" (a row or tile from each quarter of
// the band in turn: four long forward streams, hardware prefetch only) or "adjacent"
// (adjacent rows or tiles, software prefetch ahead where the kernel has it). Unset or
// empty, the CPU's vendor decides: quarters on AMD (faster on Zen 4), adjacent
// elsewhere (faster on the Intel Xeons measured). Every output is the same bits either
// way; only the speed of reading the weights differs. It is read once, at start-up.
const EnvDecodeOrder = "LLMBENCH_DECODE_ORDER"

// orderEnv is the decode order LLMBENCH_DECODE_ORDER asks for ("" for the vendor's
// choice); orderErr says why its value was refused (the backend then refuses to start).
var orderEnv, orderErr = parseOrder(os.Getenv(EnvDecodeOrder))

// parseOrder reads a value of LLMBENCH_DECODE_ORDER.
func parseOrder(v string) (string, error) {
	switch v = strings.ToLower(strings.TrimSpace(v)); v {
	case "", "quarters", "adjacent":
		return v, nil
	}
	return "", fmt.Errorf("%s=%q: want quarters or adjacent (or unset for the CPU vendor's choice)", EnvDecodeOrder, v)
}

// allowed reports whether LLMBENCH_CPU lets the kernels use instruction sets up to c.
func allowed(c cpuCap) bool { return levelCap >= c }

// fastDots holds, per weight type, a dot product over ggml block layouts that is
// faster than the kernels.Traits reference; filled from init where the CPU allows.
var fastDots = map[kernels.DType]func(n int, w, x []byte) float32{}

// dotISA names, per type in fastDots, the instruction set its kernel uses ("avx2",
// "vnni").
var dotISA = map[kernels.DType]string{}

// gemmToks is the number of tokens whose activations are regrouped together (prepActs).
const gemmToks = 4

// packer describes how one weight type's rows are unpacked for the tile layout.
type packer struct {
	bs     int   // elements per scale block: 32, or 16 for Q6_K
	k      int32 // the weights are stored as q+k (unsigned): each block starts at -k·Σy
	hasMin bool  // K-quant with per-block mins (added from the activations' sums)
	// unpack writes one row's cols unsigned quants to q, its block scales to sc and,
	// when hasMin, its (negated, scaled) mins to mn; nil for the formats whose tiles
	// copy the raw bytes (tileFmt.raw).
	unpack func(row []byte, q []byte, sc, mn []float32)
}

var packers = map[kernels.DType]*packer{
	kernels.Q4_0: {bs: 32, k: 8, unpack: unpackQ4_0},
	kernels.Q8_0: {bs: 32, k: 128, unpack: unpackQ8_0},
	kernels.Q4_K: {bs: 32, hasMin: true, unpack: unpackQ4_K},
	kernels.Q5_K: {bs: 32, hasMin: true, unpack: unpackQ5_K},
	kernels.Q6_K: {bs: 16, k: 32, unpack: unpackQ6_K},
	kernels.Q3_K: {bs: 16, k: 4, unpack: unpackQ3_K},
	kernels.Q2_K: {bs: 16, hasMin: true, unpack: unpackQ2_K},
	// tile_lut.go: tiles copied from the raw bytes
	kernels.IQ4_NL: tileIQ4NL.pk, kernels.MXFP4: tileMXFP4.pk, kernels.IQ4_XS: tileIQ4XS.pk,
}

func f16At(b []byte) float32 { return kernels.F16ToF32(binary.LittleEndian.Uint16(b)) }

func unpackQ4_0(row, q []byte, sc, _ []float32) {
	for b := range sc {
		blk := row[18*b : 18*b+18]
		sc[b] = f16At(blk)
		lo := binary.LittleEndian.Uint64(blk[2:])
		hi := binary.LittleEndian.Uint64(blk[10:])
		const m = 0x0F0F0F0F0F0F0F0F
		o := q[32*b : 32*b+32]
		binary.LittleEndian.PutUint64(o[0:], lo&m)
		binary.LittleEndian.PutUint64(o[8:], hi&m)
		binary.LittleEndian.PutUint64(o[16:], lo>>4&m)
		binary.LittleEndian.PutUint64(o[24:], hi>>4&m)
	}
}

func unpackQ8_0(row, q []byte, sc, _ []float32) {
	for b := range sc {
		blk := row[34*b : 34*b+34]
		sc[b] = f16At(blk)
		o := q[32*b : 32*b+32]
		for i := 0; i < 32; i += 8 {
			binary.LittleEndian.PutUint64(o[i:], binary.LittleEndian.Uint64(blk[2+i:])^0x8080808080808080)
		}
	}
}

// scaleMinK4 is ggml's get_scale_min_k4 for sub-block j of a Q4_K/Q5_K header.
func scaleMinK4(j int, s []byte) (sc, mn uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0xF | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

func unpackQ4_K(row, q []byte, sc, mn []float32) {
	for i := 0; i < len(sc)/8; i++ {
		blk := row[144*i : 144*i+144]
		d, dmin := f16At(blk), f16At(blk[2:])
		for j := 0; j < 8; j++ {
			s, m := scaleMinK4(j, blk[4:16])
			sc[8*i+j] = d * float32(s)
			mn[8*i+j] = -dmin * float32(m)
		}
		for j := 0; j < 4; j++ {
			src := blk[16+32*j : 48+32*j]
			o := q[256*i+64*j : 256*i+64*j+64]
			for l := 0; l < 32; l += 8 {
				v := binary.LittleEndian.Uint64(src[l:])
				binary.LittleEndian.PutUint64(o[l:], v&0x0F0F0F0F0F0F0F0F)
				binary.LittleEndian.PutUint64(o[32+l:], v>>4&0x0F0F0F0F0F0F0F0F)
			}
		}
	}
}

// unpackQ5_K is unpackQ4_K for Q5_K rows: each quant is its nibble plus 16 times its
// high bit (qh[l] bit j is element 32j+l's), 0…31.
func unpackQ5_K(row, q []byte, sc, mn []float32) {
	for i := 0; i < len(sc)/8; i++ {
		blk := row[176*i : 176*i+176]
		d, dmin := f16At(blk), f16At(blk[2:])
		qh := blk[16:48]
		for j := 0; j < 8; j++ {
			s, m := scaleMinK4(j, blk[4:16])
			sc[8*i+j] = d * float32(s)
			mn[8*i+j] = -dmin * float32(m)
			src := blk[48+32*(j/2):]
			o := q[256*i+32*j : 256*i+32*j+32]
			for l := range o {
				o[l] = src[l]>>(4*(j%2))&15 | (qh[l]>>j&1)<<4
			}
		}
	}
}

// unpackQ2_K writes a Q2_K row's quants (0…3), its sub-block scales d·sc and mins
// −dmin·m.
func unpackQ2_K(row, q []byte, sc, mn []float32) {
	for i := 0; i < len(sc)/16; i++ {
		blk := row[84*i : 84*i+84]
		d, dmin := f16At(blk[80:]), f16At(blk[82:])
		for g := range 16 {
			sc[16*i+g] = d * float32(blk[g]&15)
			mn[16*i+g] = -dmin * float32(blk[g]>>4)
		}
		for n := range 2 {
			qs := blk[16+32*n : 48+32*n]
			for j := range 4 {
				o := q[256*i+128*n+32*j : 256*i+128*n+32*j+32]
				for l := range o {
					o[l] = qs[l] >> (2 * j) & 3
				}
			}
		}
	}
}

// unpackQ3_K writes a Q3_K row's quants as q+4 (0…7: the two low bits plus 4 times
// the hmask bit) and its sub-block scales d·sc.
func unpackQ3_K(row, q []byte, sc, _ []float32) {
	var s [16]int32
	for i := 0; i < len(sc)/16; i++ {
		blk := row[110*i : 110*i+110]
		d := f16At(blk[108:])
		kernels.UnpackQ3Scales((*[12]byte)(blk[96:108]), &s)
		for g := range s {
			sc[16*i+g] = d * float32(s[g])
		}
		for n := range 2 {
			qs := blk[32+32*n : 64+32*n]
			for j := range 4 {
				o := q[256*i+128*n+32*j : 256*i+128*n+32*j+32]
				for l := range o {
					o[l] = qs[l]>>(2*j)&3 | (blk[l]>>(4*n+j)&1)<<2
				}
			}
		}
	}
}

func unpackQ6_K(row, q []byte, sc, _ []float32) {
	for i := 0; i < len(sc)/16; i++ {
		blk := row[210*i : 210*i+210]
		d := f16At(blk[208:])
		for g := 0; g < 16; g++ {
			sc[16*i+g] = d * float32(int8(blk[192+g]))
		}
		for n := 0; n < 2; n++ {
			ql := blk[64*n : 64*n+64]
			qh := blk[128+32*n : 160+32*n]
			o := q[256*i+128*n : 256*i+128*n+128]
			for l := 0; l < 32; l++ {
				h := qh[l]
				o[l] = ql[l]&15 | (h&3)<<4
				o[l+32] = ql[l+32]&15 | (h>>2&3)<<4
				o[l+64] = ql[l]>>4 | (h>>4&3)<<4
				o[l+96] = ql[l+32]>>4 | (h>>6&3)<<4
			}
		}
	}
}

// gemmScratch is one worker's space: one row unpacked for packTile, and the outputs
// of one tile kernel call.
type gemmScratch struct {
	q      []byte
	sc, mn []float32
	out    [64]float32
	amx    amxScratch // the AMX kernels' tile buffers and outputs
}

// grow returns b resized to n elements, reusing its memory when it is large enough.
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// prepActs regroups tokens [gsz·g, gsz·g+gsz) of the quantized activations xq (rows
// of xRow bytes in format vt; rows past n are zero) into the tile kernels' layout: per
// block of bs elements, the gsz tokens' bs signed bytes, then their float32 scales d,
// their int32 starting sums −k·Σy and their float32 min sums d·Σy (gsz·(bs+12) bytes).
// The VNNI kernels take groups of gemmToks tokens, the AMX ones of amxToks.
func prepActs(dst, xq []byte, xRow, n, g, gsz int, vt kernels.DType, bs, cols int, k int32) {
	nb := cols / bs
	blk := gsz * (bs + 12)
	real := min(gsz, max(0, n-gsz*g)) // tokens of the group that exist; the rest are zero
	for b := 0; b < nb; b++ {
		a := dst[b*blk : (b+1)*blk]
		tail := a[gsz*bs:]
		if real < gsz {
			clear(a[real*bs : gsz*bs])
			for f := range 3 {
				clear(tail[4*(f*gsz+real) : 4*(f+1)*gsz])
			}
		}
		for t := range real {
			row := xq[(gsz*g+t)*xRow : (gsz*g+t+1)*xRow]
			y := a[t*bs : (t+1)*bs]
			var d float32
			var sum int32
			if vt == kernels.Q8_0 {
				src := row[34*b : 34*b+34]
				d = f16At(src)
				copy(y, src[2:2+bs])
				sum = sumInt8(y)
			} else { // Q8_K
				e := b * bs
				sb := row[292*(e/256) : 292*(e/256)+292]
				d = math.Float32frombits(binary.LittleEndian.Uint32(sb))
				off := e % 256
				copy(y, sb[4+off:4+off+bs])
				for j := off / 16; j < (off+bs)/16; j++ {
					sum += int32(int16(binary.LittleEndian.Uint16(sb[260+2*j:])))
				}
			}
			binary.LittleEndian.PutUint32(tail[4*t:], math.Float32bits(d))
			binary.LittleEndian.PutUint32(tail[4*gsz+4*t:], uint32(-k*sum))
			binary.LittleEndian.PutUint32(tail[8*gsz+4*t:], math.Float32bits(d*float32(sum)))
		}
	}
}

// sumInt8 returns the sum of b's bytes read as int8, eight at a time: the unsigned
// byte sum in four 16-bit lanes less 256 for every byte with its sign bit set.
// len(b) is a multiple of 8 and at most 248, so that no lane overflows (the count of
// negative bytes is summed in one byte).
func sumInt8(b []byte) int32 {
	const lo16, ones = 0x00FF00FF00FF00FF, 0x0101010101010101
	var u, neg uint64
	for i := 0; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		u += w&lo16 + w>>8&lo16
		neg += w >> 7 & ones
	}
	return int32(u*0x0001000100010001>>48) - 256*int32(neg*ones>>56)
}
