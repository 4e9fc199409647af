//go:build amd64 && !purego

#include "textflag.h"

// func sumSqF32x16(n16 int, x *float32) float64
//
// The float64 sum of the float32 squares of the 16·n16 values at x: each square
// rounded to float32 (VMULPS), widened exactly, and added into one of sixteen float64
// lanes (four ymm accumulators, independent chains); the lanes are added pairwise at
// the end.
TEXT ·sumSqF32x16(SB), NOSPLIT, $0-24
	MOVQ n16+0(FP), CX
	MOVQ x+8(FP), SI
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
ss_loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMULPS Y0, Y0, Y0
	VMULPS Y1, Y1, Y1
	VCVTPS2PD X0, Y2
	VEXTRACTF128 $1, Y0, X0
	VCVTPS2PD X0, Y3
	VCVTPS2PD X1, Y4
	VEXTRACTF128 $1, Y1, X1
	VCVTPS2PD X1, Y5
	VADDPD Y2, Y8, Y8
	VADDPD Y3, Y9, Y9
	VADDPD Y4, Y10, Y10
	VADDPD Y5, Y11, Y11
	ADDQ $64, SI
	DECQ CX
	JNZ ss_loop
	VADDPD Y9, Y8, Y8
	VADDPD Y11, Y10, Y10
	VADDPD Y10, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPD X9, X8, X8
	VPERMILPD $1, X8, X9
	VADDSD X9, X8, X8
	VMOVSD X8, ret+16(FP)
	VZEROUPPER
	RET

// func scaleRowF32x8(n8 int, out, row, weight *float32, scale float32)
//
// out[j] = row[j]·scale·weight[j] for the 8·n8 values: two rounded products in that
// order, as the Go loop computes them.
TEXT ·scaleRowF32x8(SB), NOSPLIT, $0-36
	MOVQ n8+0(FP), CX
	MOVQ out+8(FP), DI
	MOVQ row+16(FP), SI
	MOVQ weight+24(FP), DX
	VBROADCASTSS scale+32(FP), Y0
sr_loop:
	VMULPS (SI), Y0, Y1
	VMULPS (DX), Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ sr_loop
	VZEROUPPER
	RET

// func ropePairsAVX(n8 int, v, cs *float32)
//
// ropePairs for 8·n8 elements with AVX: each pair (x0, x1) of v becomes
// (x0·cos − x1·sin, x1·cos + x0·sin) with (cos, sin) the pair of cs at the same place:
// each product rounded, then one add or subtract (VADDSUBPS), the Go code's operations
// and roundings (an add's operands commute exactly).
TEXT ·ropePairsAVX(SB), NOSPLIT, $0-24
	MOVQ n8+0(FP), CX
	MOVQ v+8(FP), DI
	MOVQ cs+16(FP), SI
	TESTQ CX, CX
	JZ rp_done
rp_loop:
	VMOVUPS (DI), Y0             // x0 x1 …
	VMOVUPS (SI), Y1             // cos sin …
	VMOVSLDUP Y1, Y2             // cos cos …
	VMOVSHDUP Y1, Y3             // sin sin …
	VPERMILPS $0xB1, Y0, Y4      // x1 x0 …
	VMULPS Y2, Y0, Y2            // x0·cos x1·cos
	VMULPS Y3, Y4, Y3            // x1·sin x0·sin
	VADDSUBPS Y3, Y2, Y2         // x0·cos − x1·sin, x1·cos + x0·sin
	VMOVUPS Y2, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	DECQ CX
	JNZ rp_loop
rp_done:
	VZEROUPPER
	RET

// func ropeNeoXAVX(n8 int, lo, hi, cs *float32)
//
// ropeNeoX for 8·n8 pairs with AVX2: lo[i], hi[i] become x0·cos − x1·sin and
// x0·sin + x1·cos with (cos, sin) the pair i of cs, taken apart eight pairs at a time
// (VSHUFPS within lanes, then VPERMPD across them): each product rounded, then one
// subtract or add, the Go code's operations and roundings.
TEXT ·ropeNeoXAVX(SB), NOSPLIT, $0-32
	MOVQ n8+0(FP), CX
	MOVQ lo+8(FP), DI
	MOVQ hi+16(FP), DX
	MOVQ cs+24(FP), SI
	TESTQ CX, CX
	JZ rn_done
rn_loop:
	VMOVUPS (SI), Y0             // c0 s0 c1 s1 | c2 s2 c3 s3
	VMOVUPS 32(SI), Y1           // c4 s4 c5 s5 | c6 s6 c7 s7
	VSHUFPS $0x88, Y1, Y0, Y2    // c0 c1 c4 c5 | c2 c3 c6 c7
	VSHUFPS $0xDD, Y1, Y0, Y3    // the sines alike
	VPERMPD $0xD8, Y2, Y2        // c0 … c7
	VPERMPD $0xD8, Y3, Y3        // s0 … s7
	VMOVUPS (DI), Y4             // x0
	VMOVUPS (DX), Y5             // x1
	VMULPS Y2, Y4, Y6            // x0·cos
	VMULPS Y3, Y5, Y7            // x1·sin
	VSUBPS Y7, Y6, Y6
	VMULPS Y3, Y4, Y8            // x0·sin
	VMULPS Y2, Y5, Y9            // x1·cos
	VADDPS Y9, Y8, Y8
	VMOVUPS Y6, (DI)
	VMOVUPS Y8, (DX)
	ADDQ $32, DI
	ADDQ $32, DX
	ADDQ $64, SI
	DECQ CX
	JNZ rn_loop
rn_done:
	VZEROUPPER
	RET
