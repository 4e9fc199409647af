package kernels

// Shared helpers of the block formats: length checks, little-endian field access and
// ggml's rounding rule. The formats themselves live in f16.go (F32, F16, BF16),
// q4.go (Q4_0, Q4_1), q5.go (Q5_0, Q5_1), q8.go (Q8_0, Q8_1, Q8_K) and kquants.go
// (Q2_K … Q6_K).
//
// Contract of the function fields of Traits, for every type filled here:
//   - ToFloat(src, dst): len(dst) must be a multiple of the block size and src must
//     hold at least len(dst)/BlockSize blocks; extra bytes in src are ignored.
//   - FromFloat(src, dst): len(src) must be a multiple of the block size and dst must
//     have room for len(src)/BlockSize blocks.
//   - VecDot(n, w, x): n must be a multiple of the block size, w must hold n elements
//     of the weight type and x n elements of VecDotType.
//
// Violations are programming errors and panic with a message naming the type. None of
// the functions allocates.

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// qkK is ggml's QK_K, the number of elements in a K-quant super-block.
const qkK = 256

// nativeLittleEndian reports whether the host stores integers little-endian, which
// lets F32 data be viewed in place instead of decoded element by element.
var nativeLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// blocksFor returns n/bs, panicking when n is not a whole number of blocks.
func blocksFor(name string, n, bs int) int {
	if n < 0 || n%bs != 0 {
		panic(fmt.Sprintf("kernels: %s: %d elements is not a multiple of the block size %d", name, n, bs))
	}
	return n / bs
}

// needBytes panics unless b holds at least want bytes.
func needBytes(name, what string, b []byte, want int) {
	if len(b) < want {
		panic(fmt.Sprintf("kernels: %s: %s has %d bytes, need %d", name, what, len(b), want))
	}
}

// toFloatBlocks validates the arguments of a ToFloat function for blocks of bs
// elements in bb bytes and returns the number of blocks to convert.
func toFloatBlocks(name string, bs, bb int, src []byte, dst []float32) int {
	nb := blocksFor(name, len(dst), bs)
	needBytes(name, "source", src, nb*bb)
	return nb
}

// fromFloatBlocks validates the arguments of a FromFloat function and returns the
// number of blocks to produce.
func fromFloatBlocks(name string, bs, bb int, src []float32, dst []byte) int {
	nb := blocksFor(name, len(src), bs)
	needBytes(name, "destination", dst, nb*bb)
	return nb
}

// vecDotBlocks validates the arguments of a VecDot function whose weight and
// activation blocks both hold bs elements, in wb and xb bytes, and returns the
// number of blocks.
func vecDotBlocks(name string, n, bs, wb, xb int, w, x []byte) int {
	nb := blocksFor(name, n, bs)
	needBytes(name, "weights", w, nb*wb)
	needBytes(name, "activations", x, nb*xb)
	return nb
}

// half reads the fp16 value stored little-endian at b[0:2].
func half(b []byte) float32 {
	return f16Table[uint16(b[0])|uint16(b[1])<<8]
}

// putHalf stores h little-endian at b[0:2].
func putHalf(b []byte, h uint16) {
	b[0] = byte(h)
	b[1] = byte(h >> 8)
}

// getF32 reads a little-endian float32 at b[0:4].
func getF32(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

// putF32 stores f little-endian at b[0:4].
func putF32(b []byte, f float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(f)) }

// getI16 reads a little-endian int16 at b[0:2].
func getI16(b []byte) int32 { return int32(int16(uint16(b[0]) | uint16(b[1])<<8)) }

// putI16 stores v little-endian at b[0:2].
func putI16(b []byte, v int16) {
	b[0] = byte(v)
	b[1] = byte(uint16(v) >> 8)
}

// nearestInt rounds to the nearest integer, ties to even, as ggml's nearest_int
// does for every value it is used on (|f| < 2^22).
func nearestInt(f float32) int { return int(math.RoundToEven(float64(f))) }

// roundAway rounds half away from zero, as C's roundf.
func roundAway(f float32) int { return int(math.Round(float64(f))) }

// abs32 returns |f|.
func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// floatView returns b[:4*n] as a []float32 when that can be done in place (little-
// endian host, 4-byte aligned data), and ok=false otherwise.
func floatView(b []byte, n int) (v []float32, ok bool) {
	if n == 0 || !nativeLittleEndian || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%4 != 0 {
		return nil, false
	}
	_ = b[4*n-1]
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), n), true
}

// halfView returns b[:2*n] as a []uint16 when that can be done in place.
func halfView(b []byte, n int) (v []uint16, ok bool) {
	if n == 0 || !nativeLittleEndian || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%2 != 0 {
		return nil, false
	}
	_ = b[2*n-1]
	return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), n), true
}
