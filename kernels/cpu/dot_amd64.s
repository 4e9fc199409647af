//go:build amd64 && !purego

#include "textflag.h"
#include "lanes_amd64.h"

// Constants are built in registers: Y7 = 0x0F bytes, Y8 = 0x08 bytes, Y6 = 1 words.
#define CONSTS \
	MOVL $0x0F0F0F0F, AX \
	VMOVD AX, X7 \
	VPBROADCASTD X7, Y7 \
	MOVL $0x08080808, AX \
	VMOVD AX, X8 \
	VPBROADCASTD X8, Y8 \
	MOVL $0x00010001, AX \
	VMOVD AX, X6 \
	VPBROADCASTD X6, Y6

// SCALE leaves dw*dx (fp16 scales at wo(SI) and xo(DI)) in all lanes of S.
#define SCALE(wo, xo, S, T) \
	VPBROADCASTW wo(SI), X4 \
	VCVTPH2PS X4, S \
	VPBROADCASTW xo(DI), X5 \
	VCVTPH2PS X5, T \
	VMULPS T, S, S

// Q4W loads a Q4_0 block's nibbles at wo(SI) as signed q-8 bytes into W (X: its low half).
#define Q4W(wo, W, X, T) \
	VMOVDQU wo(SI), X \
	VPSRLW $4, X, T \
	VINSERTI128 $1, T, W, W \
	VPAND Y7, W, W \
	VPSUBB Y8, W, W

// SIGNED turns signed weights W and signed activations Y into |w| (W) and
// y*sign(w) (Y) so that an unsigned-by-signed byte product gives w*y.
#define SIGNED(W, Y) \
	VPSIGNB W, Y, Y \
	VPABSB W, W

// DOT2 sums w*y over groups of four bytes into the int32 lanes of D (AVX2).
#define DOT2(W, Y, D) \
	VPMADDUBSW Y, W, D \
	VPMADDWD Y6, D, D

// DOTV is DOT2 with AVX512-VNNI.
#define DOTV(W, Y, D) \
	VPXOR D, D, D \
	VPDPBUSD Y, W, D

#define ACC(D, S, A) \
	VCVTDQ2PS D, D \
	VFMADD231PS S, D, A


// Q80BLK and Q40BLK accumulate one block at offsets wo/xo into A; the second of a
// pair uses the registers after the slash.
#define Q80BLK(DOT, wo, xo, A) \
	SCALE(wo, xo, Y4, Y5) \
	VMOVDQU (wo+2)(SI), Y0 \
	VMOVDQU (xo+2)(DI), Y1 \
	SIGNED(Y0, Y1) \
	DOT(Y0, Y1, Y2) \
	ACC(Y2, Y4, A)

#define Q40BLK(DOT, wo, xo, A) \
	SCALE(wo, xo, Y4, Y5) \
	Q4W(wo+2, Y0, X0, X1) \
	VMOVDQU (xo+2)(DI), Y1 \
	SIGNED(Y0, Y1) \
	DOT(Y0, Y1, Y2) \
	ACC(Y2, Y4, A)

// func dotQ8_0AVX2(nb int, w, x *byte) float32
//
// Blocks are taken two at a time, even ones summed into Y3 and odd ones into Y9.
TEXT ·dotQ8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	CONSTS
	VXORPS Y3, Y3, Y3
	VXORPS Y9, Y9, Y9
	CMPQ CX, $2
	JLT q80a_tail
q80a_loop:
	Q80BLK(DOT2, 0, 0, Y3)
	Q80BLK(DOT2, 34, 34, Y9)
	ADDQ $68, SI
	ADDQ $68, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE q80a_loop
q80a_tail:
	TESTQ CX, CX
	JZ q80a_done
	Q80BLK(DOT2, 0, 0, Y3)
q80a_done:
	VADDPS Y9, Y3, Y3
	HSUM
	VMOVSS X3, ret+24(FP)
	VZEROUPPER
	RET

// func dotQ8_0VNNI(nb int, w, x *byte) float32
//
// Blocks are taken two at a time, even ones summed into Y3 and odd ones into Y9.
TEXT ·dotQ8_0VNNI(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	CONSTS
	VXORPS Y3, Y3, Y3
	VXORPS Y9, Y9, Y9
	CMPQ CX, $2
	JLT q80v_tail
q80v_loop:
	Q80BLK(DOTV, 0, 0, Y3)
	Q80BLK(DOTV, 34, 34, Y9)
	ADDQ $68, SI
	ADDQ $68, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE q80v_loop
q80v_tail:
	TESTQ CX, CX
	JZ q80v_done
	Q80BLK(DOTV, 0, 0, Y3)
q80v_done:
	VADDPS Y9, Y3, Y3
	HSUM
	VMOVSS X3, ret+24(FP)
	VZEROUPPER
	RET

// func dotQ4_0AVX2(nb int, w, x *byte) float32
//
// Blocks are taken two at a time, even ones summed into Y3 and odd ones into Y9.
TEXT ·dotQ4_0AVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	CONSTS
	VXORPS Y3, Y3, Y3
	VXORPS Y9, Y9, Y9
	CMPQ CX, $2
	JLT q40a_tail
q40a_loop:
	Q40BLK(DOT2, 0, 0, Y3)
	Q40BLK(DOT2, 18, 34, Y9)
	ADDQ $36, SI
	ADDQ $68, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE q40a_loop
q40a_tail:
	TESTQ CX, CX
	JZ q40a_done
	Q40BLK(DOT2, 0, 0, Y3)
q40a_done:
	VADDPS Y9, Y3, Y3
	HSUM
	VMOVSS X3, ret+24(FP)
	VZEROUPPER
	RET

// func dotQ4_0VNNI(nb int, w, x *byte) float32
//
// Blocks are taken two at a time, even ones summed into Y3 and odd ones into Y9.
TEXT ·dotQ4_0VNNI(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	CONSTS
	VXORPS Y3, Y3, Y3
	VXORPS Y9, Y9, Y9
	CMPQ CX, $2
	JLT q40v_tail
q40v_loop:
	Q40BLK(DOTV, 0, 0, Y3)
	Q40BLK(DOTV, 18, 34, Y9)
	ADDQ $36, SI
	ADDQ $68, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE q40v_loop
q40v_tail:
	TESTQ CX, CX
	JZ q40v_done
	Q40BLK(DOTV, 0, 0, Y3)
q40v_done:
	VADDPS Y9, Y3, Y3
	HSUM
	VMOVSS X3, ret+24(FP)
	VZEROUPPER
	RET

// REDUCE4 folds the four accumulators Y0..Y3 as ggml does into X3.
#define REDUCE4 \
	VADDPS Y2, Y0, Y0 \
	VADDPS Y3, Y1, Y1 \
	VADDPS Y1, Y0, Y3 \
	HSUM

// ZEROY4 clears four registers.
#define ZEROY4(A, B, C, D) \
	VXORPS A, A, A \
	VXORPS B, B, B \
	VXORPS C, C, C \
	VXORPS D, D, D

// F32STEP is one step of dotF32FMA: 32 weights at SI into Y4..Y7, times the
// activations at DI, into the accumulators Y0..Y3.
#define F32STEP \
	VMOVUPS (SI), Y4 \
	VMOVUPS 32(SI), Y5 \
	VMOVUPS 64(SI), Y6 \
	VMOVUPS 96(SI), Y7 \
	VFMADD231PS (DI), Y4, Y0 \
	VFMADD231PS 32(DI), Y5, Y1 \
	VFMADD231PS 64(DI), Y6, Y2 \
	VFMADD231PS 96(DI), Y7, Y3

// F32DOT is dotF32FMA's sum of CX steps of 32 weights at SI times the activations at
// DI, into X3 (REDUCE4); loop and done are the caller's labels for its loop.
#define F32DOT(loop, done) \
	ZEROY4(Y0, Y1, Y2, Y3) \
	TESTQ CX, CX \
	JZ done \
loop: \
	F32STEP \
	ADDQ $128, SI \
	ADDQ $128, DI \
	DECQ CX \
	JNZ loop \
done: \
	REDUCE4

// func dotF32FMA(n32 int, w, x *float32) float32
TEXT ·dotF32FMA(SB), NOSPLIT, $0-28
	MOVQ n32+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	F32DOT(f32_loop, f32_done)
	VMOVSS X3, ret+24(FP)
	VZEROUPPER
	RET

// func dotF32FMAxN(n32 int, w, x *float32, xstride, ntok int, dst *float32, dstride int)
//
// dotF32FMA of one row w against ntok rows of activations (x, x plus xstride bytes,
// …), each summed exactly as dotF32FMA sums it (four accumulators, REDUCE4 and its
// HSUM), stored at dst, dst plus dstride bytes, …: tokens two at a time, the pair's
// second into Y8–Y11 from the same weight loads (one read of the row for both, then
// moved to Y0–Y3 for REDUCE4), and a last odd token alone.
TEXT ·dotF32FMAxN(SB), NOSPLIT, $0-56
	MOVQ x+16(FP), R10
	MOVQ xstride+24(FP), DX
	MOVQ ntok+32(FP), R14
	MOVQ dst+40(FP), AX
	MOVQ dstride+48(FP), R15
f32xn_pair:
	CMPQ R14, $2
	JLT f32xn_single
	MOVQ n32+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ R10, DI
	LEAQ (DI)(DX*1), R8
	ZEROY4(Y0, Y1, Y2, Y3)
	ZEROY4(Y8, Y9, Y10, Y11)
	TESTQ CX, CX
	JZ f32xn_pair_done
f32xn_pair_loop:
	F32STEP
	VFMADD231PS (R8), Y4, Y8
	VFMADD231PS 32(R8), Y5, Y9
	VFMADD231PS 64(R8), Y6, Y10
	VFMADD231PS 96(R8), Y7, Y11
	ADDQ $128, SI
	ADDQ $128, DI
	ADDQ $128, R8
	DECQ CX
	JNZ f32xn_pair_loop
f32xn_pair_done:
	REDUCE4
	VMOVSS X3, (AX)
	VMOVAPS Y8, Y0
	VMOVAPS Y9, Y1
	VMOVAPS Y10, Y2
	VMOVAPS Y11, Y3
	REDUCE4
	VMOVSS X3, (AX)(R15*1)
	LEAQ (R10)(DX*2), R10
	LEAQ (AX)(R15*2), AX
	SUBQ $2, R14
	JMP f32xn_pair
f32xn_single:
	TESTQ R14, R14
	JZ f32xn_done
	MOVQ n32+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ R10, DI
	F32DOT(f32xn_single_loop, f32xn_single_done)
	VMOVSS X3, (AX)
f32xn_done:
	VZEROUPPER
	RET

// func dotF32FMArows(n32 int, w *float32, wstride, nrows int, x, out *float32)
//
// dotF32FMA of nrows rows (w, w plus wstride bytes, …) against one row of activations
// x, each summed exactly as dotF32FMA sums it, stored at out[0…nrows): one call for a
// band of rows where a call per row cost more than the products of a short row.
TEXT ·dotF32FMArows(SB), NOSPLIT, $0-48
	MOVQ w+8(FP), R10
	MOVQ wstride+16(FP), DX
	MOVQ nrows+24(FP), R14
	MOVQ out+40(FP), AX
	TESTQ R14, R14
	JZ f32r_done
f32r_row:
	MOVQ n32+0(FP), CX
	MOVQ R10, SI
	MOVQ x+32(FP), DI
	F32DOT(f32r_loop, f32r_sum)
	VMOVSS X3, (AX)
	ADDQ $4, AX
	ADDQ DX, R10
	DECQ R14
	JNZ f32r_row
f32r_done:
	VZEROUPPER
	RET

// func dotF16FMA(n32 int, w, x *uint16) float32
TEXT ·dotF16FMA(SB), NOSPLIT, $0-28
	MOVQ n32+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	TESTQ CX, CX
	JZ f16_done
f16_loop:
	VCVTPH2PS (SI), Y4
	VCVTPH2PS 16(SI), Y5
	VCVTPH2PS 32(SI), Y6
	VCVTPH2PS 48(SI), Y7
	VCVTPH2PS (DI), Y8
	VCVTPH2PS 16(DI), Y9
	VCVTPH2PS 32(DI), Y10
	VCVTPH2PS 48(DI), Y11
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	VFMADD231PS Y10, Y6, Y2
	VFMADD231PS Y11, Y7, Y3
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ f16_loop
f16_done:
	REDUCE4
	VMOVSS X3, ret+24(FP)
	VZEROUPPER
	RET

// Q4KSUB multiplies 32 low (LO) or high nibbles in Y0/Y1 with activations at off(DI),
// scales them by the word pair at soff(SP) and adds them to Y10.
#define Q4KSUB(reg, off, soff) \
	VPMADDUBSW off(DI), reg, Y2 \
	VPBROADCASTD soff(SP), Y4 \
	VPMADDWD Y4, Y2, Y2 \
	VPADDD Y2, Y10, Y10

#define Q4KCHUNK(j) \
	VMOVDQU (16+32*j)(SI), Y0 \
	VPSRLW $4, Y0, Y1 \
	VPAND Y7, Y0, Y0 \
	VPAND Y7, Y1, Y1 \
	Q4KSUB(Y0, 4+64*j, 8*j) \
	Q4KSUB(Y1, 36+64*j, 8*j+4)

// func dotQ4_KAVX2(nb int, w, x *byte) float32
TEXT ·dotQ4_KAVX2(SB), NOSPLIT, $32-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	CONSTS
	VXORPS Y3, Y3, Y3
	VXORPS X12, X12, X12
	TESTQ CX, CX
	JZ q4k_done
q4k_loop:
	// ggml's scale unpacking: AX = scales 0..3, R11 = scales 4..7, R10 = mins 0..3,
	// R8 = mins 4..7.
	MOVL 4(SI), AX
	MOVL 8(SI), BX
	MOVL 12(SI), DX
	MOVL DX, R8
	SHRL $4, R8
	ANDL $0x0f0f0f0f, R8
	MOVL BX, R9
	SHRL $6, R9
	ANDL $0x03030303, R9
	SHLL $4, R9
	ORL R9, R8
	MOVL BX, R10
	ANDL $0x3f3f3f3f, R10
	MOVL DX, R11
	ANDL $0x0f0f0f0f, R11
	MOVL AX, R9
	SHRL $6, R9
	ANDL $0x03030303, R9
	SHLL $4, R9
	ORL R9, R11
	ANDL $0x3f3f3f3f, AX
	SHLQ $32, R11
	ORQ R11, AX
	VMOVQ AX, X9
	VPMOVZXBW X9, X9
	VPUNPCKLWD X9, X9, X10
	VMOVDQU X10, 0(SP)
	VPUNPCKHWD X9, X9, X10
	VMOVDQU X10, 16(SP)
	SHLQ $32, R8
	ORQ R8, R10
	VMOVQ R10, X11
	VPMOVZXBW X11, X11
	VMOVDQU 260(DI), X13
	VMOVDQU 276(DI), X14
	VPHADDW X14, X13, X13
	VPMADDWD X13, X11, X11
	VCVTDQ2PS X11, X11
	VPBROADCASTW 2(SI), X15
	VCVTPH2PS X15, X15
	VBROADCASTSS (DI), X14
	VMULPS X14, X15, X15
	VFMADD231PS X15, X11, X12
	VPXOR Y10, Y10, Y10
	Q4KCHUNK(0)
	Q4KCHUNK(1)
	Q4KCHUNK(2)
	Q4KCHUNK(3)
	VPBROADCASTW (SI), X4
	VCVTPH2PS X4, Y4
	VBROADCASTSS (DI), Y5
	VMULPS Y5, Y4, Y4
	VCVTDQ2PS Y10, Y10
	VFMADD231PS Y4, Y10, Y3
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ q4k_loop
q4k_done:
	HSUM
	VHADDPS X12, X12, X12
	VHADDPS X12, X12, X12
	VSUBSS X12, X3, X3
	VMOVSS X3, ret+24(FP)
	VZEROUPPER
	RET

// Q6KPAIR multiplies the 6-bit quants in Y11 with activations at off(DI), scales
// the low half by the word pair at 4*g(SP) and the high half by 4*g+4(SP), adds to Y10.
#define Q6KPAIR(off, g) \
	VPMADDUBSW off(DI), Y11, Y11 \
	VPBROADCASTD (4*(g))(SP), Y13 \
	VPBROADCASTD (4*(g)+4)(SP), X14 \
	VINSERTI128 $1, X14, Y13, Y13 \
	VPMADDWD Y13, Y11, Y11 \
	VPADDD Y11, Y10, Y10

#define Q6KHALF(n) \
	VMOVDQU (64*n)(SI), Y0 \
	VMOVDQU (64*n+32)(SI), Y1 \
	VMOVDQU (128+32*n)(SI), Y2 \
	VPAND Y7, Y0, Y11 \
	VPAND Y8, Y2, Y12 \
	VPSLLW $4, Y12, Y12 \
	VPOR Y12, Y11, Y11 \
	Q6KPAIR(4+128*n, 8*n) \
	VPAND Y7, Y1, Y11 \
	VPSRLW $2, Y2, Y12 \
	VPAND Y8, Y12, Y12 \
	VPSLLW $4, Y12, Y12 \
	VPOR Y12, Y11, Y11 \
	Q6KPAIR(36+128*n, 8*n+2) \
	VPSRLW $4, Y0, Y11 \
	VPAND Y7, Y11, Y11 \
	VPSRLW $4, Y2, Y12 \
	VPAND Y8, Y12, Y12 \
	VPSLLW $4, Y12, Y12 \
	VPOR Y12, Y11, Y11 \
	Q6KPAIR(68+128*n, 8*n+4) \
	VPSRLW $4, Y1, Y11 \
	VPAND Y7, Y11, Y11 \
	VPSRLW $6, Y2, Y12 \
	VPAND Y8, Y12, Y12 \
	VPSLLW $4, Y12, Y12 \
	VPOR Y12, Y11, Y11 \
	Q6KPAIR(100+128*n, 8*n+6)

// func dotQ6_KAVX2(nb int, w, x *byte) float32
TEXT ·dotQ6_KAVX2(SB), NOSPLIT, $64-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	CONSTS
	MOVL $0x03030303, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
	VXORPS Y3, Y3, Y3
	TESTQ CX, CX
	JZ q6k_done
q6k_loop:
	VPMOVSXBW 192(SI), X9
	VPUNPCKLWD X9, X9, X10
	VMOVDQU X10, 0(SP)
	VPUNPCKHWD X9, X9, X10
	VMOVDQU X10, 16(SP)
	VPMOVSXBW 200(SI), X9
	VPUNPCKLWD X9, X9, X10
	VMOVDQU X10, 32(SP)
	VPUNPCKHWD X9, X9, X10
	VMOVDQU X10, 48(SP)
	// Σ (q-32)·y·s = Σ q·y·s - 32·Σ s·bsum.
	VPMOVSXBW 192(SI), Y9
	VPMADDWD 260(DI), Y9, Y9
	VPSLLD $5, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPSUBD Y9, Y10, Y10
	Q6KHALF(0)
	Q6KHALF(1)
	VPBROADCASTW 208(SI), X4
	VCVTPH2PS X4, Y4
	VBROADCASTSS (DI), Y5
	VMULPS Y5, Y4, Y4
	VCVTDQ2PS Y10, Y10
	VFMADD231PS Y4, Y10, Y3
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ q6k_loop
q6k_done:
	HSUM
	VMOVSS X3, ret+24(FP)
	VZEROUPPER
	RET

// func dotF32F16(n8 int, a *float32, b *uint16) float32
TEXT ·dotF32F16(SB), NOSPLIT, $0-28
	MOVQ n8+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	VXORPS Y3, Y3, Y3
	VXORPS Y9, Y9, Y9
	CMPQ CX, $2
	JLT df16_tail
df16_loop:
	VCVTPH2PS (DI), Y0
	VCVTPH2PS 16(DI), Y1
	VFMADD231PS (SI), Y0, Y3
	VFMADD231PS 32(SI), Y1, Y9
	ADDQ $64, SI
	ADDQ $32, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE df16_loop
df16_tail:
	TESTQ CX, CX
	JZ df16_done
	VCVTPH2PS (DI), Y0
	VFMADD231PS (SI), Y0, Y3
df16_done:
	VADDPS Y9, Y3, Y3
	HSUM
	VMOVSS X3, ret+24(FP)
	VZEROUPPER
	RET

// func dotF32x8(n8 int, a, b *float32) float32
TEXT ·dotF32x8(SB), NOSPLIT, $0-28
	MOVQ n8+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	VXORPS Y3, Y3, Y3
	VXORPS Y9, Y9, Y9
	CMPQ CX, $2
	JLT d32_tail
d32_loop:
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VFMADD231PS (SI), Y0, Y3
	VFMADD231PS 32(SI), Y1, Y9
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE d32_loop
d32_tail:
	TESTQ CX, CX
	JZ d32_done
	VMOVUPS (DI), Y0
	VFMADD231PS (SI), Y0, Y3
d32_done:
	VADDPS Y9, Y3, Y3
	HSUM
	VMOVSS X3, ret+24(FP)
	VZEROUPPER
	RET

// func axpyF32x8(n8 int, w float32, v, out *float32)
TEXT ·axpyF32x8(SB), NOSPLIT, $0-32
	MOVQ n8+0(FP), CX
	VBROADCASTSS w+8(FP), Y2
	MOVQ v+16(FP), SI
	MOVQ out+24(FP), DI
	TESTQ CX, CX
	JZ ax32_done
ax32_loop:
	VMOVUPS (DI), Y0
	VFMADD231PS (SI), Y2, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ ax32_loop
ax32_done:
	VZEROUPPER
	RET

// func axpyF16x8(n8 int, w float32, v *uint16, out *float32)
TEXT ·axpyF16x8(SB), NOSPLIT, $0-32
	MOVQ n8+0(FP), CX
	VBROADCASTSS w+8(FP), Y2
	MOVQ v+16(FP), SI
	MOVQ out+24(FP), DI
	TESTQ CX, CX
	JZ ax16_done
ax16_loop:
	VCVTPH2PS (SI), Y1
	VMOVUPS (DI), Y0
	VFMADD231PS Y1, Y2, Y0
	VMOVUPS Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNZ ax16_loop
ax16_done:
	VZEROUPPER
	RET

// Lookup-table dot products (IQ4_NL, MXFP4 with Q8_0; IQ4_XS with Q8_K): Y10 holds the
// type's 16 levels (signed bytes) in both 128-bit lanes; each block's 32 nibbles are
// looked up with VPSHUFB and multiplied as Q4_0's signed quants are.

// LUTW loads the 16 nibble bytes at wo(SI) as the 32 levels of their nibbles (low
// nibbles in the low lane) into W (X: its low half).
#define LUTW(wo, W, X, T) \
	VMOVDQU wo(SI), X \
	VPSRLW $4, X, T \
	VINSERTI128 $1, T, W, W \
	VPAND Y7, W, W \
	VPSHUFB W, Y10, W

// LUTDOT accumulates the block's levels at wo(SI) times the 32 activations at xo(DI),
// scaled by S, into A.
#define LUTDOT(wo, xo, S, A) \
	LUTW(wo, Y0, X0, X1) \
	VMOVDQU xo(DI), Y1 \
	SIGNED(Y0, Y1) \
	DOT2(Y0, Y1, Y2) \
	ACC(Y2, S, A)

// LUTTAB loads the 16-byte table tab into both lanes of Y10.
#define LUTTAB(tab) \
	LEAQ tab(SB), AX \
	VBROADCASTI128 (AX), Y10

// MXSCALE leaves d_x (fp16 at xo(DI)) times the E8M0 factor of the scale byte at
// wo(SI) (e8m0Halves, at R11) in all lanes of S.
#define MXSCALE(wo, xo, S, T) \
	MOVBLZX wo(SI), R9 \
	VBROADCASTSS (R11)(R9*4), S \
	VPBROADCASTW xo(DI), X5 \
	VCVTPH2PS X5, T \
	VMULPS T, S, S

// func dotIQ4NLAVX2(nb int, w, x *byte) float32
//
// IQ4_NL with Q8_0 activations; blocks two at a time, even ones summed into Y3 and
// odd ones into Y9.
TEXT ·dotIQ4NLAVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	CONSTS
	LUTTAB(·lutSignedIQ4NL)
	VXORPS Y3, Y3, Y3
	VXORPS Y9, Y9, Y9
	CMPQ CX, $2
	JLT iq4nla_tail
iq4nla_loop:
	SCALE(0, 0, Y4, Y5)
	LUTDOT(2, 2, Y4, Y3)
	SCALE(18, 34, Y4, Y5)
	LUTDOT(20, 36, Y4, Y9)
	ADDQ $36, SI
	ADDQ $68, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE iq4nla_loop
iq4nla_tail:
	TESTQ CX, CX
	JZ iq4nla_done
	SCALE(0, 0, Y4, Y5)
	LUTDOT(2, 2, Y4, Y3)
iq4nla_done:
	VADDPS Y9, Y3, Y3
	HSUM
	VMOVSS X3, ret+24(FP)
	VZEROUPPER
	RET

// func dotMXFP4AVX2(nb int, w, x *byte) float32
//
// MXFP4 with Q8_0 activations; blocks two at a time, even ones summed into Y3 and odd
// ones into Y9.
TEXT ·dotMXFP4AVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	CONSTS
	LUTTAB(·lutSignedMXFP4)
	LEAQ ·e8m0Halves(SB), R11
	VXORPS Y3, Y3, Y3
	VXORPS Y9, Y9, Y9
	CMPQ CX, $2
	JLT mxfp4a_tail
mxfp4a_loop:
	MXSCALE(0, 0, Y4, Y5)
	LUTDOT(1, 2, Y4, Y3)
	MXSCALE(17, 34, Y4, Y5)
	LUTDOT(18, 36, Y4, Y9)
	ADDQ $34, SI
	ADDQ $68, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE mxfp4a_loop
mxfp4a_tail:
	TESTQ CX, CX
	JZ mxfp4a_done
	MXSCALE(0, 0, Y4, Y5)
	LUTDOT(1, 2, Y4, Y3)
mxfp4a_done:
	VADDPS Y9, Y3, Y3
	HSUM
	VMOVSS X3, ret+24(FP)
	VZEROUPPER
	RET

// XSSUB accumulates IQ4_XS sub-block ib (quants at 8+16·ib(SI), activations at
// 4+32·ib(DI)) into A: its scale ls−32 (low bits: byte lb(SI) shifted by ls_sh;
// high bits: R8 (scales_h) shifted by hs_sh) times d_w·d_x (Y12).
#define XSSUB(ib, lb, ls_sh, hs_sh, A) \
	MOVBLZX lb(SI), R9 \
	SHRL $ls_sh, R9 \
	ANDL $15, R9 \
	MOVL R8, R10 \
	SHRL $hs_sh, R10 \
	ANDL $3, R10 \
	SHLL $4, R10 \
	ORL R10, R9 \
	SUBL $32, R9 \
	VMOVD R9, X4 \
	VPBROADCASTD X4, Y4 \
	VCVTDQ2PS Y4, Y4 \
	VMULPS Y12, Y4, Y4 \
	LUTDOT(8+16*ib, 4+32*ib, Y4, A)

// func dotIQ4XSAVX2(nb int, w, x *byte) float32
//
// IQ4_XS with Q8_K activations: per 256-element super-block (136 bytes; Q8_K's 292)
// eight sub-blocks, even ones summed into Y3 and odd ones into Y9.
TEXT ·dotIQ4XSAVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DI
	CONSTS
	LUTTAB(·lutSignedIQ4NL)
	VXORPS Y3, Y3, Y3
	VXORPS Y9, Y9, Y9
	TESTQ CX, CX
	JZ iq4xsa_done
iq4xsa_loop:
	VPBROADCASTW (SI), X12
	VCVTPH2PS X12, Y12
	VBROADCASTSS (DI), Y13
	VMULPS Y13, Y12, Y12
	MOVWLZX 2(SI), R8
	XSSUB(0, 4, 0, 0, Y3)
	XSSUB(1, 4, 4, 2, Y9)
	XSSUB(2, 5, 0, 4, Y3)
	XSSUB(3, 5, 4, 6, Y9)
	XSSUB(4, 6, 0, 8, Y3)
	XSSUB(5, 6, 4, 10, Y9)
	XSSUB(6, 7, 0, 12, Y3)
	XSSUB(7, 7, 4, 14, Y9)
	ADDQ $136, SI
	ADDQ $292, DI
	DECQ CX
	JNZ iq4xsa_loop
iq4xsa_done:
	VADDPS Y9, Y3, Y3
	HSUM
	VMOVSS X3, ret+24(FP)
	VZEROUPPER
	RET
