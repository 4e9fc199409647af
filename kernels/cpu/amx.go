package cpu

import (
	"errors"
	"os"
	"unsafe"

	"llmbench/kernels"
)

// AMX (Advanced Matrix Extensions) prompt path: where the CPU has AMX-INT8 and the OS
// grants its tile-data state, Q4_0, Q8_0 and Q4_K products of amxMinToks tokens or more run
// through the same tiled weights as the VNNI kernels (tileFmt, unchanged) sixteen
// tokens at a time. Per block, TDPBSUD multiplies sixteen tokens' signed activation
// bytes (tile A: 16 rows × bs bytes) with sixteen weight rows' unsigned quants q+k
// (tile B: the tile format's 4-byte-interleaved chunks, bs/4 rows × 64 bytes, loaded
// as they are for Q8_0 and after splitting the nibbles for Q4_0 and Q4_K), and TDPBSSD adds
// tile A times a constant tile of −k, so each of the 16×16 int32 results is the
// token's starting sum −k·Σy plus Σ(q+k)·y: exactly the integer the VNNI kernels form.
// The float part that follows is the VNNI kernels' (float(sum), times ws·d, fused into
// the accumulator; see tileFmt), so the AMX path gives the VNNI path's results bit for
// bit: a token's row is the same whichever path, batch size or thread count computes
// it.

// amxToks is the number of tokens an AMX kernel call takes (the rows of tile A).
const amxToks = 16

// amxMinToks is the fewest tokens for which MatMul takes the AMX kernels: below it, the
// padding to sixteen tokens costs more than AMX gains (measured on a 2048×2048 matrix,
// one thread, CPU time per product: Q4_0 at 8 tokens 260 µs AMX vs 180 µs VNNI, even at
// 12, AMX ahead at 16; Q8_0 even at 8, AMX ahead from 12).
const amxMinToks = 12

// amxKernelName names the AMX prompt kernel in kernel-choice listings.
const amxKernelName = "amx-int8 tiled"

// amxScratch is one worker's space for the AMX kernels: two buffers (the kernels are
// pipelined over them) of a unit's two int32 result tiles (2×1 KiB) and its two
// unpacked Q4_0 weight tiles (2×512 bytes), 64-byte aligned within buf, and the 16×16
// outputs of a call, token-major.
type amxScratch struct {
	buf [2*3072 + 64]byte
	out [amxToks * tileRows]float32
}

// tiles returns the 64-byte aligned start of s's tile buffers.
func (s *amxScratch) tiles() *byte {
	off := -uintptr(unsafe.Pointer(&s.buf[0])) & 63
	return &s.buf[off]
}

// amxKernels holds the AMX kernels per weight type (empty where the CPU lacks AMX-INT8
// or AVX-512); they are callable only once the OS has granted the tile state (amxReady).
var amxKernels = map[*tileFmt]amxKernel{}

// amxKernel is an AMX kernel: nu units of a tile times sixteen tokens' activation
// blocks, token t's sixteen outputs stored at out + t·ostride bytes, with scr the
// worker's aligned tile buffers and cfg the kernel's constants (the tile
// configuration first).
type amxKernel func(nu int, tile, act, scr, cfg *byte, out *float32, ostride int)

var (
	// amxOn reports whether MatMul takes the AMX kernels (tests switch it).
	amxOn bool
	// amxWhyOff says why amxOn is false at start ("" when it is true).
	amxWhyOff = "no AMX kernels on this architecture"
)

// amxFor reports whether MatMul takes the AMX kernel for n tokens of tile format f.
func amxFor(f *tileFmt, n int) bool {
	return amxOn && n >= amxMinToks && amxKernels[f] != nil
}

// amxGate reports whether LLMBENCH_CPU allows AMX: "go", "avx2", "avxvnni" and "avx512" switch it
// off; unset or "amx" (the best the CPU has) leave it on.
func amxGate() (ok bool, why string) {
	v := os.Getenv(EnvLevel)
	if c, err := parseLevel(v); err != nil || c < capBest {
		return false, EnvLevel + "=" + v
	}
	return true, ""
}

// amxPromptKernel returns the prompt kernel that runs for weight type t when MatMul
// takes amxMinToks tokens or more: amxKernelName and the CPU features it uses, or ""
// and why the AMX kernel does not run.
func amxPromptKernel(t kernels.DType) (name, why string) {
	switch {
	case !amxOn:
		return "", amxWhyOff
	case amxKernels[tileFmts[t]] == nil:
		return "", "no AMX kernel for " + t.String()
	}
	return amxKernelName, "AMX-TILE, AMX-INT8 (tile data granted by the OS), AVX-512"
}

// tileX16 runs a tile of nu units against sixteen tokens' activation blocks (prepared
// in groups of amxToks): token t's sixteen outputs go to dst[t·stride:], or, with dst
// nil, to s.out[16t:]; nil without AMX kernels.
var tileX16 func(f *tileFmt, nu int, tile, act []byte, s *amxScratch, dst []float32, stride int)

// amxEnable asks the OS for the AMX tile state and, once granted, installs the AMX
// kernels (they do not change amxOn); tests call it to force AMX on where LLMBENCH_CPU
// switched it off.
var amxEnable = func() error { return errors.New("no AMX kernels on this architecture") }
