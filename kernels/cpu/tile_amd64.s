//go:build amd64 && !purego

#include "textflag.h"

// Tiled matrix kernels (see tile.go for the layouts). Every kernel computes, per token t
// and row r of a 16-row tile, one float32 accumulator in lane r:
//   acc = fma(float(start[t] + Σ q·y), ws·d[t], acc), then acc = fma(wm, m[t], acc)
// block after block. The four-token and one-token kernels run the same float
// operations per output, so a product does not depend on how many tokens share a call.
//
// Shared registers: SI tile block, DI activation block, BX flags (bit 0: fp16 scales,
// bit 1: mins), R8 quant bytes per block, Z31 the 0x0F byte mask, Z4–Z7 the
// accumulators (token 0–3).

// ZERO4 zeroes the accumulators Z4–Z7.
#define ZERO4 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7

// ARGS4 loads a four-token kernel's arguments (nu, tile, act, out into CX, SI, DI, AX)
// and zeroes the accumulators.
#define ARGS4 \
	MOVQ nu+0(FP), CX \
	MOVQ tile+8(FP), SI \
	MOVQ act+16(FP), DI \
	MOVQ out+24(FP), AX \
	ZERO4

// ARGS1 loads a one-token kernel's arguments, zeroes its accumulator and points R10
// at token tok's quants in the first activation block (bs bytes each) and R12 at its
// tail fields (after 4·bs bytes).
#define ARGS1(bs) \
	MOVQ nu+0(FP), CX \
	MOVQ tile+8(FP), SI \
	MOVQ act+16(FP), DI \
	MOVQ tok+24(FP), R11 \
	MOVQ out+32(FP), AX \
	VPXORD Z4, Z4, Z4 \
	IMUL3Q $bs, R11, R10 \
	ADDQ DI, R10 \
	LEAQ (4*bs)(DI)(R11*4), R12

// ARGS1M loads a four-tile one-token (x1m) kernel's arguments: CX units, the four tiles
// at SI, R8, R9 and BX (tile + k·stride), R10 and R12 at token tok's quants and tail
// fields in the first activation block (bs bytes each), AX out; it zeroes the four
// accumulators Z4–Z7. It uses R9, so it comes after MASKS.
#define ARGS1M(bs) \
	MOVQ nu+0(FP), CX \
	MOVQ tile+8(FP), SI \
	MOVQ stride+16(FP), DX \
	MOVQ act+24(FP), DI \
	MOVQ tok+32(FP), R11 \
	MOVQ out+40(FP), AX \
	ZERO4 \
	IMUL3Q $bs, R11, R10 \
	ADDQ DI, R10 \
	LEAQ (4*bs)(DI)(R11*4), R12 \
	LEAQ (SI)(DX*1), R8 \
	LEAQ (R8)(DX*1), R9 \
	LEAQ (R9)(DX*1), BX

// NEXT1 steps the one-token pointers to the next activation block.
#define NEXT1 \
	ADDQ $176, R10 \
	ADDQ $176, R12

// STEP4T steps the four tiles' pointers (SI, R8, R9, BX) by n bytes.
#define STEP4T(n) \
	ADDQ n, SI \
	ADDQ n, R8 \
	ADDQ n, R9 \
	ADDQ n, BX

// STARTT sets the four tiles' int sums I0–I3 to the token's starting sum (R12), for
// the four-tile one-token kernels.
#define STARTT(I0, I1, I2, I3) \
	VPBROADCASTD 16(R12), I0 \
	VMOVDQA32 I0, I1 \
	VMOVDQA32 I0, I2 \
	VMOVDQA32 I0, I3

// FMAT scales a tile's int sum I by its block's fp16 row scales at memory operand sc
// times the token's scale at memory operand t into ACC: FMA1's operations.
#define FMAT(sc, I, ACC, t) \
	VCVTPH2PS sc, Z10 \
	VCVTDQ2PS I, I \
	VMULPS.BCST t, Z10, Z11 \
	VFMADD231PS Z11, I, ACC

// FMAT4T is FMAT for the four tiles (SI, R8, R9, BX; scales at offset sc of each) with
// int sums I0–I3 into the accumulators Z4–Z7.
#define FMAT4T(sc, I0, I1, I2, I3, t) \
	FMAT(sc(SI), I0, Z4, t) \
	FMAT(sc(R8), I1, Z5, t) \
	FMAT(sc(R9), I2, Z6, t) \
	FMAT(sc(BX), I3, Z7, t)

// NIB4 loads the 64-byte nibble words at memory operands m0…m3 as their low (Z16, Z18,
// Z20, Z22) and high (Z17, Z19, Z21, Z23) nibbles.
#define NIB4(m0, m1, m2, m3) \
	VMOVDQU64 m0, Z16 \
	VMOVDQU64 m1, Z18 \
	VMOVDQU64 m2, Z20 \
	VMOVDQU64 m3, Z22 \
	VPSRLW $4, Z16, Z17 \
	VPSRLW $4, Z18, Z19 \
	VPSRLW $4, Z20, Z21 \
	VPSRLW $4, Z22, Z23 \
	VPANDQ Z31, Z16, Z16 \
	VPANDQ Z31, Z17, Z17 \
	VPANDQ Z31, Z18, Z18 \
	VPANDQ Z31, Z19, Z19 \
	VPANDQ Z31, Z20, Z20 \
	VPANDQ Z31, Z21, Z21 \
	VPANDQ Z31, Z22, Z22 \
	VPANDQ Z31, Z23, Z23

// UNIT4T runs one unit of two blocks of the four tiles against one token, reading each
// tile forward: SUMS (Q40SUMS4T, Q80SUMS4T) of the first block (quants at 0) into Z0–Z3
// and of the second (at q1) into Z8, Z9, Z12, Z13, then each block's float operations
// in order (scales at sc0 and sc1; the first block's token scale 176 bytes back), and
// steps the tiles by the unit's n bytes.
#define UNIT4T(SUMS, q1, sc0, sc1, n) \
	SUMS(0, Z0, Z1, Z2, Z3) \
	NEXT1 \
	SUMS(q1, Z8, Z9, Z12, Z13) \
	FMAT4T(sc0, Z0, Z1, Z2, Z3, -176(R12)) \
	FMAT4T(sc1, Z8, Z9, Z12, Z13, (R12)) \
	NEXT1 \
	STEP4T(n)

// Q4C4T multiplies nibble dword c of a 32-element block of the four tiles (at memory
// operands m0…m3) with one token's activations (R10) into their int sums I0–I3: low
// nibbles with elements 4c…, high with 16+4c….
#define Q4C4T(m0, m1, m2, m3, c, I0, I1, I2, I3) C4TX(NOLUT8, m0, m1, m2, m3, c, I0, I1, I2, I3)

// C4TX is Q4C4T's body with LK (NOLUT8, or LUT8 for LUTC4T) run on the nibbles.
#define C4TX(LK, m0, m1, m2, m3, c, I0, I1, I2, I3) \
	VPBROADCASTD (4*c)(R10), Z24 \
	VPBROADCASTD (16+4*c)(R10), Z25 \
	NIB4(m0, m1, m2, m3) \
	LK \
	DOT4T(I0, I1, I2, I3)
#define NOLUT8

// DOT4T multiplies NIB4's eight registers with the token's broadcast activations (low
// nibbles Z24, high Z25) into the four tiles' int sums I0–I3.
#define DOT4T(I0, I1, I2, I3) \
	VPDPBUSD Z24, Z16, I0 \
	VPDPBUSD Z25, Z17, I0 \
	VPDPBUSD Z24, Z18, I1 \
	VPDPBUSD Z25, Z19, I1 \
	VPDPBUSD Z24, Z20, I2 \
	VPDPBUSD Z25, Z21, I2 \
	VPDPBUSD Z24, Z22, I3 \
	VPDPBUSD Z25, Z23, I3

// LUT8 looks the nibbles in NIB4's (or NIB8's) eight registers up in Z29.
#define LUT8 \
	VPSHUFB Z16, Z29, Z16 \
	VPSHUFB Z17, Z29, Z17 \
	VPSHUFB Z18, Z29, Z18 \
	VPSHUFB Z19, Z29, Z19 \
	VPSHUFB Z20, Z29, Z20 \
	VPSHUFB Z21, Z29, Z21 \
	VPSHUFB Z22, Z29, Z22 \
	VPSHUFB Z23, Z29, Z23

// LUTC4T is Q4C4T with the nibbles looked up in Z29 (IQ4_XS).
#define LUTC4T(m0, m1, m2, m3, c, I0, I1, I2, I3) C4TX(LUT8, m0, m1, m2, m3, c, I0, I1, I2, I3)

// STARTS4 sets the int sums Z0–Z3 to the four tokens' starting sums (tail at R12).
#define STARTS4 \
	VPBROADCASTD 16(R12), Z0 \
	VPBROADCASTD 20(R12), Z1 \
	VPBROADCASTD 24(R12), Z2 \
	VPBROADCASTD 28(R12), Z3

// STORE4 stores the four tokens' accumulators and returns.
#define STORE4 \
	VMOVUPS Z4, (AX) \
	VMOVUPS Z5, 64(AX) \
	VMOVUPS Z6, 128(AX) \
	VMOVUPS Z7, 192(AX) \
	VZEROUPPER \
	RET

// STORE1 stores the one token's accumulator and returns.
#define STORE1 \
	VMOVUPS Z4, (AX) \
	VZEROUPPER \
	RET

// MASKS sets Z31 to 0x0F bytes, Z30 to 0x30 bytes and Z27 to the float sign bit.
#define MASKS \
	MOVL $0x0F0F0F0F, R9 \
	VPBROADCASTD R9, Z31 \
	MOVL $0x30303030, R9 \
	VPBROADCASTD R9, Z30 \
	MOVL $0x80000000, R9 \
	VPBROADCASTD R9, Z27

// FMA4 scales the int sums Z0–Z3 of four tokens by the block's row scales Z10 times
// each token's scale (tail at R12) into the accumulators Z4–Z7.
#define FMA4 \
	VCVTDQ2PS Z0, Z0 \
	VCVTDQ2PS Z1, Z1 \
	VCVTDQ2PS Z2, Z2 \
	VCVTDQ2PS Z3, Z3 \
	VMULPS.BCST (R12), Z10, Z11 \
	VFMADD231PS Z11, Z0, Z4 \
	VMULPS.BCST 4(R12), Z10, Z12 \
	VFMADD231PS Z12, Z1, Z5 \
	VMULPS.BCST 8(R12), Z10, Z13 \
	VFMADD231PS Z13, Z2, Z6 \
	VMULPS.BCST 12(R12), Z10, Z14 \
	VFMADD231PS Z14, Z3, Z7

// MIN4 adds the row min factors Z15 times each token's min sum (tail at R12).
#define MIN4 \
	VFMADD231PS.BCST 32(R12), Z15, Z4 \
	VFMADD231PS.BCST 36(R12), Z15, Z5 \
	VFMADD231PS.BCST 40(R12), Z15, Z6 \
	VFMADD231PS.BCST 44(R12), Z15, Z7

// FMA1 and MIN1 are FMA4 and MIN4 for one token (int sum Z0, accumulator Z4).
#define FMA1 \
	VCVTDQ2PS Z0, Z0 \
	VMULPS.BCST (R12), Z10, Z11 \
	VFMADD231PS Z11, Z0, Z4

#define MIN1 \
	VFMADD231PS.BCST 32(R12), Z15, Z4

// PFD is how far ahead of the kernel's reads the weights are prefetched: about the
// bytes a core streams in one DRAM latency (the hardware prefetcher alone leaves an
// Intel Xeon core well short of memory bandwidth; measured there at 1024). On AMD Zen 4
// the one-token kernels run without software prefetch (PFOFF below); 2048 had helped
// them there (Q4_K_M tg32 32.2 → 37.1 t/s) but none at all helps more. Zen 5's
// four-tile kernels prefetch again (PF4T below).
#define PFD 1024

// PFON(m) prefetches the line at memory operand m into L1; PFOFF(m) is nothing. The
// one-token (x1) kernels are built both ways (the …np kernels without): on AMD EPYC
// (Zen 4) the hardware prefetcher alone streams the tiles faster (llama-1b tg32 -t 2,
// medians of six alternated runs: Q4_0 39.3 → 44.6 t/s, llama.cpp 45.2; Q4_K_M 41.3 →
// 43.7, medians of four; Q8_0 unchanged); Intel keeps the software prefetch.
#define PFON(m) PREFETCHT0 m
#define PFOFF(m)

// PF4T(o) prefetches the line at offset o of each of an x1m kernel's four tiles (SI,
// R8, R9, BX), PF4TX(o) the line at o past R11 in each; PFNONE is no prefetch. The
// four-tile kernels that read from quarters with software prefetch (…x1m, AMD Zen 5:
// see quarterPrefetch) place them 2048 bytes ahead of their reads.
#define PF4T(o) \
	PREFETCHT0 (o)(SI) \
	PREFETCHT0 (o)(R8) \
	PREFETCHT0 (o)(R9) \
	PREFETCHT0 (o)(BX)

#define PF4TX(o) \
	PREFETCHT0 (o)(SI)(R11*1) \
	PREFETCHT0 (o)(R8)(R11*1) \
	PREFETCHT0 (o)(R9)(R11*1) \
	PREFETCHT0 (o)(BX)(R11*1)

// PF4T5(o) and PF4T3(o) are PF4T for the five and three lines from offset o; PF4TX3
// is PF4TX for three lines.
#define PF4T5(o) \
	PF4T(o) \
	PF4T(o+64) \
	PF4T(o+128) \
	PF4T(o+192) \
	PF4T(o+256)

#define PF4T3(o) \
	PF4T(o) \
	PF4T(o+64) \
	PF4T(o+128)

#define PF4TX3(o) \
	PF4TX(o) \
	PF4TX(o+64) \
	PF4TX(o+128)

#define PFNONE

// PREF6 prefetches six lines from PFD ahead.
#define PREF6(PF) \
	PF((PFD)(SI)) \
	PF((PFD+64)(SI)) \
	PF((PFD+128)(SI)) \
	PF((PFD+192)(SI)) \
	PF((PFD+256)(SI)) \
	PF((PFD+320)(SI))

// Q4C4 multiplies nibble dword c of the block at o(SI) (low nibbles: elements 4c…4c+3, high: 16+4c…) of 16
// rows with four tokens' activations (32 bytes each at DI).
#define Q4C4(o, c, A, B) \
	NIB2(o, c, A, B) \
	DOTC4(c, A, B)

// NIB2 loads nibble dword c of the block at o(SI) as its low (A) and high (B) nibbles.
#define NIB2(o, c, A, B) \
	VMOVDQU64 (o+64*c)(SI), A \
	VPSRLW $4, A, B \
	VPANDQ Z31, A, A \
	VPANDQ Z31, B, B

// DOTC4 multiplies NIB2's A and B with four tokens' activations (32 bytes each at DI)
// into Z0–Z3.
#define DOTC4(c, A, B) \
	VPDPBUSD.BCST (4*c)(DI), A, Z0 \
	VPDPBUSD.BCST (32+4*c)(DI), A, Z1 \
	VPDPBUSD.BCST (64+4*c)(DI), A, Z2 \
	VPDPBUSD.BCST (96+4*c)(DI), A, Z3 \
	VPDPBUSD.BCST (16+4*c)(DI), B, Z0 \
	VPDPBUSD.BCST (48+4*c)(DI), B, Z1 \
	VPDPBUSD.BCST (80+4*c)(DI), B, Z2 \
	VPDPBUSD.BCST (112+4*c)(DI), B, Z3

// Q4C1 is Q4C4 for one token (activations at R10; low halves into Z0, high into Z1).
#define Q4C1(o, c, A, B) \
	Q4C1M((o+64*c)(SI), c, A, B)

// NIBC1 loads the nibble word at memory operand m as its low (A) and high (B) nibbles,
// lets HI(c, A, B) add their high bits (NOHI for 4-bit types), and multiplies them with
// one token's activations (R10) of word c: low halves into Z0, high into Z1.
#define NIBC1(m, c, A, B, HI) \
	VMOVDQU64 m, A \
	VPSRLW $4, A, B \
	VPANDQ Z31, A, A \
	VPANDQ Z31, B, B \
	HI(c, A, B) \
	VPDPBUSD.BCST (4*c)(R10), A, Z0 \
	VPDPBUSD.BCST (16+4*c)(R10), B, Z1

#define NOHI(c, A, B)

// Q4C1M is Q4C1 with the nibble word at memory operand m.
#define Q4C1M(m, c, A, B) NIBC1(m, c, A, B, NOHI)

// Q40BLK4 runs one Q4_0 block (nibbles at q(SI), scales at sc(SI)) against four
// tokens and steps DI to the next activation block.
#define Q40BLK4(q, sc) \
	LEAQ 128(DI), R12 \
	STARTS4 \
	Q4C4(q, 0, Z16, Z17) \
	Q4C4(q, 1, Z18, Z19) \
	Q4C4(q, 2, Z20, Z21) \
	Q4C4(q, 3, Z22, Z23) \
	VCVTPH2PS sc(SI), Z10 \
	FMA4 \
	ADDQ $176, DI

// Q40BLK1 is Q40BLK4 for one token (R10, R12 step instead of DI).
#define Q40BLK1(q, sc, PF) \
	Q40T1(SI, q, sc, Z4, PF) \
	ADDQ $176, R10 \
	ADDQ $176, R12

// NIB8 loads the 32-element nibble block at q(P) (prefetching PFD ahead) as eight
// registers of low (Z16, Z18, Z20, Z22) and high (Z17, Z19, Z21, Z23) nibbles, and
// starts the one-token int sums: Z0 at the token's start (R12), Z1 at zero.
#define NIB8(P, q, PF) \
	PF((PFD+q)(P)) \
	PF((PFD+q+64)(P)) \
	PF((PFD+q+128)(P)) \
	PF((PFD+q+192)(P)) \
	VPBROADCASTD 16(R12), Z0 \
	VPXORD Z1, Z1, Z1 \
	NIB4(q(P), (q+64)(P), (q+128)(P), (q+192)(P))

// DOT8T1 multiplies NIB8's eight registers with one token's 32 activations (R10) into
// the int sum Z0.
#define DOT8T1 \
	VPDPBUSD.BCST (R10), Z16, Z0 \
	VPDPBUSD.BCST 16(R10), Z17, Z1 \
	VPDPBUSD.BCST 4(R10), Z18, Z0 \
	VPDPBUSD.BCST 20(R10), Z19, Z1 \
	VPDPBUSD.BCST 8(R10), Z20, Z0 \
	VPDPBUSD.BCST 24(R10), Z21, Z1 \
	VPDPBUSD.BCST 12(R10), Z22, Z0 \
	VPDPBUSD.BCST 28(R10), Z23, Z1 \
	VPADDD Z1, Z0, Z0

// Q40T1 runs one Q4_0 block of the tile at P (nibbles at q(P), scales at sc(P)) against
// one token (R10, R12) into ACC.
#define Q40T1(P, q, sc, ACC, PF) \
	NIB8(P, q, PF) \
	DOT8T1 \
	VCVTPH2PS sc(P), Z10 \
	VCVTDQ2PS Z0, Z0 \
	VMULPS.BCST (R12), Z10, Z11 \
	VFMADD231PS Z11, Z0, ACC

// func tileQ4x4(nu int, tile, act *byte, out *[64]float32)
//
// Q4_0 tiles (per pair of 32-element blocks: 2×256 bytes of nibbles, then 2×16 fp16
// scales, 576 bytes, so every 64-byte load is aligned) times four tokens (activation
// blocks of 4·32+48 bytes).
TEXT ·tileQ4x4(SB), NOSPLIT, $0-32
	ARGS4
	MASKS
	TESTQ CX, CX
	JZ q4x4_done
q4x4_loop:
	PREF6(PFON)
	PREFETCHT0 (PFD+384)(SI)
	PREFETCHT0 (PFD+448)(SI)
	PREFETCHT0 (PFD+512)(SI)
	Q40BLK4(0, 512)
	Q40BLK4(256, 544)
	ADDQ $576, SI
	DECQ CX
	JNZ q4x4_loop
q4x4_done:
	STORE4

// func tileQ4x1(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ4x4 for token tok (0–3) of the activation blocks alone. The macro is its body with prefetch PF: PFON here,
// PFOFF in the …np twin below.
#define TILEQ4X1(PF) \
	ARGS1(32) \
	MASKS \
	TESTQ CX, CX \
	JZ q4x1_done \
q4x1_loop: \
	PF((PFD+512)(SI)) \
	Q40BLK1(0, 512, PF) \
	Q40BLK1(256, 544, PF) \
	ADDQ $576, SI \
	DECQ CX \
	JNZ q4x1_loop \
q4x1_done: \
	STORE1

TEXT ·tileQ4x1(SB), NOSPLIT, $0-40
	TILEQ4X1(PFON)

// func tileQ4x1np(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ4x1 without software prefetch (PFOFF).
TEXT ·tileQ4x1np(SB), NOSPLIT, $0-40
	TILEQ4X1(PFOFF)

// func tileQ4x1m(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ4x1 on four tiles at once (tile + k·stride, results at out[16k]): four streams
// from memory instead of one (Intel: four adjacent tiles, with software prefetch).
TEXT ·tileQ4x1m(SB), NOSPLIT, $0-48
	MASKS
	ARGS1M(32)
	TESTQ CX, CX
	JZ q4x1m_done
q4x1m_loop:
	PREFETCHT0 (PFD+512)(SI)
	PREFETCHT0 (PFD+512)(R8)
	PREFETCHT0 (PFD+512)(R9)
	PREFETCHT0 (PFD+512)(BX)
	Q40T1(SI, 0, 512, Z4, PFON)
	Q40T1(R8, 0, 512, Z5, PFON)
	Q40T1(R9, 0, 512, Z6, PFON)
	Q40T1(BX, 0, 512, Z7, PFON)
	NEXT1
	Q40T1(SI, 256, 544, Z4, PFON)
	Q40T1(R8, 256, 544, Z5, PFON)
	Q40T1(R9, 256, 544, Z6, PFON)
	Q40T1(BX, 256, 544, Z7, PFON)
	NEXT1
	STEP4T($576)
	DECQ CX
	JNZ q4x1m_loop
q4x1m_done:
	STORE4

// Q40SUMS4T sums one Q4_0 block (nibbles at q) of the four tiles against one token
// (R10, R12) into I0–I3, 64 bytes of each tile in turn.
#define Q40SUMS4T(q, I0, I1, I2, I3) \
	STARTT(I0, I1, I2, I3) \
	Q4C4T((q)(SI), (q)(R8), (q)(R9), (q)(BX), 0, I0, I1, I2, I3) \
	Q4C4T((q+64)(SI), (q+64)(R8), (q+64)(R9), (q+64)(BX), 1, I0, I1, I2, I3) \
	Q4C4T((q+128)(SI), (q+128)(R8), (q+128)(R9), (q+128)(BX), 2, I0, I1, I2, I3) \
	Q4C4T((q+192)(SI), (q+192)(R8), (q+192)(R9), (q+192)(BX), 3, I0, I1, I2, I3)

// X1MUNITS(UNIT, SUMS, q1, sc0, sc1, n) is the body of the Q4_0 and Q8_0 four-tile
// kernels (after MASKS where they need it): the arguments, then UNIT(SUMS, q1, sc0,
// sc1, n) for each of the nu units, then the four tiles' outputs.
#define X1MUNITS(UNIT, SUMS, q1, sc0, sc1, n) \
	ARGS1M(32) \
	TESTQ CX, CX \
	JZ done \
loop: \
	UNIT(SUMS, q1, sc0, sc1, n) \
	DECQ CX \
	JNZ loop \
done: \
	STORE4

// func tileQ4x1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ4x1m without software prefetch, reading every tile strictly forward: 64 bytes of
// each tile in turn, both blocks' sums before the unit's scale line (Q40T1's float
// operations per tile and block, in order). One tile from each quarter of a band, four
// streams at once (AMD). Reading a tile's whole block before the next (Q40T1 per tile)
// was 3–6 % slower per llama-1b Q4_0 token.
TEXT ·tileQ4x1mnp(SB), NOSPLIT, $0-48
	MASKS
	X1MUNITS(UNIT4T, Q40SUMS4T, 256, 512, 544, $576)

// NIBQ1 multiplies the 64-byte nibble word at memory operand m (prefetching the line at
// pm first, non-temporally) with one token's broadcast activations (low nibbles Z24,
// high Z25) into the int sum S, through A (low nibbles) and B (high): tileQ4x1mq's
// step. PREFETCHNTA keeps the weights, read once per token, from pushing out of the
// caches what the step reads again (activations, outputs, norms, the KV cache): on a
// 2-core AMD EPYC (Zen 5), llama-1b Q4_0 tg128 -r 5 read 1.033× faster (mean of 17
// alternated runs, 15 of them faster) than with PREFETCHT0. The same change made no
// difference to Q8_0, Q4_K_M, F16 or BF16 decode (5, 5, 4 and 4 rounds), nor did
// prefetching the scale lines non-temporally too (6 rounds), and they keep PREFETCHT0.
#define NIBQ1(m, pm, A, B, S) NIBQX(PFNTA, NOLUT, m, pm, A, B, S)

// NIBQL is NIBQ1 with the nibbles looked up in Z29 (IQ4_NL's or MXFP4's values, as
// LUTT1 does) before they are multiplied: tileIQ4NLx1mq's and tileMXFP4x1mq's step.
// NIBQ1NP and NIBQLNP are NIBQ1 and NIBQL without the prefetch; NIBQX is their body,
// PF the prefetch and LK the lookup (LUT2, or NOLUT).
#define NIBQL(m, pm, A, B, S) NIBQX(PFNTA, LUT2, m, pm, A, B, S)
#define NIBQ1NP(m, pm, A, B, S) NIBQX(PFOFF, NOLUT, m, pm, A, B, S)
#define NIBQLNP(m, pm, A, B, S) NIBQX(PFOFF, LUT2, m, pm, A, B, S)
#define PFNTA(m) PREFETCHNTA m
#define NOLUT(A, B)
#define LUT2(A, B) \
	VPSHUFB A, Z29, A \
	VPSHUFB B, Z29, B
#define NIBQX(PF, LK, m, pm, A, B, S) \
	NIBLD(PF, m, pm, A, B) \
	LK(A, B) \
	DOTQ(A, B, S)

// NIBLD loads the nibble word at m as its low (A) and high (B) nibbles, prefetching the
// line at pm first (PF); DOTQ multiplies them with the token's broadcast activations
// (Z24, Z25) into the int sum S.
#define NIBLD(PF, m, pm, A, B) \
	PF(pm) \
	VMOVDQU64 m, A \
	VPSRLW $4, A, B \
	VPANDQ Z31, A, A \
	VPANDQ Z31, B, B
#define DOTQ(A, B, S) \
	VPDPBUSD Z24, A, S \
	VPDPBUSD Z25, B, S

// NIBQ5 is NIBQ1 for nibble word c of a Q5_0 or Q5_1 block with its high bits: 16
// added to the nibbles whose bit is set in the block's high-bit word H (HI5 with the
// bit table at R13, 16s in Z26), PF the prefetch.
#define NIBQ5(PF, m, pm, A, B, S, H, c) \
	NIBLD(PF, m, pm, A, B) \
	HIBITS((64*c)(R13), (256+64*c)(R13), H, Z26, A, B) \
	DOTQ(A, B, S)

// Q5Q4 is NIBQ5 for nibble word c of the block at o in each of the four tiles, their
// high-bit words in Z14, Z15, Z27 and Z28.
#define Q5Q4(PF, o, c, S0, S1, S2, S3) \
	VPBROADCASTD (4*c)(R10), Z24 \
	VPBROADCASTD (16+4*c)(R10), Z25 \
	NIBQ5(PF, (o+64*c)(SI), (PFD+o+64*c)(SI), Z16, Z17, S0, Z14, c) \
	NIBQ5(PF, (o+64*c)(R8), (PFD+o+64*c)(R8), Z18, Z19, S1, Z15, c) \
	NIBQ5(PF, (o+64*c)(R9), (PFD+o+64*c)(R9), Z20, Z21, S2, Z27, c) \
	NIBQ5(PF, (o+64*c)(BX), (PFD+o+64*c)(BX), Z22, Z23, S3, Z28, c)

// Q5QBLKX sums the Q5_0 or Q5_1 block at o of the four tiles (its high-bit words at
// 512+o/4, after the unit's two nibble blocks) against the token into S0–S3 and steps
// R10 and R12: PF prefetches each nibble line, PFH each tile's high-bit line. Q50QBLK
// and Q50QBLKNP are it with and without the prefetches.
#define Q5QBLKX(PF, PFH, o, S0, S1, S2, S3) \
	STARTT(S0, S1, S2, S3) \
	PFH(PFD+512+o/4) \
	VMOVDQU64 (512+o/4)(SI), Z14 \
	VMOVDQU64 (512+o/4)(R8), Z15 \
	VMOVDQU64 (512+o/4)(R9), Z27 \
	VMOVDQU64 (512+o/4)(BX), Z28 \
	Q5Q4(PF, o, 0, S0, S1, S2, S3) \
	Q5Q4(PF, o, 1, S0, S1, S2, S3) \
	Q5Q4(PF, o, 2, S0, S1, S2, S3) \
	Q5Q4(PF, o, 3, S0, S1, S2, S3) \
	NEXT1
#define Q50QBLK(o, S0, S1, S2, S3) Q5QBLKX(PFNTA, PF4T, o, S0, S1, S2, S3)
#define Q50QBLKNP(o, S0, S1, S2, S3) Q5QBLKX(PFOFF, PFOFF, o, S0, S1, S2, S3)

// Q4Q4 is NIB (NIBQ1 or NIBQL) for nibble word c of the block at o in each of the four
// tiles (each line prefetched PFD ahead), the token's activations of word c broadcast
// once for all four.
#define Q4Q4(NIB, o, c, S0, S1, S2, S3) \
	VPBROADCASTD (4*c)(R10), Z24 \
	VPBROADCASTD (16+4*c)(R10), Z25 \
	NIB((o+64*c)(SI), (PFD+o+64*c)(SI), Z16, Z17, S0) \
	NIB((o+64*c)(R8), (PFD+o+64*c)(R8), Z18, Z19, S1) \
	NIB((o+64*c)(R9), (PFD+o+64*c)(R9), Z20, Z21, S2) \
	NIB((o+64*c)(BX), (PFD+o+64*c)(BX), Z22, Z23, S3)

// Q4QBLK sums the nibble block at o of the four tiles against the token into S0–S3
// through NIB and steps R10 and R12 to the token's next block.
#define Q4QBLK(NIB, o, S0, S1, S2, S3) \
	STARTT(S0, S1, S2, S3) \
	Q4Q4(NIB, o, 0, S0, S1, S2, S3) \
	Q4Q4(NIB, o, 1, S0, S1, S2, S3) \
	Q4Q4(NIB, o, 2, S0, S1, S2, S3) \
	Q4Q4(NIB, o, 3, S0, S1, S2, S3) \
	NEXT1

// Q40QBLK and LUTQBLK are Q4QBLK for Q4_0 (the nibbles as they are) and for IQ4_NL and
// MXFP4 (the nibbles looked up); Q40QBLKNP and LUTQBLKNP are them without prefetch.
#define Q40QBLK(o, S0, S1, S2, S3) Q4QBLK(NIBQ1, o, S0, S1, S2, S3)
#define Q40QBLKNP(o, S0, S1, S2, S3) Q4QBLK(NIBQ1NP, o, S0, S1, S2, S3)
#define LUTQBLK(o, S0, S1, S2, S3) Q4QBLK(NIBQL, o, S0, S1, S2, S3)
#define LUTQBLKNP(o, S0, S1, S2, S3) Q4QBLK(NIBQLNP, o, S0, S1, S2, S3)

// FMATQ is FMAT with the token's scale already broadcast in Z11: the same operations
// (ws·d rounded, then the fused multiply-add), one broadcast for four tiles.
// CONV(m) (HALFSC, E8SC) widens a block's 16 row scales at memory operand m into Z10.
#define FMATQ(CONV, sc, I, ACC) \
	CONV(sc) \
	VMULPS Z11, Z10, Z10 \
	VCVTDQ2PS I, I \
	VFMADD231PS Z10, I, ACC

// HALFSC reads fp16 row scales; E8SC E8M0 ones (the factor 1.0 in Z28).
#define HALFSC(m) VCVTPH2PS m, Z10
#define E8SC(m) E8M0M(m, Z28)

// FMATQ4 scales the four tiles' int sums I0–I3 by their fp16 scales at offset sc and
// the token's scale at t(R12) into Z4–Z7; FMATQ4E the same with E8M0 scales.
#define FMATQ4(sc, t, I0, I1, I2, I3) FMATQ4F(HALFSC, sc, t, I0, I1, I2, I3)
#define FMATQ4E(sc, t, I0, I1, I2, I3) FMATQ4F(E8SC, sc, t, I0, I1, I2, I3)
#define FMATQ4F(CONV, sc, t, I0, I1, I2, I3) \
	VBROADCASTSS t(R12), Z11 \
	FMATQ(CONV, sc(SI), I0, Z4) \
	FMATQ(CONV, sc(R8), I1, Z5) \
	FMATQ(CONV, sc(R9), I2, Z6) \
	FMATQ(CONV, sc(BX), I3, Z7)

// FMATQM is FMATQ with HALFSC for a tile at P, then its block's fp16 row mins at
// (sc+64)(P) times the token's min sum at (t+32)(R12) added (Q4_1: FMA1, then MIN1).
#define FMATQM(P, sc, t, I, ACC) \
	FMATQ(HALFSC, sc(P), I, ACC) \
	VCVTPH2PS (sc+64)(P), Z10 \
	VFMADD231PS.BCST (t+32)(R12), Z10, ACC

// FMATQ4M is FMATQ4 with the mins (FMATQM), for Q4_1.
#define FMATQ4M(sc, t, I0, I1, I2, I3) \
	VBROADCASTSS t(R12), Z11 \
	FMATQM(SI, sc, t, I0, Z4) \
	FMATQM(R8, sc, t, I1, Z5) \
	FMATQM(R9, sc, t, I2, Z6) \
	FMATQM(BX, sc, t, I3, Z7)

// UNITQ is one unit (two blocks, then their scale line at sc0, sc1) of the four tiles
// in the leaner kernels: BLK sums a block at an offset into four int sums, the scale
// line is prefetched after both blocks, and the tiles step n bytes. UNITQE is UNITQ
// for E8M0 scales (MXFP4), UNITQNP and UNITQENP UNITQ and UNITQE without the scale
// line's prefetch; UNITQF is their body with FM scaling a block's sums and PFS
// prefetching the scale line.
#define UNITQ(BLK, q1, sc0, sc1, n) UNITQF(FMATQ4, PF4T, BLK, q1, sc0, sc1, n)
#define UNITQNP(BLK, q1, sc0, sc1, n) UNITQF(FMATQ4, PFOFF, BLK, q1, sc0, sc1, n)
#define UNITQE(BLK, q1, sc0, sc1, n) UNITQF(FMATQ4E, PF4T, BLK, q1, sc0, sc1, n)
#define UNITQENP(BLK, q1, sc0, sc1, n) UNITQF(FMATQ4E, PFOFF, BLK, q1, sc0, sc1, n)
#define UNITQF(FM, PFS, BLK, q1, sc0, sc1, n) \
	BLK(0, Z0, Z1, Z2, Z3) \
	BLK(q1, Z8, Z9, Z12, Z13) \
	PFS(PFD+sc0) \
	FM(sc0, -352, Z0, Z1, Z2, Z3) \
	FM(sc1, -176, Z8, Z9, Z12, Z13) \
	STEP4T(n)

// UNITQM and UNITQMNP are UNITQ for Q4_1 (scales, then mins, FMATQ4M), with and
// without the prefetch of the scale and min lines (PF4T2).
#define UNITQM(BLK, q1, sc0, sc1, n) UNITQF(FMATQ4M, PF4T2, BLK, q1, sc0, sc1, n)
#define UNITQMNP(BLK, q1, sc0, sc1, n) UNITQF(FMATQ4M, PFOFF, BLK, q1, sc0, sc1, n)
#define PF4T2(o) \
	PF4T(o) \
	PF4T(o+64)

// func tileQ4x1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ4x1mnp with software prefetch, for the four quarters of a band (AMD Zen 5): 64
// bytes of each tile in turn, each line prefetched PFD ahead (non-temporally: NIBQ1)
// just before the word it is read with, and each activation word and token scale
// broadcast once for the four tiles. The same sums and float operations as tileQ4x1,
// in fewer instructions per line than tileQ4x1m (which broadcasts the activations from
// memory for every tile) and with the scale line's prefetch after the unit's blocks.
// On a 2-core AMD EPYC (Zen 5), one 5632×2048 product after another over 1 GiB, nine
// alternated rounds: one thread 31.1–31.8 → 35.2 GB/s (the read probe 36–39), two
// threads 63.1–63.4 → 65.8–66.1 (probe 78); the same kernel with the scale prefetch
// first read 32.5–32.8 and 64.4–64.6.
TEXT ·tileQ4x1mq(SB), NOSPLIT, $0-48
	MASKS
	X1MUNITS(UNITQ, Q40QBLK, 256, 512, 544, $576)

// Q4K_SCALES loads sub-block scales (R14) and mins (128(R14)) as bytes and turns them
// into row scales d·sc (Z10) and min factors −dmin·m (Z15), with d in Z28 and −dmin
// in Z29.
#define Q4K_SCALES \
	VPMOVZXBD (R14), Z10 \
	VCVTDQ2PS Z10, Z10 \
	VMULPS Z28, Z10, Z10 \
	VPMOVZXBD 128(R14), Z15 \
	VCVTDQ2PS Z15, Z15 \
	VMULPS Z29, Z15, Z15

// Q4K_HEAD reads a Q4_K super-block's fp16 d and dmin (Z28, −dmin in Z29) and points
// R14 at its scale bytes and SI at its quants; R13 counts its eight sub-blocks.
#define Q4K_HEAD \
	VCVTPH2PS (SI), Z28 \
	VCVTPH2PS 32(SI), Z29 \
	VPXORD Z27, Z29, Z29 \
	LEAQ 64(SI), R14 \
	ADDQ $320, SI \
	MOVQ $8, R13

// func tileQ4Kx4(nu int, tile, act *byte, out *[64]float32)
//
// Q4_K tiles (per 256-element super-block: 16 fp16 d, 16 fp16 dmin, 8×16 scale bytes,
// 8×16 min bytes, then eight 32-element sub-blocks of 256 nibble bytes) times four
// tokens.
TEXT ·tileQ4Kx4(SB), NOSPLIT, $0-32
	ARGS4
	MASKS
	TESTQ CX, CX
	JZ q4kx4_done
q4kx4_super:
	Q4K_HEAD
q4kx4_sub:
	PREF6(PFON)
	LEAQ 128(DI), R12
	STARTS4
	Q4C4(0, 0, Z16, Z17)
	Q4C4(0, 1, Z18, Z19)
	Q4C4(0, 2, Z20, Z21)
	Q4C4(0, 3, Z22, Z23)
	Q4K_SCALES
	FMA4
	MIN4
	ADDQ $256, SI
	ADDQ $16, R14
	ADDQ $176, DI
	DECQ R13
	JNZ q4kx4_sub
	DECQ CX
	JNZ q4kx4_super
q4kx4_done:
	STORE4

// func tileQ4Kx1(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ4Kx4 for token tok (0–3) alone. The macro is its body with prefetch PF: PFON here,
// PFOFF in the …np twin below.
#define TILEQ4KX1(PF) \
	ARGS1(32) \
	MASKS \
	TESTQ CX, CX \
	JZ q4kx1_done \
q4kx1_super: \
	Q4K_HEAD \
q4kx1_sub: \
	PREF6(PF) \
	VPBROADCASTD 16(R12), Z0 \
	VPXORD Z1, Z1, Z1 \
	Q4C1(0, 0, Z16, Z17) \
	Q4C1(0, 1, Z18, Z19) \
	Q4C1(0, 2, Z20, Z21) \
	Q4C1(0, 3, Z22, Z23) \
	VPADDD Z1, Z0, Z0 \
	Q4K_SCALES \
	FMA1 \
	MIN1 \
	ADDQ $256, SI \
	ADDQ $16, R14 \
	ADDQ $176, R10 \
	ADDQ $176, R12 \
	DECQ R13 \
	JNZ q4kx1_sub \
	DECQ CX \
	JNZ q4kx1_super \
q4kx1_done: \
	STORE1

TEXT ·tileQ4Kx1(SB), NOSPLIT, $0-40
	TILEQ4KX1(PFON)

// func tileQ4Kx1np(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ4Kx1 without software prefetch (PFOFF).
TEXT ·tileQ4Kx1np(SB), NOSPLIT, $0-40
	TILEQ4KX1(PFOFF)


// Q4KFMAT scales the int sum I of sub-block R14/16 of the Q4_K super-block of the tile
// at P (its scale and min bytes in the head at P; its d and −dmin in D and DM) and adds
// its mins, into ACC: Q4K_SCALES, FMA1 and MIN1.
#define Q4KFMAT(P, D, DM, I, ACC) \
	VPMOVZXBD 64(P)(R14*1), Z10 \
	VCVTDQ2PS Z10, Z10 \
	VMULPS D, Z10, Z10 \
	VPMOVZXBD 192(P)(R14*1), Z15 \
	VCVTDQ2PS Z15, Z15 \
	VMULPS DM, Z15, Z15 \
	VCVTDQ2PS I, I \
	VMULPS.BCST (R12), Z10, Z11 \
	VFMADD231PS Z11, I, ACC \
	VFMADD231PS.BCST 32(R12), Z15, ACC

// Q4KDM reads the fp16 d and dmin of the Q4_K or Q5_K super-block of the tile at P into
// D and DM (negated with the sign bits in Z10).
#define Q4KDM(P, D, DM) \
	VCVTPH2PS (P), D \
	VCVTPH2PS 32(P), DM \
	VPXORD Z10, DM, DM

// Q4KDM4 reads the four tiles' d and −dmin into D0, M0 (SI) … D3, M3 (BX) (clobbers
// DX, Z10).
#define Q4KDM4(D0, M0, D1, M1, D2, M2, D3, M3) \
	MOVL $0x80000000, DX \
	VPBROADCASTD DX, Z10 \
	Q4KDM(SI, D0, M0) \
	Q4KDM(R8, D1, M1) \
	Q4KDM(R9, D2, M2) \
	Q4KDM(BX, D3, M3)

// SUPER4T is the body of the four-tile kernels over 256-element super-blocks of
// eight 32-element sub-blocks of nibble words (Q4_K, IQ4_XS), 64 bytes of each tile in
// turn: SETUP sets the constants, DS reads the four tiles' super-block scales at each
// super-block (after PFSUPER), CHUNK (Q4C4T, LUTC4T) sums each of a sub-block's four
// chunks (the quants at q in the super-block; PFC(o) before each, o the chunk's offset
// plus PFD: prefetches, or PFOFF), FMAT4 scales the sub-block's four int sums into the
// accumulators, and the tiles step n bytes per super-block.
#define SUPER4T(SETUP, DS, CHUNK, FMAT4, q, n, PFSUPER, PFC) \
	SETUP \
	ARGS1M(32) \
	TESTQ CX, CX \
	JZ done \
super: \
	PFSUPER \
	XORQ R11, R11 \
	XORQ R14, R14 \
	MOVQ $8, R13 \
	DS \
sub: \
	STARTT(Z0, Z1, Z2, Z3) \
	PFC(PFD+q) \
	CHUNK(q(SI)(R11*1), q(R8)(R11*1), q(R9)(R11*1), q(BX)(R11*1), 0, Z0, Z1, Z2, Z3) \
	PFC(PFD+q+64) \
	CHUNK((q+64)(SI)(R11*1), (q+64)(R8)(R11*1), (q+64)(R9)(R11*1), (q+64)(BX)(R11*1), 1, Z0, Z1, Z2, Z3) \
	PFC(PFD+q+128) \
	CHUNK((q+128)(SI)(R11*1), (q+128)(R8)(R11*1), (q+128)(R9)(R11*1), (q+128)(BX)(R11*1), 2, Z0, Z1, Z2, Z3) \
	PFC(PFD+q+192) \
	CHUNK((q+192)(SI)(R11*1), (q+192)(R8)(R11*1), (q+192)(R9)(R11*1), (q+192)(BX)(R11*1), 3, Z0, Z1, Z2, Z3) \
	FMAT4 \
	NEXT1 \
	ADDQ $256, R11 \
	ADDQ $16, R14 \
	DECQ R13 \
	JNZ sub \
	STEP4T(n) \
	DECQ CX \
	JNZ super \
done: \
	STORE4

// TILEQ4KX1M(PFSUPER, PFC) is the body of the Q4_K four-tile kernels (SUPER4T): d and
// −dmin read once per super-block (Q4KDM4), the mins added after the scales.
#define TILEQ4KX1M(PFSUPER, PFC) SUPER4T(MASKS, Q4KDM4(Z8, Z9, Z12, Z13, Z14, Z26, Z27, Z30), Q4C4T, Q4KFMAT4, 320, $2368, PFSUPER, PFC)
#define Q4KFMAT4 \
	Q4KFMAT(SI, Z8, Z9, Z0, Z4) \
	Q4KFMAT(R8, Z12, Z13, Z1, Z5) \
	Q4KFMAT(R9, Z14, Z26, Z2, Z6) \
	Q4KFMAT(BX, Z27, Z30, Z3, Z7)

// PFHEADQ prefetches the five lines PFD past a K-quant super-block's start, its
// head's, which no quant load's prefetch reaches.
#define PFHEADQ PF4T5(PFD)

// func tileQ4Kx1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ4Kx1np on four tiles at once (tile + k·stride, results at out[16k]), 64 bytes of
// each in turn, as tileQ4x1mnp (1.6–3.4 % faster per llama-1b Q4_K_M token than a
// whole sub-block of each tile in turn). Each tile's scales come from its super-block's
// head through R14 (16·sub-block), its quants through R11 (256·sub-block); its d and
// −dmin are read once per super-block (Q4KDM4).
TEXT ·tileQ4Kx1mnp(SB), NOSPLIT, $0-48
	TILEQ4KX1M(PFNONE, PFOFF)

// func tileQ4Kx1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ4Kx1mnp with every quant line prefetched PFD ahead just before its load (the
// shape of tileQ4x1mq and tileQ8x1mq) and, at each super-block, the five lines PFD
// past its head, which no quant load's prefetch reaches: every line of the four tiles
// is prefetched once, in order. The same sums. It replaced a kernel that prefetched
// in bursts, four lines a sub-block and five a super-block 2048 and 4096 bytes ahead:
// on a 2-core AMD EPYC (Zen 5), products of 5632×2048 cycled over 1 GiB read 5–7 %
// faster (medians of 40 rounds taken by turns), and a whole llama-1b Q4_K_M decode
// step took 1.032–1.052× less time with it alone, 1.054–1.059× with tileQ6Kx1mq too
// (three runs of 40 turns of 16 tokens, 29–37 of the 40 faster).
TEXT ·tileQ4Kx1mq(SB), NOSPLIT, $0-48
	TILEQ4KX1M(PFHEADQ, PF4TX)

// The Q5_K kernels: Q4_K's with each nibble word's fifth bits added as 16s (tile.go:
// per super-block Q4_K's 320-byte head, eight high-bit words, then the eight
// sub-blocks' nibbles). Registers as Q4_K's, and DX the super-block's high-bit words,
// Z26 the current sub-block's bit (1 << j in every byte), Z25 the 0x10 bytes.

// Q5K_HEAD is Q4K_HEAD for a Q5_K super-block: also DX at its high-bit words and Z26
// at the first sub-block's bit.
#define Q5K_HEAD \
	VCVTPH2PS (SI), Z28 \
	VCVTPH2PS 32(SI), Z29 \
	VPXORD Z27, Z29, Z29 \
	LEAQ 64(SI), R14 \
	LEAQ 320(SI), DX \
	ADDQ $832, SI \
	MOVQ $8, R13 \
	MOVL $0x01010101, R9 \
	VPBROADCASTD R9, Z26

// Q5MASK sets Z25 to the 0x10 bytes.
#define Q5MASK \
	MOVL $0x10101010, R9 \
	VPBROADCASTD R9, Z25

// HIBITS adds the bytes ADD to the low (A) and high (B) nibbles whose bits R are set
// in the high-bit words at memory operands m0 (low nibbles) and m1 (high): VPTESTMB
// into a mask, then a masked VPADDB. The 5-bit kernels' only difference is where the
// words, the bit and the 16s are.
#define HIBITS(m0, m1, R, ADD, A, B) \
	VPTESTMB m0, R, K1 \
	VPTESTMB m1, R, K2 \
	VPADDB ADD, A, K1, A \
	VPADDB ADD, B, K2, B

// Q5HI adds 16 to the low (A) and high (B) nibbles of word c whose high bit of this
// sub-block (Z26) is set in the high-bit words c and 4+c (DX).
#define Q5HI(c, A, B) HIBITS((64*c)(DX), (256+64*c)(DX), Z26, Z25, A, B)

// Q5C4 multiplies word c of a Q5_K sub-block (nibbles at SI) with four tokens'
// activations (DI) into Z0–Z3.
#define Q5C4(c, A, B) \
	NIB2(0, c, A, B) \
	Q5HI(c, A, B) \
	DOTC4(c, A, B)

// Q5C1 is Q5C4 for one token (activations at R10; low halves into Z0, high into Z1).
#define Q5C1(c, A, B) NIBC1((64*c)(SI), c, A, B, Q5HI)

// func tileQ5Kx4(nu int, tile, act *byte, out *[64]float32)
//
// Q5_K tiles times four tokens: tileQ4Kx4 with the high bits.
TEXT ·tileQ5Kx4(SB), NOSPLIT, $0-32
	ARGS4
	MASKS
	Q5MASK
	TESTQ CX, CX
	JZ q5kx4_done
q5kx4_super:
	Q5K_HEAD
q5kx4_sub:
	PREF6(PFON)
	LEAQ 128(DI), R12
	STARTS4
	Q5C4(0, Z16, Z17)
	Q5C4(1, Z18, Z19)
	Q5C4(2, Z20, Z21)
	Q5C4(3, Z22, Z23)
	Q4K_SCALES
	FMA4
	MIN4
	VPADDB Z26, Z26, Z26
	ADDQ $256, SI
	ADDQ $16, R14
	ADDQ $176, DI
	DECQ R13
	JNZ q5kx4_sub
	DECQ CX
	JNZ q5kx4_super
q5kx4_done:
	STORE4

// func tileQ5Kx1(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ5Kx4 for token tok (0–3) alone. The macro is its body with prefetch PF: PFON here,
// PFOFF in the …np twin below.
#define TILEQ5KX1(PF) \
	ARGS1(32) \
	MASKS \
	Q5MASK \
	TESTQ CX, CX \
	JZ q5kx1_done \
q5kx1_super: \
	Q5K_HEAD \
q5kx1_sub: \
	PREF6(PF) \
	VPBROADCASTD 16(R12), Z0 \
	VPXORD Z1, Z1, Z1 \
	Q5C1(0, Z16, Z17) \
	Q5C1(1, Z18, Z19) \
	Q5C1(2, Z20, Z21) \
	Q5C1(3, Z22, Z23) \
	VPADDD Z1, Z0, Z0 \
	Q4K_SCALES \
	FMA1 \
	MIN1 \
	VPADDB Z26, Z26, Z26 \
	ADDQ $256, SI \
	ADDQ $16, R14 \
	ADDQ $176, R10 \
	ADDQ $176, R12 \
	DECQ R13 \
	JNZ q5kx1_sub \
	DECQ CX \
	JNZ q5kx1_super \
q5kx1_done: \
	STORE1

TEXT ·tileQ5Kx1(SB), NOSPLIT, $0-40
	TILEQ5KX1(PFON)

// func tileQ5Kx1np(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ5Kx1 without software prefetch (PFOFF).
TEXT ·tileQ5Kx1np(SB), NOSPLIT, $0-40
	TILEQ5KX1(PFOFF)

// Q5HIT is Q5HI for tile P of a four-tile kernel (its super-block's high-bit words at
// 320(P)), with the 0x10 bytes in Z30.
#define Q5HIT(P, c, A, B) HIBITS((320+64*c)(P), (576+64*c)(P), Z26, Z30, A, B)

// Q5C4T is Q4C4T for word c of sub-block R11/256 of the four Q5_K tiles.
#define Q5C4T(c, I0, I1, I2, I3) \
	VPBROADCASTD (4*c)(R10), Z24 \
	VPBROADCASTD (16+4*c)(R10), Z25 \
	NIB4((832+64*c)(SI)(R11*1), (832+64*c)(R8)(R11*1), (832+64*c)(R9)(R11*1), (832+64*c)(BX)(R11*1)) \
	Q5HIT(SI, c, Z16, Z17) \
	Q5HIT(R8, c, Z18, Z19) \
	Q5HIT(R9, c, Z20, Z21) \
	Q5HIT(BX, c, Z22, Z23) \
	VPDPBUSD Z24, Z16, I0 \
	VPDPBUSD Z25, Z17, I0 \
	VPDPBUSD Z24, Z18, I1 \
	VPDPBUSD Z25, Z19, I1 \
	VPDPBUSD Z24, Z20, I2 \
	VPDPBUSD Z25, Z21, I2 \
	VPDPBUSD Z24, Z22, I3 \
	VPDPBUSD Z25, Z23, I3

// TILEQ5KX1M(PFSUPER, PFC) is the body of the Q5_K four-tile kernels, as TILEQ4KX1M.
#define TILEQ5KX1M(PFSUPER, PFC) \
	MASKS \
	MOVL $0x10101010, R9 \
	VPBROADCASTD R9, Z30 \
	ARGS1M(32) \
	TESTQ CX, CX \
	JZ done \
super: \
	PFSUPER \
	XORQ R11, R11 \
	XORQ R14, R14 \
	MOVQ $8, R13 \
	Q4KDM4(Z8, Z9, Z12, Z13, Z14, Z27, Z28, Z29) \
	MOVL $0x01010101, DX \
	VPBROADCASTD DX, Z26 \
sub: \
	STARTT(Z0, Z1, Z2, Z3) \
	PFC(PFD+832) \
	Q5C4T(0, Z0, Z1, Z2, Z3) \
	PFC(PFD+896) \
	Q5C4T(1, Z0, Z1, Z2, Z3) \
	PFC(PFD+960) \
	Q5C4T(2, Z0, Z1, Z2, Z3) \
	PFC(PFD+1024) \
	Q5C4T(3, Z0, Z1, Z2, Z3) \
	Q4KFMAT(SI, Z8, Z9, Z0, Z4) \
	Q4KFMAT(R8, Z12, Z13, Z1, Z5) \
	Q4KFMAT(R9, Z14, Z27, Z2, Z6) \
	Q4KFMAT(BX, Z28, Z29, Z3, Z7) \
	NEXT1 \
	VPADDB Z26, Z26, Z26 \
	ADDQ $256, R11 \
	ADDQ $16, R14 \
	DECQ R13 \
	JNZ sub \
	STEP4T($2880) \
	DECQ CX \
	JNZ super \
done: \
	STORE4

// func tileQ5Kx1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ5Kx1np on four tiles at once (tile + k·stride, results at out[16k]), as
// tileQ4Kx1mnp.
TEXT ·tileQ5Kx1mnp(SB), NOSPLIT, $0-48
	TILEQ5KX1M(PFNONE, PFOFF)

// PFQ5KHEADQ prefetches the 13 lines PFD past a Q5_K unit's start (its head and
// high-bit words), which no quant load's prefetch reaches.
#define PFQ5KHEADQ \
	PF4T5(PFD) \
	PF4T5(PFD+320) \
	PF4T(PFD+640) \
	PF4T(PFD+704) \
	PF4T(PFD+768)

// func tileQ5Kx1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ5Kx1mnp with every quant line prefetched PFD ahead just before its load and,
// at each super-block, the head and high-bit lines PFD on (PFQ5KHEADQ): tileQ4Kx1mq's
// shape. The same sums. It replaced a kernel that prefetched in bursts 2048 bytes
// ahead: a llama-1b Q5_K_M decode step took 1.13–1.14× less time with it (AMD EPYC
// Zen 5, three runs of 40 in-process turns of 16 tokens, 36–39 of the 40 faster).
TEXT ·tileQ5Kx1mq(SB), NOSPLIT, $0-48
	TILEQ5KX1M(PFQ5KHEADQ, PF4TX)

// Q6CHUNKS rebuilds the four 6-bit chunks of one 16-element Q6_K block of 16 rows
// (nibbles at SI and 64(SI), high bit pairs at 128(SI)) into Z19, Z21, Z23, Z24.
#define Q6CHUNKS \
	VMOVDQU64 (SI), Z16 \
	VMOVDQU64 64(SI), Z17 \
	VMOVDQU64 128(SI), Z18 \
	Q6BITS

// Q6BITS is Q6CHUNKS on the block's three words loaded into Z16, Z17, Z18.
#define Q6BITS \
	VPANDQ Z31, Z16, Z19 \
	VPSLLW $4, Z18, Z20 \
	VPTERNLOGD $0xF8, Z30, Z20, Z19 \
	VPANDQ Z31, Z17, Z21 \
	VPSLLW $2, Z18, Z22 \
	VPTERNLOGD $0xF8, Z30, Z22, Z21 \
	VPSRLW $4, Z16, Z23 \
	VPANDQ Z31, Z23, Z23 \
	VPTERNLOGD $0xF8, Z30, Z18, Z23 \
	VPSRLW $4, Z17, Z24 \
	VPANDQ Z31, Z24, Z24 \
	VPSRLW $2, Z18, Z25 \
	VPTERNLOGD $0xF8, Z30, Z25, Z24

// Q6DOT1 multiplies Q6CHUNKS' four chunks with one token's 16 activations (R10) into
// the int sums Z0 and Z1, then adds Z1 to Z0.
#define Q6DOT1 \
	VPDPBUSD.BCST (R10), Z19, Z0 \
	VPDPBUSD.BCST 4(R10), Z21, Z1 \
	VPDPBUSD.BCST 8(R10), Z23, Z0 \
	VPDPBUSD.BCST 12(R10), Z24, Z1 \
	VPADDD Z1, Z0, Z0

// Q6DOT4 is Q6DOT1 for four tokens (16 activations each at DI) into Z0–Z3.
#define Q6DOT4 \
	VPDPBUSD.BCST (DI), Z19, Z0 \
	VPDPBUSD.BCST 16(DI), Z19, Z1 \
	VPDPBUSD.BCST 32(DI), Z19, Z2 \
	VPDPBUSD.BCST 48(DI), Z19, Z3 \
	VPDPBUSD.BCST 4(DI), Z21, Z0 \
	VPDPBUSD.BCST 20(DI), Z21, Z1 \
	VPDPBUSD.BCST 36(DI), Z21, Z2 \
	VPDPBUSD.BCST 52(DI), Z21, Z3 \
	VPDPBUSD.BCST 8(DI), Z23, Z0 \
	VPDPBUSD.BCST 24(DI), Z23, Z1 \
	VPDPBUSD.BCST 40(DI), Z23, Z2 \
	VPDPBUSD.BCST 56(DI), Z23, Z3 \
	VPDPBUSD.BCST 12(DI), Z24, Z0 \
	VPDPBUSD.BCST 28(DI), Z24, Z1 \
	VPDPBUSD.BCST 44(DI), Z24, Z2 \
	VPDPBUSD.BCST 60(DI), Z24, Z3

// Q6_SCALE turns the block's sixteen int8 scales (R14) into row scales d·sc (Z10).
#define Q6_SCALE \
	VPMOVSXBD (R14), Z10 \
	VCVTDQ2PS Z10, Z10 \
	VMULPS Z28, Z10, Z10

// PREF3 prefetches three lines from PFD ahead.
#define PREF3(PF) \
	PF((PFD)(SI)) \
	PF((PFD+64)(SI)) \
	PF((PFD+128)(SI))

// func tileQ6Kx4(nu int, tile, act *byte, out *[64]float32)
//
// Q6_K tiles (per 256-element super-block: 16 fp16 d, 32 bytes of padding (to align
// the quants), 16×16 int8 scales, then sixteen
// 16-element blocks of 192 bytes: two nibble words and one word of high bit pairs)
// times four tokens (activation blocks of 4·16+48 bytes).
TEXT ·tileQ6Kx4(SB), NOSPLIT, $0-32
	ARGS4
	MASKS
	TESTQ CX, CX
	JZ q6kx4_done
q6kx4_super:
	VCVTPH2PS (SI), Z28
	LEAQ 64(SI), R14
	ADDQ $320, SI
	MOVQ $16, R13
q6kx4_blk:
	PREF3(PFON)
	LEAQ 64(DI), R12
	STARTS4
	Q6CHUNKS
	Q6DOT4
	Q6_SCALE
	FMA4
	ADDQ $192, SI
	ADDQ $16, R14
	ADDQ $112, DI
	DECQ R13
	JNZ q6kx4_blk
	DECQ CX
	JNZ q6kx4_super
q6kx4_done:
	STORE4

// func tileQ6Kx1(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ6Kx4 for token tok (0–3) alone. The macro is its body with prefetch PF: PFON here,
// PFOFF in the …np twin below.
#define TILEQ6KX1(PF) \
	ARGS1(16) \
	MASKS \
	TESTQ CX, CX \
	JZ q6kx1_done \
q6kx1_super: \
	VCVTPH2PS (SI), Z28 \
	LEAQ 64(SI), R14 \
	ADDQ $320, SI \
	MOVQ $16, R13 \
q6kx1_blk: \
	PREF3(PF) \
	VPBROADCASTD 16(R12), Z0 \
	VPXORD Z1, Z1, Z1 \
	Q6CHUNKS \
	Q6DOT1 \
	Q6_SCALE \
	FMA1 \
	ADDQ $192, SI \
	ADDQ $16, R14 \
	ADDQ $112, R10 \
	ADDQ $112, R12 \
	DECQ R13 \
	JNZ q6kx1_blk \
	DECQ CX \
	JNZ q6kx1_super \
q6kx1_done: \
	STORE1

TEXT ·tileQ6Kx1(SB), NOSPLIT, $0-40
	TILEQ6KX1(PFON)

// func tileQ6Kx1np(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ6Kx1 without software prefetch (PFOFF).
TEXT ·tileQ6Kx1np(SB), NOSPLIT, $0-40
	TILEQ6KX1(PFOFF)

// Q6KT1 runs block R11/192 of the Q6_K super-block of the tile at P against one token
// (R10, R12) into ACC: the block step of tileQ6Kx1, its scales taken from the
// super-block's head at P (R14 = 16·block), its d from D. PF (PFON or PFOFF) is run on
// the line PFD past each of the block's three lines just before its load.
#define Q6KT1(P, D, ACC, PF) \
	VPBROADCASTD 16(R12), Z0 \
	VPXORD Z1, Z1, Z1 \
	PF((PFD+320)(P)(R11*1)) \
	VMOVDQU64 320(P)(R11*1), Z16 \
	PF((PFD+384)(P)(R11*1)) \
	VMOVDQU64 384(P)(R11*1), Z17 \
	PF((PFD+448)(P)(R11*1)) \
	VMOVDQU64 448(P)(R11*1), Z18 \
	Q6BITS \
	Q6DOT1 \
	KT1FMA(P, D, ACC)

// KT1FMA scales the int sum Z0 of the block R14/16 of the Q6_K or Q3_K super-block of
// the tile at P (its int8 scales in the head at P, its d in D) into ACC; KFMAT is it
// for the int sum I (IQ4_XS's tiles share the head's layout).
#define KT1FMA(P, D, ACC) KFMAT(P, D, Z0, ACC)
#define KFMAT(P, D, I, ACC) \
	VPMOVSXBD 64(P)(R14*1), Z10 \
	VCVTDQ2PS Z10, Z10 \
	VMULPS D, Z10, Z10 \
	VCVTDQ2PS I, I \
	VMULPS.BCST (R12), Z10, Z11 \
	VFMADD231PS Z11, I, ACC

// KD4 reads the four tiles' fp16 d (Q6_K, Q3_K) into Z2, Z3, Z8, Z9.
#define KD4 \
	VCVTPH2PS (SI), Z2 \
	VCVTPH2PS (R8), Z3 \
	VCVTPH2PS (R9), Z8 \
	VCVTPH2PS (BX), Z9

// TILEQ6KX1M(PFSUPER, PF) is the body of the Q6_K four-tile kernels, with PFSUPER run
// at each super-block (a prefetch, or PFNONE) and PF (PFON or PFOFF) before each load
// of a tile's 16-element block (Q6KT1).
#define TILEQ6KX1M(PFSUPER, PF) \
	MASKS \
	ARGS1M(16) \
	TESTQ CX, CX \
	JZ done \
super: \
	PFSUPER \
	XORQ R11, R11 \
	XORQ R14, R14 \
	MOVQ $16, R13 \
	KD4 \
blk: \
	Q6KT1(SI, Z2, Z4, PF) \
	Q6KT1(R8, Z3, Z5, PF) \
	Q6KT1(R9, Z8, Z6, PF) \
	Q6KT1(BX, Z9, Z7, PF) \
	ADDQ $112, R10 \
	ADDQ $112, R12 \
	ADDQ $192, R11 \
	ADDQ $16, R14 \
	DECQ R13 \
	JNZ blk \
	STEP4T($3392) \
	DECQ CX \
	JNZ super \
done: \
	STORE4

// func tileQ6Kx1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ6Kx1np on four tiles at once (tile + k·stride, results at out[16k]), as
// tileQ4x1mnp.
TEXT ·tileQ6Kx1mnp(SB), NOSPLIT, $0-48
	TILEQ6KX1M(PFNONE, PFOFF)

// PFQ6KBLK is the Q3_K four-tile kernel's prefetch at each pair of blocks: three lines
// of each tile 2048 bytes ahead.
#define PFQ6KBLK PF4TX3(2048)

// func tileQ6Kx1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ6Kx1mnp with every quant line prefetched PFD ahead just before its load and, at
// each super-block, the five lines PFD past its head (tileQ4Kx1mq's shape, measured
// with it there); the same sums.
TEXT ·tileQ6Kx1mq(SB), NOSPLIT, $0-48
	TILEQ6KX1M(PFHEADQ, PFON)

// The Q3_K kernels: Q6_K's with 3-bit quants (tile.go: Q6_K's head, then per pair of
// 16-element blocks a crumb word each and one word of their high bits). A chunk c of a
// block (elements 4c…4c+3 of each row) is its crumb word's bits 2c…2c+1, plus 4 where
// the high-bit word has bit c (the pair's first block) or 4+c (its second) set:
// VPTESTMB against q3bits + 64k (the bytes 1 << k) into a mask, then a masked VPADDB.
// Z29 holds the 0x03 bytes, Z26 the 0x04 bytes, Z25 the pair's high-bit word, Z16 the
// block's crumbs; the chunks go where Q6DOT1 and Q6DOT4 take them (Z19, Z21, Z23, Z24).

DATA q3bits<>+0(SB)/8, $0x0101010101010101
DATA q3bits<>+8(SB)/8, $0x0101010101010101
DATA q3bits<>+16(SB)/8, $0x0101010101010101
DATA q3bits<>+24(SB)/8, $0x0101010101010101
DATA q3bits<>+32(SB)/8, $0x0101010101010101
DATA q3bits<>+40(SB)/8, $0x0101010101010101
DATA q3bits<>+48(SB)/8, $0x0101010101010101
DATA q3bits<>+56(SB)/8, $0x0101010101010101
DATA q3bits<>+64(SB)/8, $0x0202020202020202
DATA q3bits<>+72(SB)/8, $0x0202020202020202
DATA q3bits<>+80(SB)/8, $0x0202020202020202
DATA q3bits<>+88(SB)/8, $0x0202020202020202
DATA q3bits<>+96(SB)/8, $0x0202020202020202
DATA q3bits<>+104(SB)/8, $0x0202020202020202
DATA q3bits<>+112(SB)/8, $0x0202020202020202
DATA q3bits<>+120(SB)/8, $0x0202020202020202
DATA q3bits<>+128(SB)/8, $0x0404040404040404
DATA q3bits<>+136(SB)/8, $0x0404040404040404
DATA q3bits<>+144(SB)/8, $0x0404040404040404
DATA q3bits<>+152(SB)/8, $0x0404040404040404
DATA q3bits<>+160(SB)/8, $0x0404040404040404
DATA q3bits<>+168(SB)/8, $0x0404040404040404
DATA q3bits<>+176(SB)/8, $0x0404040404040404
DATA q3bits<>+184(SB)/8, $0x0404040404040404
DATA q3bits<>+192(SB)/8, $0x0808080808080808
DATA q3bits<>+200(SB)/8, $0x0808080808080808
DATA q3bits<>+208(SB)/8, $0x0808080808080808
DATA q3bits<>+216(SB)/8, $0x0808080808080808
DATA q3bits<>+224(SB)/8, $0x0808080808080808
DATA q3bits<>+232(SB)/8, $0x0808080808080808
DATA q3bits<>+240(SB)/8, $0x0808080808080808
DATA q3bits<>+248(SB)/8, $0x0808080808080808
DATA q3bits<>+256(SB)/8, $0x1010101010101010
DATA q3bits<>+264(SB)/8, $0x1010101010101010
DATA q3bits<>+272(SB)/8, $0x1010101010101010
DATA q3bits<>+280(SB)/8, $0x1010101010101010
DATA q3bits<>+288(SB)/8, $0x1010101010101010
DATA q3bits<>+296(SB)/8, $0x1010101010101010
DATA q3bits<>+304(SB)/8, $0x1010101010101010
DATA q3bits<>+312(SB)/8, $0x1010101010101010
DATA q3bits<>+320(SB)/8, $0x2020202020202020
DATA q3bits<>+328(SB)/8, $0x2020202020202020
DATA q3bits<>+336(SB)/8, $0x2020202020202020
DATA q3bits<>+344(SB)/8, $0x2020202020202020
DATA q3bits<>+352(SB)/8, $0x2020202020202020
DATA q3bits<>+360(SB)/8, $0x2020202020202020
DATA q3bits<>+368(SB)/8, $0x2020202020202020
DATA q3bits<>+376(SB)/8, $0x2020202020202020
DATA q3bits<>+384(SB)/8, $0x4040404040404040
DATA q3bits<>+392(SB)/8, $0x4040404040404040
DATA q3bits<>+400(SB)/8, $0x4040404040404040
DATA q3bits<>+408(SB)/8, $0x4040404040404040
DATA q3bits<>+416(SB)/8, $0x4040404040404040
DATA q3bits<>+424(SB)/8, $0x4040404040404040
DATA q3bits<>+432(SB)/8, $0x4040404040404040
DATA q3bits<>+440(SB)/8, $0x4040404040404040
DATA q3bits<>+448(SB)/8, $0x8080808080808080
DATA q3bits<>+456(SB)/8, $0x8080808080808080
DATA q3bits<>+464(SB)/8, $0x8080808080808080
DATA q3bits<>+472(SB)/8, $0x8080808080808080
DATA q3bits<>+480(SB)/8, $0x8080808080808080
DATA q3bits<>+488(SB)/8, $0x8080808080808080
DATA q3bits<>+496(SB)/8, $0x8080808080808080
DATA q3bits<>+504(SB)/8, $0x8080808080808080
GLOBL q3bits<>(SB), RODATA|NOPTR, $512

// Q3MASKS sets Z29 and Z26 (R9 is clobbered).
#define Q3MASKS \
	MOVL $0x03030303, R9 \
	VPBROADCASTD R9, Z29 \
	MOVL $0x04040404, R9 \
	VPBROADCASTD R9, Z26

// CRUMBS splits the crumb word in Z16 into its four chunks of two-bit quants (Z19,
// Z21, Z23, Z24) with M the 0x03 bytes.
#define CRUMBS(M) \
	VPANDQ M, Z16, Z19 \
	VPSRLW $2, Z16, Z21 \
	VPSRLW $4, Z16, Z23 \
	VPSRLW $6, Z16, Z24 \
	VPANDQ M, Z21, Z21 \
	VPANDQ M, Z23, Z23 \
	VPANDQ M, Z24, Z24

// Q3CHUNKS rebuilds the four chunks of block h (0 or 1) of the pair from its crumbs
// (Z16) and the pair's high bits (Z25), the masks at 256h(B).
#define Q3CHUNKS(B, h) \
	CRUMBS(Z29) \
	VPTESTMB (256*h)(B), Z25, K1 \
	VPTESTMB (256*h+64)(B), Z25, K2 \
	VPTESTMB (256*h+128)(B), Z25, K3 \
	VPTESTMB (256*h+192)(B), Z25, K4 \
	VPADDB Z26, Z19, K1, Z19 \
	VPADDB Z26, Z21, K2, Z21 \
	VPADDB Z26, Z23, K3, Z23 \
	VPADDB Z26, Z24, K4, Z24

// Q3K_SUPER starts a Q3_K super-block at SI: Z28 its fp16 d, R14 its scales, SI its
// first pair, R13 the pair count.
#define Q3K_SUPER \
	VCVTPH2PS (SI), Z28 \
	LEAQ 64(SI), R14 \
	ADDQ $320, SI \
	MOVQ $8, R13

// Q3BLK4 runs block h of the pair at SI (high bits in Z25) against four tokens (DI).
#define Q3BLK4(h) \
	LEAQ 64(DI), R12 \
	STARTS4 \
	VMOVDQU64 (64*h)(SI), Z16 \
	Q3CHUNKS(R9, h) \
	Q6DOT4 \
	Q6_SCALE \
	FMA4 \
	ADDQ $16, R14 \
	ADDQ $112, DI

// func tileQ3Kx4(nu int, tile, act *byte, out *[64]float32)
//
// Q3_K tiles (per 256-element super-block: Q6_K's 320-byte head, then eight pairs of
// 16-element blocks of 192 bytes) times four tokens (activation blocks of 4·16+48
// bytes).
TEXT ·tileQ3Kx4(SB), NOSPLIT, $0-32
	ARGS4
	MASKS
	Q3MASKS
	LEAQ q3bits<>(SB), R9
	TESTQ CX, CX
	JZ q3kx4_done
q3kx4_super:
	Q3K_SUPER
q3kx4_pair:
	PREF3(PFON)
	VMOVDQU64 128(SI), Z25
	Q3BLK4(0)
	Q3BLK4(1)
	ADDQ $192, SI
	DECQ R13
	JNZ q3kx4_pair
	DECQ CX
	JNZ q3kx4_super
q3kx4_done:
	STORE4

// Q3BLK1 is Q3BLK4 for one token (R10, R12).
#define Q3BLK1(h) \
	VPBROADCASTD 16(R12), Z0 \
	VPXORD Z1, Z1, Z1 \
	VMOVDQU64 (64*h)(SI), Z16 \
	Q3CHUNKS(R9, h) \
	Q6DOT1 \
	Q6_SCALE \
	FMA1 \
	ADDQ $16, R14 \
	ADDQ $112, R10 \
	ADDQ $112, R12

// func tileQ3Kx1(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ3Kx4 for token tok (0–3) alone. The macro is its body with prefetch PF: PFON here,
// PFOFF in the …np twin below.
#define TILEQ3KX1(PF) \
	ARGS1(16) \
	MASKS \
	Q3MASKS \
	LEAQ q3bits<>(SB), R9 \
	TESTQ CX, CX \
	JZ q3kx1_done \
q3kx1_super: \
	Q3K_SUPER \
q3kx1_pair: \
	PREF3(PF) \
	VMOVDQU64 128(SI), Z25 \
	Q3BLK1(0) \
	Q3BLK1(1) \
	ADDQ $192, SI \
	DECQ R13 \
	JNZ q3kx1_pair \
	DECQ CX \
	JNZ q3kx1_super \
q3kx1_done: \
	STORE1

TEXT ·tileQ3Kx1(SB), NOSPLIT, $0-40
	TILEQ3KX1(PFON)

// func tileQ3Kx1np(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ3Kx1 without software prefetch (PFOFF).
TEXT ·tileQ3Kx1np(SB), NOSPLIT, $0-40
	TILEQ3KX1(PFOFF)

// Q3KT1 runs block h of pair R11/192 of the Q3_K super-block of the tile at P against
// one token (R10, R12) into ACC (its scale through R14, its d in D; the masks at DX).
#define Q3KT1(P, h, D, ACC) \
	VPBROADCASTD 16(R12), Z0 \
	VPXORD Z1, Z1, Z1 \
	VMOVDQU64 (320+64*h)(P)(R11*1), Z16 \
	VMOVDQU64 448(P)(R11*1), Z25 \
	Q3CHUNKS(DX, h) \
	Q6DOT1 \
	KT1FMA(P, D, ACC)

// Q3KBLKT runs block h of the pair of the four tiles and steps to the next block.
#define Q3KBLKT(h) \
	Q3KT1(SI, h, Z2, Z4) \
	Q3KT1(R8, h, Z3, Z5) \
	Q3KT1(R9, h, Z8, Z6) \
	Q3KT1(BX, h, Z9, Z7) \
	ADDQ $112, R10 \
	ADDQ $112, R12 \
	ADDQ $16, R14

// TILEQ3KX1M(PFSUPER, PFLOOP) is the body of the Q3_K four-tile kernels, with PFSUPER run at
// each super-block and PFLOOP at each step of its inner loop (prefetches, or PFNONE).
#define TILEQ3KX1M(PFSUPER, PFLOOP) \
	MASKS \
	Q3MASKS \
	ARGS1M(16) \
	LEAQ q3bits<>(SB), DX \
	TESTQ CX, CX \
	JZ done \
super: \
	PFSUPER \
	XORQ R11, R11 \
	XORQ R14, R14 \
	MOVQ $8, R13 \
	KD4 \
pair: \
	PFLOOP \
	Q3KBLKT(0) \
	Q3KBLKT(1) \
	ADDQ $192, R11 \
	DECQ R13 \
	JNZ pair \
	STEP4T($1856) \
	DECQ CX \
	JNZ super \
done: \
	STORE4

// func tileQ3Kx1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ3Kx1np on four tiles at once (tile + k·stride, results at out[16k]), as
// tileQ6Kx1mnp.
TEXT ·tileQ3Kx1mnp(SB), NOSPLIT, $0-48
	TILEQ3KX1M(PFNONE, PFNONE)

// PFQ3KSUPER is tileQ3Kx1m's prefetch at each super-block, 2048 bytes on: the five
// lines of a unit's 29 that its pairs of blocks (PFQ6KBLK, three lines each: eight
// cover 1536 bytes) leave.
#define PFQ3KSUPER PF4T5(3584)

// func tileQ3Kx1m(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ3Kx1mnp reading every line of the four tiles 2048 bytes ahead; the same sums.
TEXT ·tileQ3Kx1m(SB), NOSPLIT, $0-48
	TILEQ3KX1M(PFQ3KSUPER, PFQ6KBLK)

// The Q2_K kernels (tile.go: per super-block 16 fp16 d, 16 fp16 dmin, 16×16 bytes of
// scale and min, then a crumb word per 16-element block): the chunks as Q3_K's without
// the high bits, then per block acc = fma(float32(Σ q·y), (sc·d)·d_t, acc) and
// acc = fma(m·(−dmin), m_t, acc) as Q4_K's. Z30 holds the 0x03 bytes here.

// Q2K_HEAD reads a Q2_K super-block's fp16 d and dmin (Z28, −dmin in Z29) and points
// R14 at its scale bytes and SI at its quants; R13 counts its sixteen blocks.
#define Q2K_HEAD \
	VCVTPH2PS (SI), Z28 \
	VCVTPH2PS 32(SI), Z29 \
	VPXORD Z27, Z29, Z29 \
	LEAQ 64(SI), R14 \
	ADDQ $320, SI \
	MOVQ $16, R13

// Q2K_SCALE turns the block's sixteen scale-and-min bytes at memory operand m into row
// scales d·sc (Z10) and min factors −dmin·m (Z15).
#define Q2K_SCALE(m) \
	VPMOVZXBD m, Z15 \
	VPANDD Z31, Z15, Z10 \
	VPSRLD $4, Z15, Z15 \
	VCVTDQ2PS Z10, Z10 \
	VMULPS Z28, Z10, Z10 \
	VCVTDQ2PS Z15, Z15 \
	VMULPS Z29, Z15, Z15

// Q2MASK sets Z30 to the 0x03 bytes.
#define Q2MASK \
	MOVL $0x03030303, R9 \
	VPBROADCASTD R9, Z30

// func tileQ2Kx4(nu int, tile, act *byte, out *[64]float32)
//
// Q2_K tiles times four tokens (activation blocks of 4·16+48 bytes).
TEXT ·tileQ2Kx4(SB), NOSPLIT, $0-32
	ARGS4
	MASKS
	Q2MASK
	TESTQ CX, CX
	JZ q2kx4_done
q2kx4_super:
	Q2K_HEAD
q2kx4_blk:
	PREFETCHT0 (PFD)(SI)
	LEAQ 64(DI), R12
	STARTS4
	VMOVDQU64 (SI), Z16
	CRUMBS(Z30)
	Q6DOT4
	Q2K_SCALE((R14))
	FMA4
	MIN4
	ADDQ $64, SI
	ADDQ $16, R14
	ADDQ $112, DI
	DECQ R13
	JNZ q2kx4_blk
	DECQ CX
	JNZ q2kx4_super
q2kx4_done:
	STORE4

// func tileQ2Kx1(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ2Kx4 for token tok (0–3) alone. The macro is its body with prefetch PF: PFON here,
// PFOFF in the …np twin below.
#define TILEQ2KX1(PF) \
	ARGS1(16) \
	MASKS \
	Q2MASK \
	TESTQ CX, CX \
	JZ q2kx1_done \
q2kx1_super: \
	Q2K_HEAD \
q2kx1_blk: \
	PF((PFD)(SI)) \
	VPBROADCASTD 16(R12), Z0 \
	VPXORD Z1, Z1, Z1 \
	VMOVDQU64 (SI), Z16 \
	CRUMBS(Z30) \
	Q6DOT1 \
	Q2K_SCALE((R14)) \
	FMA1 \
	MIN1 \
	ADDQ $64, SI \
	ADDQ $16, R14 \
	ADDQ $112, R10 \
	ADDQ $112, R12 \
	DECQ R13 \
	JNZ q2kx1_blk \
	DECQ CX \
	JNZ q2kx1_super \
q2kx1_done: \
	STORE1

TEXT ·tileQ2Kx1(SB), NOSPLIT, $0-40
	TILEQ2KX1(PFON)

// func tileQ2Kx1np(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ2Kx1 without software prefetch (PFOFF).
TEXT ·tileQ2Kx1np(SB), NOSPLIT, $0-40
	TILEQ2KX1(PFOFF)

// Q2KT1 runs block R11/64 of the Q2_K super-block of the tile at P against one token
// (R10, R12) into ACC, its scale bytes through R14 and its super-block's d and −dmin
// in D and DM.
#define Q2KT1(P, D, DM, ACC) \
	VPBROADCASTD 16(R12), Z0 \
	VPXORD Z1, Z1, Z1 \
	VMOVDQU64 320(P)(R11*1), Z16 \
	CRUMBS(Z30) \
	Q6DOT1 \
	VPMOVZXBD 64(P)(R14*1), Z15 \
	VPANDD Z31, Z15, Z10 \
	VPSRLD $4, Z15, Z15 \
	VCVTDQ2PS Z10, Z10 \
	VMULPS D, Z10, Z10 \
	VCVTDQ2PS Z15, Z15 \
	VMULPS DM, Z15, Z15 \
	VCVTDQ2PS Z0, Z0 \
	VMULPS.BCST (R12), Z10, Z11 \
	VFMADD231PS Z11, Z0, ACC \
	VFMADD231PS.BCST 32(R12), Z15, ACC

// Q2KDM reads the fp16 d and dmin of the super-block of the tile at P into D and DM
// (negated).
#define Q2KDM(P, D, DM) \
	VCVTPH2PS (P), D \
	VCVTPH2PS 32(P), DM \
	VPXORD Z27, DM, DM

// TILEQ2KX1M(PFSUPER, PFLOOP) is the body of the Q2_K four-tile kernels, with PFSUPER run at
// each super-block and PFLOOP at each step of its inner loop (prefetches, or PFNONE).
#define TILEQ2KX1M(PFSUPER, PFLOOP) \
	MASKS \
	Q2MASK \
	ARGS1M(16) \
	TESTQ CX, CX \
	JZ done \
super: \
	PFSUPER \
	XORQ R11, R11 \
	XORQ R14, R14 \
	MOVQ $16, R13 \
	Q2KDM(SI, Z2, Z3) \
	Q2KDM(R8, Z8, Z9) \
	Q2KDM(R9, Z12, Z13) \
	Q2KDM(BX, Z14, Z17) \
blk: \
	PFLOOP \
	Q2KT1(SI, Z2, Z3, Z4) \
	Q2KT1(R8, Z8, Z9, Z5) \
	Q2KT1(R9, Z12, Z13, Z6) \
	Q2KT1(BX, Z14, Z17, Z7) \
	ADDQ $112, R10 \
	ADDQ $112, R12 \
	ADDQ $64, R11 \
	ADDQ $16, R14 \
	DECQ R13 \
	JNZ blk \
	STEP4T($1344) \
	DECQ CX \
	JNZ super \
done: \
	STORE4

// func tileQ2Kx1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ2Kx1np on four tiles at once (tile + k·stride, results at out[16k]), a block of
// each in turn, as tileQ6Kx1mnp; the four super-blocks' d and −dmin in Z2, Z3, Z8,
// Z9, Z12, Z13, Z14, Z17.
TEXT ·tileQ2Kx1mnp(SB), NOSPLIT, $0-48
	TILEQ2KX1M(PFNONE, PFNONE)

// PFQ2KSUPER and PFQ2KLOOP are tileQ2Kx1m's prefetches, 2048 bytes on: one line a
// block (sixteen cover 1024 bytes), the other five of a unit's 21 at each super-block.
#define PFQ2KSUPER PF4T5(3072)

#define PFQ2KLOOP \
	PF4TX(2048)

// func tileQ2Kx1m(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ2Kx1mnp reading every line of the four tiles 2048 bytes ahead; the same sums.
TEXT ·tileQ2Kx1m(SB), NOSPLIT, $0-48
	TILEQ2KX1M(PFQ2KSUPER, PFQ2KLOOP)

// The Q4_1, Q5_0 and Q5_1 kernels: Q4_0's per pair of 32-element blocks (tile.go), the
// 5-bit types adding each nibble's high bit as 16 (VPTESTMB of the block's high-bit
// word, loaded in Z25, against the byte 1 << c or 1 << (4+c) of q3bits, at R9; a masked
// VPADDB of the 0x10 bytes in Z26), Q4_1 and Q5_1 adding each block's mins
// (acc = fma(m, m_t, acc) after the scale's FMA, as Q4_K's).

// LEGMASKS sets Z26 to the 0x10 bytes and R9 to q3bits.
#define LEGMASKS \
	MOVL $0x10101010, R9 \
	VPBROADCASTD R9, Z26 \
	LEAQ q3bits<>(SB), R9

// HI5(c, A, B) adds 16 to the low (A) and high (B) nibbles of word c whose high bits
// are set in Z25.
#define HI5(c, A, B) HIBITS((64*c)(R9), (256+64*c)(R9), Z25, Z26, A, B)

// Q5C4L is Q4C4 with the high bits (HI5).
#define Q5C4L(o, c, A, B) \
	NIB2(o, c, A, B) \
	HI5(c, A, B) \
	DOTC4(c, A, B)

// W4Q4(q) and W4Q5(q, h) run the four nibble words of the block at q(SI) (Q5: its
// high-bit word at h(SI)) against four tokens into Z0–Z3.
#define W4Q4(q) \
	Q4C4(q, 0, Z16, Z17) \
	Q4C4(q, 1, Z18, Z19) \
	Q4C4(q, 2, Z20, Z21) \
	Q4C4(q, 3, Z22, Z23)

#define W4Q5(q, h) \
	VMOVDQU64 h(SI), Z25 \
	Q5C4L(q, 0, Z16, Z17) \
	Q5C4L(q, 1, Z18, Z19) \
	Q5C4L(q, 2, Z20, Z21) \
	Q5C4L(q, 3, Z22, Z23)

// MINS4(m) adds the block's fp16 row mins at m(SI) times each token's min sum;
// NOMINS adds nothing.
#define MINS4(m) \
	VCVTPH2PS m(SI), Z15 \
	MIN4
#define NOMINS

// LBLK4 runs one block against four tokens: WORDS (W4Q4, W4Q5), its scales at sc(SI),
// MINS (MINS4, NOMINS), then steps DI to the next activation block.
#define LBLK4(WORDS, sc, MINS) \
	LEAQ 128(DI), R12 \
	STARTS4 \
	WORDS \
	VCVTPH2PS sc(SI), Z10 \
	FMA4 \
	MINS \
	ADDQ $176, DI

// TILELX4(SETUP, BLK0, BLK1, n) is the body of a four-token kernel over units of n
// bytes: SETUP (LEGMASKS or nothing), then each unit's two blocks (LBLK4).
#define TILELX4(SETUP, BLK0, BLK1, n) \
	ARGS4 \
	MASKS \
	SETUP \
	TESTQ CX, CX \
	JZ lx4_done \
lx4_loop: \
	PREF6(PFON) \
	BLK0 \
	BLK1 \
	ADDQ $n, SI \
	DECQ CX \
	JNZ lx4_loop \
lx4_done: \
	STORE4

// func tileQ41x4(nu int, tile, act *byte, out *[64]float32)
//
// Q4_1 tiles (per pair of blocks: 2×256 nibble bytes, 2×16 fp16 d, 2×16 fp16 m) times
// four tokens.
TEXT ·tileQ41x4(SB), NOSPLIT, $0-32
	TILELX4(NOMINS, LBLK4(W4Q4(0), 512, MINS4(576)), LBLK4(W4Q4(256), 544, MINS4(608)), 640)

// func tileQ50x4(nu int, tile, act *byte, out *[64]float32)
//
// Q5_0 tiles (per pair of blocks: 2×256 nibble bytes, 2×64 high-bit bytes, 2×16 fp16
// d) times four tokens.
TEXT ·tileQ50x4(SB), NOSPLIT, $0-32
	TILELX4(LEGMASKS, LBLK4(W4Q5(0, 512), 640, NOMINS), LBLK4(W4Q5(256, 576), 672, NOMINS), 704)

// func tileQ51x4(nu int, tile, act *byte, out *[64]float32)
//
// Q5_1 tiles (Q5_0's, then 2×16 fp16 m) times four tokens.
TEXT ·tileQ51x4(SB), NOSPLIT, $0-32
	TILELX4(LEGMASKS, LBLK4(W4Q5(0, 512), 640, MINS4(704)), LBLK4(W4Q5(256, 576), 672, MINS4(736)), 768)

// Q5C1L is Q4C1 with the high bits (HI5).
#define Q5C1L(o, c, A, B) NIBC1((o+64*c)(SI), c, A, B, HI5)

// W1Q4 and W1Q5 are W4Q4 and W4Q5 for one token (R10; int sums Z0 and Z1).
#define W1Q4(q) \
	Q4C1(q, 0, Z16, Z17) \
	Q4C1(q, 1, Z18, Z19) \
	Q4C1(q, 2, Z20, Z21) \
	Q4C1(q, 3, Z22, Z23)

#define W1Q5(q, h) \
	VMOVDQU64 h(SI), Z25 \
	Q5C1L(q, 0, Z16, Z17) \
	Q5C1L(q, 1, Z18, Z19) \
	Q5C1L(q, 2, Z20, Z21) \
	Q5C1L(q, 3, Z22, Z23)

// MINS1 is MINS4 for one token.
#define MINS1(m) \
	VCVTPH2PS m(SI), Z15 \
	MIN1

// LBLK1 is LBLK4 for one token (R10, R12 step instead of DI).
#define LBLK1(WORDS, sc, MINS) \
	VPBROADCASTD 16(R12), Z0 \
	VPXORD Z1, Z1, Z1 \
	WORDS \
	VPADDD Z1, Z0, Z0 \
	VCVTPH2PS sc(SI), Z10 \
	FMA1 \
	MINS \
	ADDQ $176, R10 \
	ADDQ $176, R12

// TILELX1 is TILELX4 for one token, with prefetch PF (PFON, or PFOFF in the …np
// kernels).
#define TILELX1(PF, SETUP, BLK0, BLK1, n) \
	ARGS1(32) \
	MASKS \
	SETUP \
	TESTQ CX, CX \
	JZ lx1_done \
lx1_loop: \
	PREF6(PF) \
	BLK0 \
	BLK1 \
	ADDQ $n, SI \
	DECQ CX \
	JNZ lx1_loop \
lx1_done: \
	STORE1

// func tileQ41x1(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ41x4 for token tok (0–3) alone; the …np twin without software prefetch (and
// likewise for Q5_0 and Q5_1 below).
#define TILEQ41X1(PF) TILELX1(PF, NOMINS, LBLK1(W1Q4(0), 512, MINS1(576)), LBLK1(W1Q4(256), 544, MINS1(608)), 640)

TEXT ·tileQ41x1(SB), NOSPLIT, $0-40
	TILEQ41X1(PFON)

// func tileQ41x1np(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ41x1np(SB), NOSPLIT, $0-40
	TILEQ41X1(PFOFF)

// func tileQ41x1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ41x1 on four tiles at once (tile + k·stride, results at out[16k]), 64 bytes of
// each in turn, the activations and token sums broadcast once for the four tiles
// (tileQ4x1mq's walk with each block's mins after its scales), without software
// prefetch.
TEXT ·tileQ41x1mnp(SB), NOSPLIT, $0-48
	MASKS
	X1MUNITS(UNITQMNP, Q40QBLKNP, 256, 512, 544, $640)

// func tileQ41x1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ41x1mnp with each line prefetched PFD ahead just before it is read (the nibble
// lines non-temporally, as tileQ4x1mq), for the quarters of a band on AMD Zen 5.
TEXT ·tileQ41x1mq(SB), NOSPLIT, $0-48
	MASKS
	X1MUNITS(UNITQM, Q40QBLK, 256, 512, 544, $640)

#define TILEQ50X1(PF) TILELX1(PF, LEGMASKS, LBLK1(W1Q5(0, 512), 640, NOMINS), LBLK1(W1Q5(256, 576), 672, NOMINS), 704)

// func tileQ50x1(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ50x1(SB), NOSPLIT, $0-40
	TILEQ50X1(PFON)

// func tileQ50x1np(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ50x1np(SB), NOSPLIT, $0-40
	TILEQ50X1(PFOFF)

#define TILEQ51X1(PF) TILELX1(PF, LEGMASKS, LBLK1(W1Q5(0, 512), 640, MINS1(704)), LBLK1(W1Q5(256, 576), 672, MINS1(736)), 768)

// func tileQ51x1(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ51x1(SB), NOSPLIT, $0-40
	TILEQ51X1(PFON)

// func tileQ51x1np(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ51x1np(SB), NOSPLIT, $0-40
	TILEQ51X1(PFOFF)

// Q5SETUP sets what the Q5_0 and Q5_1 four-tile kernels need beside MASKS: LEGMASKS'
// 16s in Z26 and its high-bit table moved to R13 (ARGS1M takes R9 for a tile).
#define Q5SETUP \
	MASKS \
	LEGMASKS \
	MOVQ R9, R13

// func tileQ50x1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ50x1 on four tiles at once (tile + k·stride, results at out[16k]), 64 bytes of
// each in turn, the activations and token scales broadcast once for the four tiles
// (tileQ4x1mq's walk with the high bits, NIBQ5), without software prefetch.
TEXT ·tileQ50x1mnp(SB), NOSPLIT, $0-48
	Q5SETUP
	X1MUNITS(UNITQNP, Q50QBLKNP, 256, 640, 672, $704)

// func tileQ50x1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ50x1mnp with each line prefetched PFD ahead just before it is read, for the
// quarters of a band on AMD Zen 5.
TEXT ·tileQ50x1mq(SB), NOSPLIT, $0-48
	Q5SETUP
	X1MUNITS(UNITQ, Q50QBLK, 256, 640, 672, $704)

// func tileQ51x1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ50x1mnp for Q5_1: each block's mins after its scales (UNITQM's FMATQ4M).
TEXT ·tileQ51x1mnp(SB), NOSPLIT, $0-48
	Q5SETUP
	X1MUNITS(UNITQMNP, Q50QBLKNP, 256, 640, 672, $768)

// func tileQ51x1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ51x1mnp with each line prefetched PFD ahead just before it is read (AMD Zen 5).
TEXT ·tileQ51x1mq(SB), NOSPLIT, $0-48
	Q5SETUP
	X1MUNITS(UNITQM, Q50QBLK, 256, 640, 672, $768)

// Q8C4 multiplies chunk c of the Q8_0 block at o(SI) with four tokens (DI).
#define Q8C4(o, c) \
	PREFETCHT0 (PFD+o+64*c)(SI) \
	VMOVDQU32 (o+64*c)(SI), Z8 \
	VPDPBUSD.BCST (4*c)(DI), Z8, Z0 \
	VPDPBUSD.BCST (32+4*c)(DI), Z8, Z1 \
	VPDPBUSD.BCST (64+4*c)(DI), Z8, Z2 \
	VPDPBUSD.BCST (96+4*c)(DI), Z8, Z3

// Q80BLK4 runs one Q8_0 block (quants at q(SI), scales at sc(SI)) against four tokens
// and steps DI to the next activation block.
#define Q80BLK4(q, sc) \
	LEAQ 128(DI), R12 \
	STARTS4 \
	Q8C4(q, 0) \
	Q8C4(q, 1) \
	Q8C4(q, 2) \
	Q8C4(q, 3) \
	Q8C4(q, 4) \
	Q8C4(q, 5) \
	Q8C4(q, 6) \
	Q8C4(q, 7) \
	VCVTPH2PS sc(SI), Z10 \
	FMA4 \
	ADDQ $176, DI

// Q80BLK1 is Q80BLK4 for one token (R10, R12 step instead of DI).
#define Q80BLK1(q, sc, PF) \
	VPBROADCASTD 16(R12), Z0 \
	VPXORD Z1, Z1, Z1 \
	VMOVDQU32 (q)(SI), Z16 \
	VMOVDQU32 (q+64)(SI), Z17 \
	VMOVDQU32 (q+128)(SI), Z18 \
	VMOVDQU32 (q+192)(SI), Z19 \
	VMOVDQU32 (q+256)(SI), Z20 \
	VMOVDQU32 (q+320)(SI), Z21 \
	VMOVDQU32 (q+384)(SI), Z22 \
	VMOVDQU32 (q+448)(SI), Z23 \
	PF((PFD+q)(SI)) \
	PF((PFD+q+64)(SI)) \
	PF((PFD+q+128)(SI)) \
	PF((PFD+q+192)(SI)) \
	PF((PFD+q+256)(SI)) \
	PF((PFD+q+320)(SI)) \
	PF((PFD+q+384)(SI)) \
	PF((PFD+q+448)(SI)) \
	PF((PFD+sc)(SI)) \
	VPDPBUSD.BCST (R10), Z16, Z0 \
	VPDPBUSD.BCST 4(R10), Z17, Z1 \
	VPDPBUSD.BCST 8(R10), Z18, Z0 \
	VPDPBUSD.BCST 12(R10), Z19, Z1 \
	VPDPBUSD.BCST 16(R10), Z20, Z0 \
	VPDPBUSD.BCST 20(R10), Z21, Z1 \
	VPDPBUSD.BCST 24(R10), Z22, Z0 \
	VPDPBUSD.BCST 28(R10), Z23, Z1 \
	VPADDD Z1, Z0, Z0 \
	VCVTPH2PS sc(SI), Z10 \
	FMA1 \
	ADDQ $176, R10 \
	ADDQ $176, R12

// func tileQ8x4(nu int, tile, act *byte, out *[64]float32)
//
// Q8_0 tiles (per pair of 32-element blocks: 2×8 chunks of 64 bytes, chunk c holding
// row r's bytes 4c…4c+3 at 4r, then 2×16 fp16 scales; 1088 bytes) times four tokens.
TEXT ·tileQ8x4(SB), NOSPLIT, $0-32
	ARGS4
	TESTQ CX, CX
	JZ q8x4_done
q8x4_block:
	Q80BLK4(0, 1024)
	Q80BLK4(512, 1056)
	ADDQ $1088, SI
	DECQ CX
	JNZ q8x4_block
q8x4_done:
	STORE4

// func tileQ8x1(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ8x4 for token tok (0–3) alone. The macro is its body with prefetch PF: PFON here,
// PFOFF in the …np twin below.
#define TILEQ8X1(PF) \
	ARGS1(32) \
	TESTQ CX, CX \
	JZ q8x1_done \
q8x1_block: \
	Q80BLK1(0, 1024, PF) \
	Q80BLK1(512, 1056, PF) \
	ADDQ $1088, SI \
	DECQ CX \
	JNZ q8x1_block \
q8x1_done: \
	STORE1

TEXT ·tileQ8x1(SB), NOSPLIT, $0-40
	TILEQ8X1(PFON)

// func tileQ8x1np(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ8x1 without software prefetch (PFOFF).
TEXT ·tileQ8x1np(SB), NOSPLIT, $0-40
	TILEQ8X1(PFOFF)

// Q8C4T multiplies chunk c of the Q8_0 block at q of the four tiles (SI, R8, R9, BX)
// with one token's activations (R10) into their int sums I0–I3.
#define Q8C4T(q, c, I0, I1, I2, I3) \
	VPBROADCASTD (4*c)(R10), Z24 \
	VMOVDQU32 (q+64*c)(SI), Z16 \
	VMOVDQU32 (q+64*c)(R8), Z17 \
	VMOVDQU32 (q+64*c)(R9), Z18 \
	VMOVDQU32 (q+64*c)(BX), Z19 \
	VPDPBUSD Z24, Z16, I0 \
	VPDPBUSD Z24, Z17, I1 \
	VPDPBUSD Z24, Z18, I2 \
	VPDPBUSD Z24, Z19, I3

// Q80SUMS4T sums one Q8_0 block (quants at q) of the four tiles against one token (R10,
// R12) into I0–I3, 64 bytes of each tile in turn (integer sums: Q80BLK1's, in any order).
#define Q80SUMS4T(q, I0, I1, I2, I3) Q80SUMS(Q8C4T, q, I0, I1, I2, I3)

// Q80SUMS is a Q8_0 block's sums of the four tiles with CHUNK(q, c, I0…I3) for each
// of its eight 64-byte chunks c.
#define Q80SUMS(CHUNK, q, I0, I1, I2, I3) \
	STARTT(I0, I1, I2, I3) \
	CHUNK(q, 0, I0, I1, I2, I3) \
	CHUNK(q, 1, I0, I1, I2, I3) \
	CHUNK(q, 2, I0, I1, I2, I3) \
	CHUNK(q, 3, I0, I1, I2, I3) \
	CHUNK(q, 4, I0, I1, I2, I3) \
	CHUNK(q, 5, I0, I1, I2, I3) \
	CHUNK(q, 6, I0, I1, I2, I3) \
	CHUNK(q, 7, I0, I1, I2, I3)

// func tileQ8x1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ8x1np on four tiles at once (tile + k·stride, results at out[16k]), reading every
// tile strictly forward: 64 bytes of each tile in turn, both blocks' sums before the
// unit's scale line (Q80BLK1's float operations per tile and block, in order). One tile
// from each quarter of a band, four streams at once (AMD). Per llama-1b Q8_0 token, the
// scale line read after the first block (ahead of the second) cost 7–16 %, and 512 bytes
// of a tile before the next another 4.5–7.5 %.
TEXT ·tileQ8x1mnp(SB), NOSPLIT, $0-48
	X1MUNITS(UNIT4T, Q80SUMS4T, 512, 1024, 1056, $1088)

// Q8Q1 multiplies the 64 quant bytes at o(P) (prefetched PFD ahead) with one token's
// broadcast activations (Z24) into the int sum S, through R.
#define Q8Q1(o, P, R, S) \
	PREFETCHT0 (PFD+o)(P) \
	VMOVDQU32 o(P), R \
	VPDPBUSD Z24, R, S

// Q8Q4 is Q8Q1 for chunk c of the block at o in each of the four tiles.
#define Q8Q4(o, c, S0, S1, S2, S3) \
	VPBROADCASTD (4*c)(R10), Z24 \
	Q8Q1(o+64*c, SI, Z16, S0) \
	Q8Q1(o+64*c, R8, Z17, S1) \
	Q8Q1(o+64*c, R9, Z18, S2) \
	Q8Q1(o+64*c, BX, Z19, S3)

// Q80QBLK sums the Q8_0 block at o of the four tiles against the token into S0–S3 and
// steps R10 and R12 to the token's next block.
#define Q80QBLK(o, S0, S1, S2, S3) \
	Q80SUMS(Q8Q4, o, S0, S1, S2, S3) \
	NEXT1

// func tileQ8x1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ8x1mnp with every line prefetched PFD ahead just before its load and the token
// scale broadcast once for the four tiles (tileQ4x1mq's shape), for the quarters of a
// band on AMD Zen 5; the same sums. There, one 5632×2048 product after another over
// 1 GiB, seven alternated rounds: two threads 61.4 (the kernel it replaced: two lines
// a unit 2048 bytes ahead, at the unit's start), 62.1 (none) → 67.5 GB/s; every line
// 2048 ahead 64.4, every other line 60.6. llama-1b Q8_0 tg64 -t 2
// (scripts/bench-ab.sh): 1.107× and 1.051× (6 and 4 rounds).
TEXT ·tileQ8x1mq(SB), NOSPLIT, $0-48
	X1MUNITS(UNITQ, Q80QBLK, 512, 1024, 1056, $1088)

// Lookup-table tiles (IQ4_NL, MXFP4, IQ4_XS; layouts in tile_lut.go): the nibbles are
// looked up in a table of levels plus 128 (Z29, the same 16 bytes in every 128-bit
// lane) before VPDPBUSD; each block's sum starts at −128·Σy. Z31 holds the 0x0F mask.

// LUTMASKS sets Z31 to 0x0F bytes and Z29 to the 16-byte table at (R9).
#define LUTMASKS \
	VBROADCASTI32X4 (R9), Z29 \
	MOVL $0x0F0F0F0F, R9 \
	VPBROADCASTD R9, Z31

// E8M0CONSTS sets Z26 to 128.0 and Z25 to 1.0 (float lanes), for E8M0.
#define E8M0CONSTS \
	MOVL $0x43000000, R9 \
	VPBROADCASTD R9, Z26 \
	MOVL $0x3F800000, R9 \
	VPBROADCASTD R9, Z25

// E8M0 widens sixteen E8M0 bytes at sc(P) to their factors 2^(e−128) in Z10, exactly
// (subnormal for e < 2) as kernels.E8M0Half.
#define E8M0(P, sc) E8M0M(sc(P), Z25)

// E8M0M is E8M0 for the bytes at memory operand m, with the factor 1.0 in ONE.
#define E8M0M(m, ONE) \
	VPMOVZXBD m, Z10 \
	VCVTDQ2PS Z10, Z10 \
	VSUBPS Z26, Z10, Z10 \
	VSCALEFPS Z10, ONE, Z10

// LUTC4 is Q4C4 with the nibbles looked up in Z29.
#define LUTC4(o, c, A, B) \
	NIB2(o, c, A, B) \
	VPSHUFB A, Z29, A \
	VPSHUFB B, Z29, B \
	DOTC4(c, A, B)

// LUTBLK4 runs the 32-element nibble block at q(SI) against four tokens into the int
// sums Z0–Z3 (R12 at the block's tail fields); the caller scales and steps.
#define LUTBLK4(q) \
	LEAQ 128(DI), R12 \
	STARTS4 \
	LUTC4(q, 0, Z16, Z17) \
	LUTC4(q, 1, Z18, Z19) \
	LUTC4(q, 2, Z20, Z21) \
	LUTC4(q, 3, Z22, Z23)

// LUTT1 runs the nibble block at q(P), looked up in Z29, against one token (R10, R12)
// into the int sum Z0.
#define LUTT1(P, q, PF) \
	NIB8(P, q, PF) \
	LUT8 \
	DOT8T1

// func tileIQ4NLx4(nu int, tile, act *byte, out *[64]float32)
//
// IQ4_NL tiles (Q4_0's layout) times four tokens.
TEXT ·tileIQ4NLx4(SB), NOSPLIT, $0-32
	ARGS4
	LEAQ ·lutTileIQ4NL(SB), R9
	LUTMASKS
	TESTQ CX, CX
	JZ iq4nlx4_done
iq4nlx4_loop:
	PREF6(PFON)
	PREFETCHT0 (PFD+384)(SI)
	PREFETCHT0 (PFD+448)(SI)
	PREFETCHT0 (PFD+512)(SI)
	LUTBLK4(0)
	VCVTPH2PS 512(SI), Z10
	FMA4
	ADDQ $176, DI
	LUTBLK4(256)
	VCVTPH2PS 544(SI), Z10
	FMA4
	ADDQ $176, DI
	ADDQ $576, SI
	DECQ CX
	JNZ iq4nlx4_loop
iq4nlx4_done:
	STORE4

// func tileIQ4NLx1(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileIQ4NLx4 for token tok (0–3) alone. The macro is its body with prefetch PF: PFON here,
// PFOFF in the …np twin below.
#define TILEIQ4NLX1(PF) \
	ARGS1(32) \
	LEAQ ·lutTileIQ4NL(SB), R9 \
	LUTMASKS \
	TESTQ CX, CX \
	JZ iq4nlx1_done \
iq4nlx1_loop: \
	PF((PFD+512)(SI)) \
	LUTT1(SI, 0, PF) \
	VCVTPH2PS 512(SI), Z10 \
	FMA1 \
	NEXT1 \
	LUTT1(SI, 256, PF) \
	VCVTPH2PS 544(SI), Z10 \
	FMA1 \
	NEXT1 \
	ADDQ $576, SI \
	DECQ CX \
	JNZ iq4nlx1_loop \
iq4nlx1_done: \
	STORE1

TEXT ·tileIQ4NLx1(SB), NOSPLIT, $0-40
	TILEIQ4NLX1(PFON)

// func tileIQ4NLx1np(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileIQ4NLx1 without software prefetch (PFOFF).
TEXT ·tileIQ4NLx1np(SB), NOSPLIT, $0-40
	TILEIQ4NLX1(PFOFF)

// Q4LUTT1S is LUTT1 scaled by the block's fp16 row scales at sc(P) times the token's
// scale, into ACC (prefetch PF).
#define Q4LUTT1S(P, q, sc, ACC, PF) \
	LUTT1(P, q, PF) \
	VCVTPH2PS sc(P), Z10 \
	VCVTDQ2PS Z0, Z0 \
	VMULPS.BCST (R12), Z10, Z11 \
	VFMADD231PS Z11, Z0, ACC

// func tileIQ4NLx1m(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileIQ4NLx1 on four tiles at once (tile + k·stride, results at out[16k]), as
// tileQ4x1m; the macro is its body with prefetch PF (PFOFF in the …np twin).
#define TILEIQ4NLX1M(PF) \
	LEAQ ·lutTileIQ4NL(SB), R9 \
	LUTMASKS \
	ARGS1M(32) \
	TESTQ CX, CX \
	JZ iq4nlx1m_done \
iq4nlx1m_loop: \
	PF((PFD+512)(SI)) \
	PF((PFD+512)(R8)) \
	PF((PFD+512)(R9)) \
	PF((PFD+512)(BX)) \
	Q4LUTT1S(SI, 0, 512, Z4, PF) \
	Q4LUTT1S(R8, 0, 512, Z5, PF) \
	Q4LUTT1S(R9, 0, 512, Z6, PF) \
	Q4LUTT1S(BX, 0, 512, Z7, PF) \
	NEXT1 \
	Q4LUTT1S(SI, 256, 544, Z4, PF) \
	Q4LUTT1S(R8, 256, 544, Z5, PF) \
	Q4LUTT1S(R9, 256, 544, Z6, PF) \
	Q4LUTT1S(BX, 256, 544, Z7, PF) \
	NEXT1 \
	STEP4T($576) \
	DECQ CX \
	JNZ iq4nlx1m_loop \
iq4nlx1m_done: \
	STORE4

TEXT ·tileIQ4NLx1m(SB), NOSPLIT, $0-48
	TILEIQ4NLX1M(PFON)

// func tileIQ4NLx1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ4x1mq for IQ4_NL (the nibbles looked up in the table, NIBQL), for the four
// quarters of a band on AMD Zen 5: each line prefetched PFD ahead just before it is
// read, the activations and token scales broadcast once for the four tiles. The same
// sums and float operations as tileIQ4NLx1.
TEXT ·tileIQ4NLx1mq(SB), NOSPLIT, $0-48
	LEAQ ·lutTileIQ4NL(SB), R9
	LUTMASKS
	X1MUNITS(UNITQ, LUTQBLK, 256, 512, 544, $576)

// func tileIQ4NLx1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileIQ4NLx1m without software prefetch (PFOFF).
TEXT ·tileIQ4NLx1mnp(SB), NOSPLIT, $0-48
	TILEIQ4NLX1M(PFOFF)

// func tileMXFP4x4(nu int, tile, act *byte, out *[64]float32)
//
// MXFP4 tiles (per pair of blocks 2×256 nibble bytes, 2×16 E8M0 bytes; 544 bytes)
// times four tokens.
TEXT ·tileMXFP4x4(SB), NOSPLIT, $0-32
	ARGS4
	LEAQ ·lutTileMXFP4(SB), R9
	LUTMASKS
	E8M0CONSTS
	TESTQ CX, CX
	JZ mxfp4x4_done
mxfp4x4_loop:
	PREF6(PFON)
	PREFETCHT0 (PFD+384)(SI)
	PREFETCHT0 (PFD+448)(SI)
	PREFETCHT0 (PFD+512)(SI)
	LUTBLK4(0)
	E8M0(SI, 512)
	FMA4
	ADDQ $176, DI
	LUTBLK4(256)
	E8M0(SI, 528)
	FMA4
	ADDQ $176, DI
	ADDQ $544, SI
	DECQ CX
	JNZ mxfp4x4_loop
mxfp4x4_done:
	STORE4

// func tileMXFP4x1(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileMXFP4x4 for token tok (0–3) alone. The macro is its body with prefetch PF: PFON here,
// PFOFF in the …np twin below.
#define TILEMXFP4X1(PF) \
	ARGS1(32) \
	LEAQ ·lutTileMXFP4(SB), R9 \
	LUTMASKS \
	E8M0CONSTS \
	TESTQ CX, CX \
	JZ mxfp4x1_done \
mxfp4x1_loop: \
	PF((PFD+512)(SI)) \
	LUTT1(SI, 0, PF) \
	E8M0(SI, 512) \
	FMA1 \
	NEXT1 \
	LUTT1(SI, 256, PF) \
	E8M0(SI, 528) \
	FMA1 \
	NEXT1 \
	ADDQ $544, SI \
	DECQ CX \
	JNZ mxfp4x1_loop \
mxfp4x1_done: \
	STORE1

TEXT ·tileMXFP4x1(SB), NOSPLIT, $0-40
	TILEMXFP4X1(PFON)

// func tileMXFP4x1np(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileMXFP4x1 without software prefetch (PFOFF).
TEXT ·tileMXFP4x1np(SB), NOSPLIT, $0-40
	TILEMXFP4X1(PFOFF)

// MXFP4QSETUP sets the MXFP4 four-tile kernels' table and constants, 1.0 in Z28 for
// the E8M0 scales (E8SC: the activations take Z25).
#define MXFP4QSETUP \
	LEAQ ·lutTileMXFP4(SB), R9 \
	LUTMASKS \
	E8M0CONSTS \
	VMOVAPS Z25, Z28

// func tileMXFP4x1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileMXFP4x1 on four tiles at once (tile + k·stride, results at out[16k]), 64 bytes of
// each in turn, the activations and token scales broadcast once for the four tiles
// (tileIQ4NLx1mq's walk with E8M0 scales, 1.0 for them in Z28: the activations take
// Z25), without software prefetch.
TEXT ·tileMXFP4x1mnp(SB), NOSPLIT, $0-48
	MXFP4QSETUP
	X1MUNITS(UNITQENP, LUTQBLKNP, 256, 512, 528, $544)

// func tileMXFP4x1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileMXFP4x1mnp with each line prefetched PFD ahead just before it is read, for the
// four quarters of a band on AMD Zen 5 (as tileIQ4NLx1mq).
TEXT ·tileMXFP4x1mq(SB), NOSPLIT, $0-48
	MXFP4QSETUP
	X1MUNITS(UNITQE, LUTQBLK, 256, 512, 528, $544)

// IQ4XS_HEAD reads an IQ4_XS super-block's fp16 d (Z28), points R14 at its sub-block
// scales and SI at its quants; R13 counts its eight sub-blocks.
#define IQ4XS_HEAD \
	VCVTPH2PS (SI), Z28 \
	LEAQ 64(SI), R14 \
	ADDQ $192, SI \
	MOVQ $8, R13

// IQ4XS_SCALE turns the sub-block's sixteen int8 scales ls−32 (R14) into row scales
// d·(ls−32) (Z10).
#define IQ4XS_SCALE \
	VPMOVSXBD (R14), Z10 \
	VCVTDQ2PS Z10, Z10 \
	VMULPS Z28, Z10, Z10

// func tileIQ4XSx4(nu int, tile, act *byte, out *[64]float32)
//
// IQ4_XS tiles (per 256-element super-block: 16 fp16 d, 32 bytes of padding, 8×16
// int8 scales, then eight sub-blocks of 256 nibble bytes; 2240 bytes) times four tokens.
TEXT ·tileIQ4XSx4(SB), NOSPLIT, $0-32
	ARGS4
	LEAQ ·lutTileIQ4NL(SB), R9
	LUTMASKS
	TESTQ CX, CX
	JZ iq4xsx4_done
iq4xsx4_super:
	IQ4XS_HEAD
iq4xsx4_sub:
	PREF6(PFON)
	LUTBLK4(0)
	IQ4XS_SCALE
	FMA4
	ADDQ $256, SI
	ADDQ $16, R14
	ADDQ $176, DI
	DECQ R13
	JNZ iq4xsx4_sub
	DECQ CX
	JNZ iq4xsx4_super
iq4xsx4_done:
	STORE4

// func tileIQ4XSx1(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileIQ4XSx4 for token tok (0–3) alone. The macro is its body with prefetch PF: PFON here,
// PFOFF in the …np twin below.
#define TILEIQ4XSX1(PF) \
	ARGS1(32) \
	LEAQ ·lutTileIQ4NL(SB), R9 \
	LUTMASKS \
	TESTQ CX, CX \
	JZ iq4xsx1_done \
iq4xsx1_super: \
	IQ4XS_HEAD \
iq4xsx1_sub: \
	LUTT1(SI, 0, PF) \
	IQ4XS_SCALE \
	FMA1 \
	ADDQ $256, SI \
	ADDQ $16, R14 \
	NEXT1 \
	DECQ R13 \
	JNZ iq4xsx1_sub \
	DECQ CX \
	JNZ iq4xsx1_super \
iq4xsx1_done: \
	STORE1

TEXT ·tileIQ4XSx1(SB), NOSPLIT, $0-40
	TILEIQ4XSX1(PFON)

// func tileIQ4XSx1np(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileIQ4XSx1 without software prefetch (PFOFF).
TEXT ·tileIQ4XSx1np(SB), NOSPLIT, $0-40
	TILEIQ4XSX1(PFOFF)

// IQ4XSFMAT scales the int sum I of sub-block R14/16 of the IQ4_XS super-block of the
// tile at P (its int8 scales in the head at P, its d in D) into ACC: IQ4XS_SCALE and
// FMA1's operations (KFMAT's).
#define IQ4XSFMAT(P, D, I, ACC) KFMAT(P, D, I, ACC)

// TILEIQ4XSX1M(PFSUPER, PFC) is the body of the IQ4_XS four-tile kernels: SUPER4T
// with the nibbles looked up (LUTC4T) and no mins, each tile's d read once per
// super-block.
#define TILEIQ4XSX1M(PFSUPER, PFC) SUPER4T(IQ4XSSETUP, IQ4XSD4, LUTC4T, IQ4XSFMAT4, 192, $2240, PFSUPER, PFC)
#define IQ4XSSETUP \
	LEAQ ·lutTileIQ4NL(SB), R9 \
	LUTMASKS
#define IQ4XSD4 \
	VCVTPH2PS (SI), Z8 \
	VCVTPH2PS (R8), Z12 \
	VCVTPH2PS (R9), Z14 \
	VCVTPH2PS (BX), Z27
#define IQ4XSFMAT4 \
	IQ4XSFMAT(SI, Z8, Z0, Z4) \
	IQ4XSFMAT(R8, Z12, Z1, Z5) \
	IQ4XSFMAT(R9, Z14, Z2, Z6) \
	IQ4XSFMAT(BX, Z27, Z3, Z7)

// func tileIQ4XSx1mnp(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileIQ4XSx1np on four tiles at once (tile + k·stride, results at out[16k]), 64 bytes
// of each in turn, as tileQ4Kx1mnp.
TEXT ·tileIQ4XSx1mnp(SB), NOSPLIT, $0-48
	TILEIQ4XSX1M(PFNONE, PFOFF)

// func tileIQ4XSx1mq(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileIQ4XSx1mnp with software prefetch, for the four quarters of a band (AMD Zen 5), as
// tileQ4Kx1mq: each quant line prefetched PFD ahead just before the chunk it belongs to
// is read, and at each super-block its three head lines PFD on (PF4T3), which no quant
// load's prefetch reaches.
TEXT ·tileIQ4XSx1mq(SB), NOSPLIT, $0-48
	TILEIQ4XSX1M(PF4T3(PFD), PF4TX)
