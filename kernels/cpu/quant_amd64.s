//go:build amd64 && !purego

#include "textflag.h"

// HMAXU reduces the 16 uint32 lanes of Z0 to X0's low lane (Z1 is clobbered).
#define HMAXU \
	VEXTRACTI64X4 $1, Z0, Y1 \
	VPMAXUD Y1, Y0, Y0 \
	VEXTRACTI128 $1, Y0, X1 \
	VPMAXUD X1, X0, X0 \
	VPSHUFD $0x4E, X0, X1 \
	VPMAXUD X1, X0, X0 \
	VPSHUFD $0xB1, X0, X1 \
	VPMAXUD X1, X0, X0

// RGARGS loads the regrouping kernels' first six arguments: the block (or superblock)
// count n into CX, src SI, y DI, tail R8, blk R9 and 4·gsz (the bytes between the tail's
// fields) R10.
#define RGARGS(n) \
	MOVQ n+0(FP), CX \
	MOVQ src+8(FP), SI \
	MOVQ y+16(FP), DI \
	MOVQ tail+24(FP), R8 \
	MOVQ blk+32(FP), R9 \
	MOVQ gsz+40(FP), R10 \
	SHLQ $2, R10

// RGTAIL writes a regrouped block's tail: d (X3), the starting sum −k·Σq (R11 holds
// −k, AX the sum Σq) and the min sum d·Σq, at R8 + 0, 4·gsz and 8·gsz (R10 = 4·gsz).
#define RGTAIL \
	VMOVSS X3, (R8) \
	VCVTSI2SSL AX, X4, X4 \
	VMULSS X3, X4, X4 \
	VMOVSS X4, (R8)(R10*2) \
	IMULL R11, AX \
	MOVL AX, (R8)(R10*1)

// Blocks whose largest magnitude is not finite, or nonzero below 2^-100 (where the
// inverse scale can overflow), are left to the Go code: the kernels stop there.
#define TINY $0x0D800000
#define NOTFINITE $0x7F800000

// func quantQ8_0AVX512(nb int, src *float32, dst *byte) int
//
// Quantizes up to nb blocks of 32 floats to Q8_0 as quantizeQ8_0 does (scale
// amax/127 as fp16, quants rounded half away from zero) and returns the number of
// blocks done.
TEXT ·quantQ8_0AVX512(SB), NOSPLIT, $0-32
	MOVQ nb+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ dst+16(FP), DI
	XORQ AX, AX
	MOVL $0x7FFFFFFF, BX
	VPBROADCASTD BX, Z31
	MOVL $0x3F000000, BX // 0.5
	VPBROADCASTD BX, Z30
	MOVL $0xBF000000, BX // -0.5
	VPBROADCASTD BX, Z29
	MOVL $1, BX
	VPBROADCASTD BX, Z28
	MOVL $0x42FE0000, BX // 127.0
	VMOVD BX, X27
	MOVL $0x3F800000, BX // 1.0
	VMOVD BX, X26
q80q_loop:
	CMPQ AX, CX
	JGE q80q_done
	VMOVUPS (SI), Z2
	VMOVUPS 64(SI), Z3
	VPANDD Z31, Z2, Z0
	VPANDD Z31, Z3, Z1
	VPMAXUD Z1, Z0, Z0
	HMAXU
	VMOVD X0, BX
	CMPL BX, NOTFINITE
	JAE q80q_done
	VXORPS X4, X4, X4 // id
	TESTL BX, BX
	JZ q80q_zero
	CMPL BX, TINY
	JB q80q_done
	VDIVSS X27, X0, X0 // d = amax/127
	VDIVSS X0, X26, X4 // id = 1/d
	JMP q80q_scale
q80q_zero:
	VXORPS X0, X0, X0
q80q_scale:
	VCVTPS2PH $0, X0, X5
	VPEXTRW $0, X5, BX
	MOVW BX, (DI)
	VBROADCASTSS X4, Z4
	VMULPS Z4, Z2, Z2
	VMULPS Z4, Z3, Z3
	VCVTTPS2DQ Z2, Z6
	VCVTTPS2DQ Z3, Z7
	VCVTDQ2PS Z6, Z8
	VCVTDQ2PS Z7, Z9
	VSUBPS Z8, Z2, Z2
	VSUBPS Z9, Z3, Z3
	VCMPPS $0x1D, Z30, Z2, K1 // frac >= 0.5
	VCMPPS $0x12, Z29, Z2, K2 // frac <= -0.5
	VPADDD Z28, Z6, K1, Z6
	VPSUBD Z28, Z6, K2, Z6
	VCMPPS $0x1D, Z30, Z3, K1
	VCMPPS $0x12, Z29, Z3, K2
	VPADDD Z28, Z7, K1, Z7
	VPSUBD Z28, Z7, K2, Z7
	VPMOVSDB Z6, 2(DI)
	VPMOVSDB Z7, 18(DI)
	ADDQ $128, SI
	ADDQ $34, DI
	INCQ AX
	JMP q80q_loop
q80q_done:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

// func quantQ8_KAVX512(nb int, src *float32, dst *byte) int
//
// Quantizes up to nb blocks of 256 floats to Q8_K as the reference does (scale from
// the first value of largest magnitude, quants rounded to nearest even and capped at
// 127, sums of sixteen) and returns the number of blocks done.
TEXT ·quantQ8_KAVX512(SB), NOSPLIT, $0-32
	MOVQ nb+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ dst+16(FP), DI
	XORQ AX, AX
	MOVL $0x7FFFFFFF, BX
	VPBROADCASTD BX, Z31
	MOVL $127, BX
	VPBROADCASTD BX, Z30
	MOVL $0x80808080, BX
	VPBROADCASTD BX, Z29
	MOVL $0x08000800, BX // 2048 words
	VPBROADCASTD BX, X28
	MOVL $0xC2FE0000, BX // -127.0
	VMOVD BX, X27
	MOVL $0x3F800000, BX // 1.0
	VMOVD BX, X26
	VPXORD Z25, Z25, Z25
q8kq_loop:
	CMPQ AX, CX
	JGE q8kq_done
	// Largest magnitude (as bits).
	VPANDD 0(SI), Z31, Z0
	VPANDD 64(SI), Z31, Z1
	VPANDD 128(SI), Z31, Z2
	VPANDD 192(SI), Z31, Z3
	VPANDD 256(SI), Z31, Z4
	VPANDD 320(SI), Z31, Z5
	VPANDD 384(SI), Z31, Z6
	VPANDD 448(SI), Z31, Z7
	VPANDD 512(SI), Z31, Z8
	VPANDD 576(SI), Z31, Z9
	VPANDD 640(SI), Z31, Z10
	VPANDD 704(SI), Z31, Z11
	VPANDD 768(SI), Z31, Z12
	VPANDD 832(SI), Z31, Z13
	VPANDD 896(SI), Z31, Z14
	VPANDD 960(SI), Z31, Z15
	VPMAXUD Z8, Z0, Z0
	VPMAXUD Z9, Z1, Z1
	VPMAXUD Z10, Z2, Z2
	VPMAXUD Z11, Z3, Z3
	VPMAXUD Z12, Z4, Z4
	VPMAXUD Z13, Z5, Z5
	VPMAXUD Z14, Z6, Z6
	VPMAXUD Z15, Z7, Z7
	VPMAXUD Z4, Z0, Z0
	VPMAXUD Z5, Z1, Z1
	VPMAXUD Z6, Z2, Z2
	VPMAXUD Z7, Z3, Z3
	VPMAXUD Z2, Z0, Z0
	VPMAXUD Z3, Z1, Z1
	VPMAXUD Z1, Z0, Z0
	HMAXU
	VMOVD X0, BX
	CMPL BX, NOTFINITE
	JAE q8kq_done
	TESTL BX, BX
	JZ q8kq_zero
	CMPL BX, TINY
	JB q8kq_done
	// The first value of that magnitude.
	VPBROADCASTD X0, Z0
	XORQ DX, DX
q8kq_find:
	VPANDD (SI)(DX*4), Z31, Z1
	VPCMPEQD Z0, Z1, K1
	KMOVW K1, R8
	TESTL R8, R8
	JNZ q8kq_found
	ADDQ $16, DX
	JMP q8kq_find
q8kq_found:
	BSFL R8, R8
	ADDQ R8, DX
	VMOVSS (SI)(DX*4), X1
	VDIVSS X1, X27, X2 // iscale = -127/vmax
	VDIVSS X2, X26, X3 // 1/iscale
	VMOVSS X3, (DI)
	VBROADCASTSS X2, Z2
	XORQ DX, DX
q8kq_quant:
	VMULPS (SI)(DX*4), Z2, Z3
	VCVTPS2DQ Z3, Z3
	VPMINSD Z30, Z3, Z3
	VPMOVSDB Z3, 4(DI)(DX*1)
	ADDQ $16, DX
	CMPQ DX, $256
	JLT q8kq_quant
	// Sums of sixteen: Σ(q+128) by VPSADBW, less 2048.
	XORQ DX, DX
	MOVQ DI, R9
q8kq_sums:
	VPXORD 4(R9), Z29, Z0
	VPSADBW Z25, Z0, Z0
	VPSHUFD $0x4E, Z0, Z1
	VPADDQ Z1, Z0, Z0
	VPMOVQW Z0, X0
	VPSUBW X28, X0, X0
	VPMOVDW X0, X0
	VMOVQ X0, R8
	MOVQ R8, 260(DI)(DX*8)
	ADDQ $64, R9
	ADDQ $1, DX
	CMPQ DX, $4
	JLT q8kq_sums
	JMP q8kq_next
q8kq_zero:
	VMOVDQU64 Z25, (DI)
	VMOVDQU64 Z25, 64(DI)
	VMOVDQU64 Z25, 128(DI)
	VMOVDQU64 Z25, 192(DI)
	VMOVDQU64 Z25, 228(DI)
q8kq_next:
	ADDQ $1024, SI
	ADDQ $292, DI
	INCQ AX
	JMP q8kq_loop
q8kq_done:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

// func f32ToF16AVX512(n16 int, src *float32, dst *uint16) int
//
// Converts up to n16 groups of 16 floats to fp16, rounding to nearest even as
// kernels.F32ToF16 does, and returns the number of groups done: it stops at a group
// holding a NaN (whose payload the hardware would keep, unlike F32ToF16).
TEXT ·f32ToF16AVX512(SB), NOSPLIT, $0-32
	MOVQ n16+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ dst+16(FP), DI
	XORQ AX, AX
f2h_loop:
	CMPQ AX, CX
	JGE f2h_done
	VMOVUPS (SI), Z0
	VCMPPS $3, Z0, Z0, K1 // unordered: NaN
	KORTESTW K1, K1
	JNZ f2h_done
	VCVTPS2PH $0, Z0, (DI)
	ADDQ $64, SI
	ADDQ $32, DI
	INCQ AX
	JMP f2h_loop
f2h_done:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

// func f16ToF32AVX512(n16 int, src *uint16, dst *float32)
//
// Widens n16 groups of 16 fp16 values to float32 (exact).
TEXT ·f16ToF32AVX512(SB), NOSPLIT, $0-24
	MOVQ n16+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ dst+16(FP), DI
	TESTQ CX, CX
	JZ h2f_done
h2f_loop:
	VCVTPH2PS (SI), Z0
	VMOVUPS Z0, (DI)
	ADDQ $32, SI
	ADDQ $64, DI
	DECQ CX
	JNZ h2f_loop
h2f_done:
	VZEROUPPER
	RET

// func f32ToF16AVX2(n8 int, src *float32, dst *uint16) int
//
// f32ToF16AVX512 for eight floats at a time with F16C: returns the number of groups of
// eight done, stopping at a group holding a NaN.
TEXT ·f32ToF16AVX2(SB), NOSPLIT, $0-32
	MOVQ n8+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ dst+16(FP), DI
	XORQ AX, AX
f2h8_loop:
	CMPQ AX, CX
	JGE f2h8_done
	VMOVUPS (SI), Y0
	VCMPPS $3, Y0, Y0, Y1 // unordered: NaN
	VMOVMSKPS Y1, DX
	TESTL DX, DX
	JNZ f2h8_done
	VCVTPS2PH $0, Y0, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	INCQ AX
	JMP f2h8_loop
f2h8_done:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

// func f16ToF32AVX2(n8 int, src *uint16, dst *float32)
//
// f16ToF32AVX512 for eight values at a time with F16C (exact).
TEXT ·f16ToF32AVX2(SB), NOSPLIT, $0-24
	MOVQ n8+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ dst+16(FP), DI
	TESTQ CX, CX
	JZ h2f8_done
h2f8_loop:
	VCVTPH2PS (SI), Y0
	VMOVUPS Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNZ h2f8_loop
h2f8_done:
	VZEROUPPER
	RET

// q8perm orders the dwords of VPACKSSDW+VPACKSSWB's output (per 128-bit lane) back into
// element order.
DATA q8perm<>+0(SB)/4, $0
DATA q8perm<>+4(SB)/4, $4
DATA q8perm<>+8(SB)/4, $1
DATA q8perm<>+12(SB)/4, $5
DATA q8perm<>+16(SB)/4, $2
DATA q8perm<>+20(SB)/4, $6
DATA q8perm<>+24(SB)/4, $3
DATA q8perm<>+28(SB)/4, $7
GLOBL q8perm<>(SB), RODATA|NOPTR, $32

// Q8ROUND rounds the scaled floats F half away from zero into the int32 lanes Q, as
// quantQ8_0AVX512 does (truncate, then one up or down where the fraction reaches
// ±0.5). Clobbers Y14, Y15.
#define Q8ROUND(F, Q) \
	VCVTTPS2DQ F, Q \
	VCVTDQ2PS Q, Y15 \
	VSUBPS Y15, F, F \
	VCMPPS $0x1D, Y13, F, Y14 \
	VPSUBD Y14, Q, Q \
	VCMPPS $0x12, Y12, F, Y14 \
	VPADDD Y14, Q, Q

// func quantQ8_0AVX2(nb int, src *float32, dst *byte) int
//
// quantQ8_0AVX512 eight lanes at a time (AVX2 + F16C): the same bytes, and the same
// blocks left to the Go code.
TEXT ·quantQ8_0AVX2(SB), NOSPLIT, $0-32
	MOVQ nb+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ dst+16(FP), DI
	XORQ AX, AX
	MOVL $0x7FFFFFFF, BX
	MOVQ BX, X11
	VPBROADCASTD X11, Y11
	MOVL $0x3F000000, BX // 0.5
	MOVQ BX, X13
	VPBROADCASTD X13, Y13
	MOVL $0xBF000000, BX // -0.5
	MOVQ BX, X12
	VPBROADCASTD X12, Y12
	MOVL $0x42FE0000, BX // 127.0
	MOVQ BX, X10
	MOVL $0x3F800000, BX // 1.0
	MOVQ BX, X9
q80a_loop:
	CMPQ AX, CX
	JGE q80a_done
	VMOVUPS (SI), Y2
	VMOVUPS 32(SI), Y3
	VMOVUPS 64(SI), Y4
	VMOVUPS 96(SI), Y5
	VPAND Y11, Y2, Y0
	VPAND Y11, Y3, Y1
	VPMAXUD Y1, Y0, Y0
	VPAND Y11, Y4, Y1
	VPMAXUD Y1, Y0, Y0
	VPAND Y11, Y5, Y1
	VPMAXUD Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPMAXUD X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPMAXUD X1, X0, X0
	VPSHUFD $0xB1, X0, X1
	VPMAXUD X1, X0, X0
	VMOVD X0, BX
	CMPL BX, NOTFINITE
	JAE q80a_done
	VXORPS X8, X8, X8 // id
	TESTL BX, BX
	JZ q80a_zero
	CMPL BX, TINY
	JB q80a_done
	VDIVSS X10, X0, X0 // d = amax/127
	VDIVSS X0, X9, X8 // id = 1/d
	JMP q80a_scale
q80a_zero:
	VXORPS X0, X0, X0
q80a_scale:
	VCVTPS2PH $0, X0, X1
	VPEXTRW $0, X1, BX
	MOVW BX, (DI)
	VBROADCASTSS X8, Y8
	VMULPS Y8, Y2, Y2
	VMULPS Y8, Y3, Y3
	VMULPS Y8, Y4, Y4
	VMULPS Y8, Y5, Y5
	Q8ROUND(Y2, Y6)
	Q8ROUND(Y3, Y7)
	Q8ROUND(Y4, Y0)
	Q8ROUND(Y5, Y1)
	VPACKSSDW Y7, Y6, Y6
	VPACKSSDW Y1, Y0, Y0
	VPACKSSWB Y0, Y6, Y6
	VMOVDQU q8perm<>(SB), Y7
	VPERMD Y6, Y7, Y6
	VMOVDQU Y6, 2(DI)
	ADDQ $128, SI
	ADDQ $34, DI
	INCQ AX
	JMP q80a_loop
q80a_done:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

// func regroupQ8_0AVX2(nb int, src *byte, y *byte, tail *byte, blk int, gsz int, k int32)
//
// prepActs' regrouping of one token's nb Q8_0 blocks (34 bytes each from src) with
// AVX2 and F16C: for block b, its 32 quants go to y + b·blk and its scale d (float32),
// starting sum −k·Σq and min sum d·Σq to tail + b·blk at 0, 4·gsz and 8·gsz. The sum
// is exact in int32 and d·Σq one float32 product, as the Go code computes them.
TEXT ·regroupQ8_0AVX2(SB), NOSPLIT, $0-52
	RGARGS(nb)
	MOVL k+48(FP), R11
	NEGL R11                     // −k
	MOVL $0x00010001, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7          // sixteen int16 ones
	TESTQ CX, CX
	JZ rg_done
rg_loop:
	VMOVDQU 2(SI), Y0
	VMOVDQU Y0, (DI)
	VPMOVSXBW X0, Y1
	VEXTRACTI128 $1, Y0, X2
	VPMOVSXBW X2, Y2
	VPADDW Y2, Y1, Y1
	VPMADDWD Y7, Y1, Y1          // eight int32 partial sums
	VEXTRACTI128 $1, Y1, X2
	VPADDD X2, X1, X1
	VPSHUFD $0x4E, X1, X2
	VPADDD X2, X1, X1
	VPSHUFD $0xB1, X1, X2
	VPADDD X2, X1, X1
	VMOVD X1, AX                 // Σq
	MOVWLZX (SI), BX
	VMOVD BX, X3
	VCVTPH2PS X3, X3             // d
	RGTAIL
	ADDQ $34, SI
	ADDQ R9, DI
	ADDQ R9, R8
	DECQ CX
	JNZ rg_loop
rg_done:
	VZEROUPPER
	RET

// func regroupQ8_KAVX2(nsb int, src, y, tail *byte, blk, gsz, bs int, k int32)
//
// regroupQ8_0AVX2 for nsb Q8_K superblocks (292 bytes each from src: d as float32,
// 256 quants, 16 int16 sums of 16) in blocks of bs = 16 or 32 quants: block b's
// quants go to y + b·blk, its tail (d, −k·Σq, d·Σq, with Σq from the stored sums)
// to tail + b·blk.
TEXT ·regroupQ8_KAVX2(SB), NOSPLIT, $0-60
	RGARGS(nsb)
	MOVQ bs+48(FP), R12
	MOVL k+56(FP), R11
	NEGL R11
	TESTQ CX, CX
	JZ rk_done
rk_super:
	VMOVSS (SI), X3              // d
	LEAQ 260(SI), DX             // the sums of 16
	XORQ R13, R13                // the block's first quant in the superblock
	CMPQ R12, $16
	JEQ rk_sub16
rk_sub32:
	VMOVDQU 4(SI)(R13*1), Y0
	VMOVDQU Y0, (DI)
	MOVWLSX (DX), AX
	MOVWLSX 2(DX), BX
	ADDL BX, AX
	RGTAIL
	ADDQ $4, DX
	ADDQ R9, DI
	ADDQ R9, R8
	ADDQ $32, R13
	CMPQ R13, $256
	JLT rk_sub32
	JMP rk_next
rk_sub16:
	VMOVDQU 4(SI)(R13*1), X0
	VMOVDQU X0, (DI)
	MOVWLSX (DX), AX
	RGTAIL
	ADDQ $2, DX
	ADDQ R9, DI
	ADDQ R9, R8
	ADDQ $16, R13
	CMPQ R13, $256
	JLT rk_sub16
rk_next:
	ADDQ $292, SI
	DECQ CX
	JNZ rk_super
rk_done:
	VZEROUPPER
	RET
