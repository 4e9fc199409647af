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

// avxVNNI says, per type, which of the AVX2 level's tile kernels sum with AVX-VNNI's
// VPDPBUSD (ymm) where the CPU has it and LLMBENCH_CPU allows it (setAVXVNNI).
var avxVNNI = map[kernels.DType]vnniUse{}

// vnniUse is a set of kernel kinds: the four-token kernel (prompts), the one-token
// and the four-tile ones (decode).
type vnniUse uint8

const (
	vnniX4 vnniUse = 1 << iota
	vnniX1
	vnniX1m
)

// EnvLevel names the environment variable that caps the kernels' instruction set:
// "go" (pure Go), "avx2" (AVX2/FMA/F16C, no AVX-VNNI, no AVX-512, no AMX), "avxvnni"
// (that and AVX-VNNI), "avx512" (AVX-512 and VNNI, no AMX); unset or empty, the best
// the CPU has. It is read once, at start-up.
const EnvLevel = "LLMBENCH_CPU"

// cpuCap is a ceiling on the instruction sets the kernels may use.
type cpuCap int

// The ceilings LLMBENCH_CPU selects, lowest first.
const (
	capGo      cpuCap = iota // pure Go
	capAVX2                  // AVX2, FMA and F16C
	capAVXVNNI               // capAVX2 and AVX-VNNI (VPDPBUSD on ymm, VEX-encoded)
	capAVX512                // AVX-512 (F, VL, BW) and AVX512-VNNI
	capBest                  // whatever the CPU has, AMX included
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
	case "avxvnni":
		return capAVXVNNI, nil
	case "avx512":
		return capAVX512, nil
	}
	return capBest, fmt.Errorf("%s=%q: want go, avx2, avxvnni, avx512 or amx (or unset for the best the CPU has)", EnvLevel, v)
}

// EnvDecodeOrder names the environment variable that chooses how the one-token
// (decode) kernels of the AVX-512 level (and the AVX2 level's Q4_0, Q4_K and Q6_K
// tiles) walk a worker's band of rows: "quarters" (a row or tile from each quarter of
// the band in turn: four long forward streams, hardware prefetch only) or "adjacent"
// (adjacent rows or tiles, software prefetch ahead where the kernel has it). Unset or
// empty, the CPU's vendor decides: quarters on AMD (faster on Zen 4 and Zen 5), adjacent
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

// fastDotRows holds, per type, a kernel computing fastDots' product of nrows rows
// (w, w[wstride:], …) with one row of activations x into dst[:nrows], each bit for bit
// as fastDots computes it; filled from init where the CPU allows.
var fastDotRows = map[kernels.DType]func(n int, w []byte, wstride, nrows int, x []byte, dst []float32){}

// fastDotsN holds, per type, a kernel computing fastDots' product of one row w with
// ntok rows of activations (x, x[xstride:], …) into dst[0], dst[dstride], …, each bit
// for bit as fastDots computes it, reading the row once for two tokens; filled from
// init where the CPU allows.
var fastDotsN = map[kernels.DType]func(n int, w, x []byte, xstride, ntok int, dst []float32, dstride int){}

// dotISA names, per type in fastDots, the instruction set its kernel uses ("avx2",
// "vnni").
var dotISA = map[kernels.DType]string{}

// gemmToks is the number of tokens whose activations are regrouped together (prepActs).
const gemmToks = 4

// packer describes a tile format's blocks: the tile kernels sum q+k (unsigned) over
// blocks of bs elements.
type packer struct {
	bs int   // elements per scale block: 32, or 16 for Q2_K, Q3_K and Q6_K
	k  int32 // the weights are stored as q+k (unsigned): each block starts at -k·Σy
}

var packers = map[kernels.DType]*packer{
	kernels.Q4_0: {bs: 32, k: 8},
	kernels.Q4_1: {bs: 32},
	kernels.Q5_0: {bs: 32, k: 16},
	kernels.Q5_1: {bs: 32},
	kernels.Q8_0: {bs: 32, k: 128},
	kernels.Q2_K: {bs: 16},
	kernels.Q3_K: {bs: 16, k: 4},
	kernels.Q4_K: {bs: 32},
	kernels.Q5_K: {bs: 32},
	kernels.Q6_K: {bs: 16, k: 32},
	// tile_lut.go
	kernels.IQ4_NL: tileIQ4NL.pk, kernels.MXFP4: tileMXFP4.pk, kernels.IQ4_XS: tileIQ4XS.pk,
}

func f16At(b []byte) float32 { return kernels.F16ToF32(binary.LittleEndian.Uint16(b)) }

// scaleMinK4 is ggml's get_scale_min_k4 for sub-block j of a Q4_K/Q5_K header.
func scaleMinK4(j int, s []byte) (sc, mn uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0xF | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// gemmScratch is one worker's space: the outputs of one tile kernel call, and its
// regrouped activations where each worker makes its own.
type gemmScratch struct {
	out [64]float32
	amx amxScratch // the AMX kernels' tile buffers and outputs
	// act holds, per slot (CPU.actSlot), the worker's own regrouping of one group of
	// tokens' activations, and actKey what each holds (tileActs).
	act    [maxShared][]byte
	actKey [maxShared]tileActKey
	_      [64]byte // the next worker's scratch starts a line apart
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
// their int32 starting sums −k·Σy and their float32 min sums d·Σy (Q8_1: its stored
// fp16 s, as ggml takes it) (gsz·(bs+12) bytes).
// The VNNI kernels take groups of gemmToks tokens, the AMX ones of amxToks.
func prepActs(dst, xq []byte, xRow, n, g, gsz int, vt kernels.DType, bs, cols int, k int32) {
	prepActsOver(dst, xq, xRow, n, g, gsz, vt, bs, cols, k, true)
}

// prepActsOver is prepActs that leaves the slots past the group's real tokens as they
// are unless clearPad: a decode step's regrouping (one token of four) then writes its
// token's bytes and fields alone, two of the three cache lines of each block.
func prepActsOver(dst, xq []byte, xRow, n, g, gsz int, vt kernels.DType, bs, cols int, k int32, clearPad bool) {
	nb := cols / bs
	blk := gsz * (bs + 12)
	real := min(gsz, max(0, n-gsz*g)) // tokens of the group that exist; the rest are zero with clearPad
	if nb == 0 {
		return
	}
	if clearPad && real < gsz {
		for b := range nb {
			a := dst[b*blk : (b+1)*blk]
			clear(a[real*bs : gsz*bs])
			for f := range 3 {
				clear(a[gsz*bs+4*(f*gsz+real) : gsz*bs+4*(f+1)*gsz])
			}
		}
	}
	for t := range real {
		row := xq[(gsz*g+t)*xRow : (gsz*g+t+1)*xRow]
		y, tail := dst[t*bs:], dst[gsz*bs+4*t:]
		switch {
		case vt == kernels.Q8_0 && bs == 32 && regroupQ8_0 != nil:
			regroupQ8_0(nb, row, y, tail, blk, gsz, k)
		case vt == kernels.Q8_K && (bs == 16 || bs == 32) && regroupQ8_K != nil:
			regroupQ8_K(cols/256, row, y, tail, blk, gsz, bs, k)
		default:
			regroupGo(row, y, tail, nb, blk, gsz, vt, bs, k)
		}
	}
}

// regroupGo regroups one token's nb blocks of quantized activations from row: block
// b's bs quants to y[b·blk:], its d, −k·Σq and min sum to tail[b·blk:] at 0, 4·gsz and
// 8·gsz bytes.
func regroupGo(row, y, tail []byte, nb, blk, gsz int, vt kernels.DType, bs int, k int32) {
	for b := range nb {
		y, tail := y[b*blk:b*blk+bs], tail[b*blk:]
		var d, ms float32
		var sum int32
		switch vt {
		case kernels.Q8_0:
			// The sums read the source, not the bytes just copied to y: a load from a
			// copy still in the store buffer waited for its cache line (cold after a
			// decode step's weight stream), most of prepActs' time.
			src := row[34*b : 34*b+34]
			d = f16At(src)
			sum = copySumInt8(y, src[2:2+bs])
			ms = d * float32(sum)
		case kernels.Q8_1: // Q8_0's d and quants, and s: d·Σy rounded to fp16, ggml's min sum
			src := row[36*b : 36*b+36]
			d = f16At(src)
			sum = copySumInt8(y, src[4:4+bs])
			ms = f16At(src[2:])
		default: // Q8_K
			e := b * bs
			sb := row[292*(e/256) : 292*(e/256)+292]
			d = math.Float32frombits(binary.LittleEndian.Uint32(sb))
			off := e % 256
			copy(y, sb[4+off:4+off+bs])
			for j := off / 16; j < (off+bs)/16; j++ {
				sum += int32(int16(binary.LittleEndian.Uint16(sb[260+2*j:])))
			}
			ms = d * float32(sum)
		}
		binary.LittleEndian.PutUint32(tail, math.Float32bits(d))
		binary.LittleEndian.PutUint32(tail[4*gsz:], uint32(-k*sum))
		binary.LittleEndian.PutUint32(tail[8*gsz:], math.Float32bits(ms))
	}
}

// regroupQ8_0, where the assembly runs, is regroupGo for Q8_0 blocks of 32: the same
// bytes. A one-token product regroups its activations on every worker before its
// first tile: 2048 columns took 0.95 µs in Go (5632: 2.6 µs), on the path of every
// decode product.
var regroupQ8_0 func(nb int, row, y, tail []byte, blk, gsz int, k int32)

// regroupQ8_K is regroupQ8_0 for a token's nsb Q8_K superblocks in blocks of bs (16
// or 32) quants, each block's Σq from the superblock's stored sums of 16.
var regroupQ8_K func(nsb int, row, y, tail []byte, blk, gsz, bs int, k int32)

// sumInt8 returns the sum of b's bytes read as int8, eight at a time: the unsigned
// byte sum in four 16-bit lanes less 256 for every byte with its sign bit set.
// len(b) is a multiple of 8 and at most 248, so that no lane overflows (the count of
// negative bytes is summed in one byte).
func sumInt8(b []byte) int32 {
	var u, neg uint64
	for i := 0; i+8 <= len(b); i += 8 {
		u, neg = addInt8s(u, neg, binary.LittleEndian.Uint64(b[i:]))
	}
	return int8Total(u, neg)
}

// copySumInt8 copies src to dst (as long as src) and returns sumInt8(src), reading
// each word of src once.
func copySumInt8(dst, src []byte) int32 {
	var u, neg uint64
	dst = dst[:len(src)]
	for i := 0; i+8 <= len(src); i += 8 {
		w := binary.LittleEndian.Uint64(src[i:])
		binary.LittleEndian.PutUint64(dst[i:], w)
		u, neg = addInt8s(u, neg, w)
	}
	return int8Total(u, neg)
}

// addInt8s adds the eight bytes of w to sumInt8's running sums: the unsigned bytes in
// four 16-bit lanes of u, the bytes with their sign bit set in eight byte lanes of neg.
func addInt8s(u, neg, w uint64) (uint64, uint64) {
	const lo16, ones = 0x00FF00FF00FF00FF, 0x0101010101010101
	return u + w&lo16 + w>>8&lo16, neg + w>>7&ones
}

// int8Total turns addInt8s' sums into the signed total.
func int8Total(u, neg uint64) int32 {
	const ones = 0x0101010101010101
	return int32(u*0x0001000100010001>>48) - 256*int32(neg*ones>>56)
}
