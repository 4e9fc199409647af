//go:build amd64 && !purego

#include "textflag.h"
#include "vnni256_amd64.h"

// Tile kernels (Q4_0, Q8_0, Q4_K, Q6_K) for CPUs with AVX2 but without AVX512-VNNI (or
// LLMBENCH_CPU=avx2): the tile formats and the per-output order of tile.go, so they
// give the VNNI kernels' results bit for bit. Q4_0 first (the others below say how
// they differ): a 64-byte nibble word of a tile holds sixteen rows, four bytes each:
// rows 0–7 in its low 32 bytes (one ymm), rows 8–15 in its high 32 bytes. Without
// VPDPBUSD, each word's products are VPMADDUBSW (unsigned nibble q ≤ 15 times signed
// activation byte: pair sums |·| ≤ 2·15·128, no saturation), the eight products of a
// 32-element block are added as int16 (|sum| ≤ 8·3840 = 30720 < 2¹⁵: exact), and one
// VPMADDWD with ones widens each row's two halves to its int32 sum Σ q·y. Integer sums
// are exact in any order, so start + Σ q·y is the VNNI kernels' integer, and the float
// operations after it are theirs: acc = fma(float32(start + Σ q·y), ws·d, acc).
//
// Registers: SI tile block, DI activation block (four tokens: 4×32 quant bytes, then the
// tail: 4 float32 scales d at 128, 4 int32 starting sums at 144), Y15 the 0x0F byte
// mask, Y14 the int16 ones.

// T2MASKS sets Y15 to 0x0F bytes and Y14 to int16 ones.
#define T2MASKS \
	MOVL $0x0F0F0F0F, R9 \
	MOVQ R9, X15 \
	VPBROADCASTD X15, Y15 \
	MOVL $0x00010001, R9 \
	MOVQ R9, X14 \
	VPBROADCASTD X14, Y14

// T2NIB loads one nibble word of a tile (rows 0–7 at memory operand m0, rows 8–15 at
// m1) as its low nibbles (Y2 rows 0–7, Y3 rows 8–15) and its high ones (Y4, Y5).
#define T2NIB(m0, m1) \
	VMOVDQU m0, Y2 \
	VMOVDQU m1, Y3 \
	VPSRLW $4, Y2, Y4 \
	VPSRLW $4, Y3, Y5 \
	VPAND Y15, Y2, Y2 \
	VPAND Y15, Y3, Y3 \
	VPAND Y15, Y4, Y4 \
	VPAND Y15, Y5, Y5

// T2Q4M adds one nibble word of one tile (rows 0–7 at memory operand m0, rows 8–15 at
// m1) times the token's broadcast activation words (Y0: the low nibbles' elements,
// Y1: the high ones') to the int16 sums S0 (rows 0–7) and S1 (rows 8–15). Clobbers
// Y2–Y5.
#define T2Q4M(m0, m1, S0, S1) \
	T2NIB(m0, m1) \
	VPMADDUBSW Y0, Y2, Y2 \
	VPMADDUBSW Y0, Y3, Y3 \
	VPMADDUBSW Y1, Y4, Y4 \
	VPMADDUBSW Y1, Y5, Y5 \
	VPADDW Y2, S0, S0 \
	VPADDW Y3, S1, S1 \
	VPADDW Y4, S0, S0 \
	VPADDW Y5, S1, S1

// T2ZERO7 clears Y6–Y12; T2ZERO8 the four tiles' int sums Y6–Y13.
#define T2ZERO7 \
	VPXOR Y6, Y6, Y6 \
	VPXOR Y7, Y7, Y7 \
	VPXOR Y8, Y8, Y8 \
	VPXOR Y9, Y9, Y9 \
	VPXOR Y10, Y10, Y10 \
	VPXOR Y11, Y11, Y11 \
	VPXOR Y12, Y12, Y12

#define T2ZERO8 \
	T2ZERO7 \
	VPXOR Y13, Y13, Y13

// T2ZERO64 clears out's 64 accumulators (clobbers Y0).
#define T2ZERO64 \
	VPXOR Y0, Y0, Y0 \
	VMOVUPS Y0, (AX) \
	VMOVUPS Y0, 32(AX) \
	VMOVUPS Y0, 64(AX) \
	VMOVUPS Y0, 96(AX) \
	VMOVUPS Y0, 128(AX) \
	VMOVUPS Y0, 160(AX) \
	VMOVUPS Y0, 192(AX) \
	VMOVUPS Y0, 224(AX)

// T2ARGSM loads a four-tile kernel's arguments: CX units, tiles at SI, R8, R9, BX
// (tile + k·stride), the token's quants at R10 and tail at R12 (blocks of bs bytes per
// token), AX out (cleared).
#define T2ARGSM(bs) \
	MOVQ nu+0(FP), CX \
	MOVQ tile+8(FP), SI \
	MOVQ stride+16(FP), DX \
	MOVQ act+24(FP), DI \
	MOVQ tok+32(FP), R11 \
	MOVQ out+40(FP), AX \
	T2ZERO64 \
	IMUL3Q $bs, R11, R10 \
	ADDQ DI, R10 \
	LEAQ (4*bs)(DI)(R11*4), R12 \
	LEAQ (SI)(DX*1), R8 \
	LEAQ (R8)(DX*1), R9 \
	LEAQ (R9)(DX*1), BX

// T2TOK multiplies T2NIB's words (Y2, Y3 low; Y4, Y5 high) with the activation bytes
// of word c of the token at T (elements 4c… and 16+4c…) and adds the int16 pair sums
// to S0 (rows 0–7) and S1 (rows 8–15). Clobbers Y0, Y1.
#define T2TOK(T, c, S0, S1) \
	VPBROADCASTD (4*c)(T), Y0 \
	VPMADDUBSW Y0, Y3, Y1 \
	VPMADDUBSW Y0, Y2, Y0 \
	VPADDW Y0, S0, S0 \
	VPADDW Y1, S1, S1 \
	VPBROADCASTD (16+4*c)(T), Y0 \
	VPMADDUBSW Y0, Y5, Y1 \
	VPMADDUBSW Y0, Y4, Y0 \
	VPADDW Y0, S0, S0 \
	VPADDW Y1, S1, S1

// T2SUM turns the int16 sums S0, S1 of a block into float32(start + Σ q·y) with the
// starting sum at memory operand st.
#define T2SUM(S0, S1, st) \
	VPMADDWD Y14, S0, S0 \
	VPMADDWD Y14, S1, S1 \
	T2SUMD(S0, S1, st)

// T2SUMD is T2SUM for sums already widened to int32.
#define T2SUMD(S0, S1, st) \
	VPBROADCASTD st, Y0 \
	VPADDD Y0, S0, S0 \
	VPADDD Y0, S1, S1 \
	VCVTDQ2PS S0, S0 \
	VCVTDQ2PS S1, S1

// T2ACC adds float sum F (rows 0–7 or 8–15 of one token, half h) times the block's row
// scales RS (Y2 or Y3) times the token's scale at memory operand d to the
// accumulator at off(AX). Clobbers Y0, Y1.
#define T2ACC(F, RS, d, off) \
	VBROADCASTSS d, Y0 \
	VMULPS Y0, RS, Y0 \
	VMOVUPS off(AX), Y1 \
	VFMADD231PS Y0, F, Y1 \
	VMOVUPS Y1, off(AX)

// T2ACC8 adds the four tokens' float sums Y6…Y13 (token t: Y6+2t rows 0–7, Y7+2t
// rows 8–15) times the row scales Y2, Y3 times each token's scale (at d(DI) + 4t) to
// the accumulators in out.
#define T2ACC8(d) \
	T2ACC(Y6, Y2, d(DI), 0) \
	T2ACC(Y7, Y3, d(DI), 32) \
	T2ACC(Y8, Y2, (d+4)(DI), 64) \
	T2ACC(Y9, Y3, (d+4)(DI), 96) \
	T2ACC(Y10, Y2, (d+8)(DI), 128) \
	T2ACC(Y11, Y3, (d+8)(DI), 160) \
	T2ACC(Y12, Y2, (d+12)(DI), 192) \
	T2ACC(Y13, Y3, (d+12)(DI), 224)

// T2ACCMIN8 is T2ACC8(d) with the row min factors Y4 (rows 0–7) and Y5 (rows 8–15)
// times each token's min sum (at m(DI) + 4t) added as T2ACCMIN does.
#define T2ACCMIN8(d, m) \
	T2ACCMIN(Y6, Y2, d(DI), Y4, m(DI), 0) \
	T2ACCMIN(Y7, Y3, d(DI), Y5, m(DI), 32) \
	T2ACCMIN(Y8, Y2, (d+4)(DI), Y4, (m+4)(DI), 64) \
	T2ACCMIN(Y9, Y3, (d+4)(DI), Y5, (m+4)(DI), 96) \
	T2ACCMIN(Y10, Y2, (d+8)(DI), Y4, (m+8)(DI), 128) \
	T2ACCMIN(Y11, Y3, (d+8)(DI), Y5, (m+8)(DI), 160) \
	T2ACCMIN(Y12, Y2, (d+12)(DI), Y4, (m+12)(DI), 192) \
	T2ACCMIN(Y13, Y3, (d+12)(DI), Y5, (m+12)(DI), 224)

// T2SUM4 is T2SUM for the four tokens' sums, their starting sums at st(DI) + 4t.
#define T2SUM4(st) \
	T2SUM(Y6, Y7, st(DI)) \
	T2SUM(Y8, Y9, (st+4)(DI)) \
	T2SUM(Y10, Y11, (st+8)(DI)) \
	T2SUM(Y12, Y13, (st+12)(DI))

// T2Q4ONE runs nibble word c of the block at SI against the token at R10 into Y6, Y7;
// T2Q4ALL against the four tokens (DI, R10, R11, R12) into Y6…Y13.
#define T2Q4ONE(c) \
	T2NIB((64*c)(SI), (64*c+32)(SI)) \
	T2TOK(R10, c, Y6, Y7)

#define T2Q4ALL(c) \
	T2NIB((64*c)(SI), (64*c+32)(SI)) \
	T2TOK(DI, c, Y6, Y7) \
	T2TOK(R10, c, Y8, Y9) \
	T2TOK(R11, c, Y10, Y11) \
	T2TOK(R12, c, Y12, Y13)

// T2ARGS1 loads a one-token kernel's arguments: CX units, SI the tile, DI the
// activations, AX out, R10 the token's quants in the first block (bs bytes each), R12
// its tail fields.
#define T2ARGS1(bs) \
	MOVQ nu+0(FP), CX \
	MOVQ tile+8(FP), SI \
	MOVQ act+16(FP), DI \
	MOVQ tok+24(FP), R11 \
	MOVQ out+32(FP), AX \
	IMUL3Q $bs, R11, R10 \
	ADDQ DI, R10 \
	LEAQ (4*bs)(DI)(R11*4), R12

// T2ARGS4 loads a four-token kernel's arguments: CX units, SI the tile, DI token 0's
// quants (R10, R11, R12 tokens 1–3's, bs bytes apart), AX out (cleared).
#define T2ARGS4(bs) \
	MOVQ nu+0(FP), CX \
	MOVQ tile+8(FP), SI \
	MOVQ act+16(FP), DI \
	MOVQ out+24(FP), AX \
	T2ZERO64 \
	LEAQ bs(DI), R10 \
	LEAQ (2*bs)(DI), R11 \
	LEAQ (3*bs)(DI), R12

// T2WIDEN8 widens the int16 sums Y6…Y13 to int32 (VPMADDWD with ONES, the 0x0001
// words: Y14, or t2ones in memory where Y14 holds something else).
#define T2WIDEN8(ONES) \
	VPMADDWD ONES, Y6, Y6 \
	VPMADDWD ONES, Y7, Y7 \
	VPMADDWD ONES, Y8, Y8 \
	VPMADDWD ONES, Y9, Y9 \
	VPMADDWD ONES, Y10, Y10 \
	VPMADDWD ONES, Y11, Y11 \
	VPMADDWD ONES, Y12, Y12 \
	VPMADDWD ONES, Y13, Y13

// (T2ACTS and T2Q5M, of the Q5_K four-tile kernel below, address its stack frame: go
// vet wants such macros defined before the first TEXT.)
//
// T2ACTS copies the token's 32 activation bytes at R10 to the stack as the words the
// Q5_K four-tile kernel multiplies: word c's low-nibble elements broadcast at 64c(SP),
// its high ones' at 64c+32(SP). Clobbers Y0.
#define T2ACTS \
	VPBROADCASTD (R10), Y0 \
	VMOVDQU Y0, (SP) \
	VPBROADCASTD 16(R10), Y0 \
	VMOVDQU Y0, 32(SP) \
	VPBROADCASTD 4(R10), Y0 \
	VMOVDQU Y0, 64(SP) \
	VPBROADCASTD 20(R10), Y0 \
	VMOVDQU Y0, 96(SP) \
	VPBROADCASTD 8(R10), Y0 \
	VMOVDQU Y0, 128(SP) \
	VPBROADCASTD 24(R10), Y0 \
	VMOVDQU Y0, 160(SP) \
	VPBROADCASTD 12(R10), Y0 \
	VMOVDQU Y0, 192(SP) \
	VPBROADCASTD 28(R10), Y0 \
	VMOVDQU Y0, 224(SP)

// T2Q5M multiplies word c of sub-block R11/256 of the Q5_K tile at P (fifth bits
// added: T2HI5S with SH and Y14 = 0x10 bytes) with the token's words on the stack
// (T2ACTS); ADD adds the products to the sums S0 (rows 0–7) and S1 (rows 8–15).
// Clobbers Y0, Y2–Y5.
#define T2Q5M(P, c, S0, S1, ADD, SH) \
	T2NIB((832+64*c)(P)(R11*1), (864+64*c)(P)(R11*1)) \
	T2HI5S((320+64*c)(P), SH, X1, Y14, Y2) \
	T2HI5S((352+64*c)(P), SH, X1, Y14, Y3) \
	T2HI5S((576+64*c)(P), SH, X1, Y14, Y4) \
	T2HI5S((608+64*c)(P), SH, X1, Y14, Y5) \
	VPMADDUBSW (64*c)(SP), Y2, Y2 \
	VPMADDUBSW (64*c)(SP), Y3, Y3 \
	VPMADDUBSW (64*c+32)(SP), Y4, Y4 \
	VPMADDUBSW (64*c+32)(SP), Y5, Y5 \
	VPADDW Y4, Y2, Y2 \
	VPADDW Y5, Y3, Y3 \
	ADD(S0, S1)

#define WORDS4(W) \
	W(0) \
	W(1) \
	W(2) \
	W(3)

#define WORDS8(W) \
	WORDS4(W) \
	W(4) \
	W(5) \
	W(6) \
	W(7)

// TX1 is the Q4_0 and Q8_0 one-token kernel (IQ4_NL's too, with AVX-VNNI), as TX4:
// WORDS runs ONE(c) for each word c of the block at SI against the token into Y6, Y7,
// SUM (T2SUM, T8CVT2; T2SUMD) makes them float32. TQ4X1 and TQ8X1 are it for Q4_0's and
// Q8_0's units: ONE is T2Q4ONE or T8ONE at the AVX2 level, VQ4ONE, VNLONE or V8ONE with
// AVX-VNNI.
#define TX1(MASKS, WORDS, ONE, SUM, sc, step) \
	T2ARGS1(32) \
	MASKS \
	VPXOR Y12, Y12, Y12 \
	VPXOR Y13, Y13, Y13 \
	TESTQ CX, CX \
	JZ done \
loop: \
	MOVQ $2, R13 \
	MOVQ SI, R8 \
	MOVQ SI, R9 \
	ADDQ sc, R9 \
block: \
	VPXOR Y6, Y6, Y6 \
	VPXOR Y7, Y7, Y7 \
	MOVQ R8, SI \
	WORDS(ONE) \
	SUM(Y6, Y7, 16(R12)) \
	VCVTPH2PS (R9), Y2 \
	VCVTPH2PS 16(R9), Y3 \
	VBROADCASTSS (R12), Y0 \
	VMULPS Y0, Y2, Y2 \
	VMULPS Y0, Y3, Y3 \
	VFMADD231PS Y2, Y6, Y12 \
	VFMADD231PS Y3, Y7, Y13 \
	ADDQ step, R8 \
	ADDQ $32, R9 \
	ADDQ $176, R10 \
	ADDQ $176, R12 \
	DECQ R13 \
	JNZ block \
	LEAQ 64(R8), SI \
	DECQ CX \
	JNZ loop \
done: \
	VMOVUPS Y12, (AX) \
	VMOVUPS Y13, 32(AX) \
	VZEROUPPER \
	RET

#define TQ4X1(MASKS, ONE, SUM) TX1(MASKS, WORDS4, ONE, SUM, $512, $256)
#define TQ8X1(MASKS, ONE, SUM) TX1(MASKS, WORDS8, ONE, SUM, $1024, $512)

// func tileQ4x1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)
//
// One token (tok, 0–3) of the activation blocks against a Q4_0 tile (units of two
// 32-element blocks: 2×256 bytes of nibble words, then 2×16 fp16 scales, 576 bytes);
// the accumulators are Y12 (rows 0–7) and Y13 (rows 8–15).
// WORDS4 and WORDS8 run W(c) for the four (eight) words of a block.
TEXT ·tileQ4x1AVX2(SB), NOSPLIT, $0-40
	TQ4X1(T2MASKS, T2Q4ONE, T2SUM)

// TX4 is the Q4_0 and Q8_0 four-token kernel (IQ4_NL's too, with AVX-VNNI), units of
// two blocks of step bytes of words, then their scales at sc: MASKS sets the constants
// ALL needs, WORDS (WORDS4, WORDS8) runs ALL(c) for each word c of the block at SI
// against the four tokens into Y6…Y13, and SUM makes those float32. TQ4X4 and TQ8X4
// are it for Q4_0's and Q8_0's units: ALL is T2Q4ALL or T8ALL at the AVX2 level, VQ4ALL,
// VNLALL or VQ8ALL with AVX-VNNI; SUM T2SUM4 or T8CVT8, and VSUM4.
#define TX4(MASKS, WORDS, ALL, SUM, sc, step) \
	MASKS \
	T2ARGS4(32) \
	TESTQ CX, CX \
	JZ done \
loop: \
	MOVQ $2, R13 \
	MOVQ SI, R8 \
	MOVQ SI, R9 \
	ADDQ sc, R9 \
block: \
	MOVQ R8, SI \
	T2ZERO8 \
	WORDS(ALL) \
	SUM(144) \
	VCVTPH2PS (R9), Y2 \
	VCVTPH2PS 16(R9), Y3 \
	T2ACC8(128) \
	ADDQ step, R8 \
	ADDQ $32, R9 \
	ADDQ $176, DI \
	ADDQ $176, R10 \
	ADDQ $176, R11 \
	ADDQ $176, R12 \
	DECQ R13 \
	JNZ block \
	LEAQ 64(R8), SI \
	DECQ CX \
	JNZ loop \
done: \
	VZEROUPPER \
	RET

#define TQ4X4(MASKS, ALL, SUM) TX4(MASKS, WORDS4, ALL, SUM, $512, $256)
#define TQ8X4(MASKS, ALL, SUM) TX4(MASKS, WORDS8, ALL, SUM, $1024, $512)

// func tileQ4x4AVX2(nu int, tile, act *byte, out *[64]float32)
//
// tileQ4x1AVX2 for four tokens at once (token-major out[16t+r]); each nibble word is
// loaded and split once for the four tokens. The int16 sums of token t are in
// Y6+2t (rows 0–7) and Y7+2t (rows 8–15); the accumulators live in out.
TEXT ·tileQ4x4AVX2(SB), NOSPLIT, $0-32
	TQ4X4(T2MASKS, T2Q4ALL, T2SUM4)

// The Q8_0 kernels store the quants as q+128 (tile.go); the VNNI kernels' integer
// start + Σ (q+128)·y is Σ q·y, which these form directly: q = (q+128) XOR 0x80 as a
// signed byte, |q| (VPABSB) times y·sign(q) (VPSIGNB) with VPMADDUBSW (pair sums
// |·| ≤ 2·128·127 < 2¹⁵; activations are in [−127, 127]), widened to int32 with
// VPMADDWD per word. Y15 holds 0x80 bytes here.

// T8MASKS sets Y15 to 0x80 bytes and Y14 to int16 ones.
#define T8MASKS \
	MOVL $0x80808080, R9 \
	MOVQ R9, X15 \
	VPBROADCASTD X15, Y15 \
	MOVL $0x00010001, R9 \
	MOVQ R9, X14 \
	VPBROADCASTD X14, Y14

// T8W loads word c of the Q8_0 block at q(SI) (elements 4c…4c+3 of sixteen rows) as
// signed quants (Y2: rows 0–7, Y3: rows 8–15) and their absolute values (Y4, Y5).
#define T8W(q, c) T8WP(T8NOPF, SI, q, c)

// T8WP is T8W for the tile at P, its line prefetched 1 KiB ahead first by PF (T8PF,
// or T8NOPF for none).
#define T8NOPF(m)
#define T8PF(m) PREFETCHT0 m
#define T8WP(PF, P, q, c) \
	PF((1024+q+64*c)(P)) \
	VMOVDQU (q+64*c)(P), Y2 \
	VMOVDQU (q+64*c+32)(P), Y3 \
	VPXOR Y15, Y2, Y2 \
	VPXOR Y15, Y3, Y3 \
	VPABSB Y2, Y4 \
	VPABSB Y3, Y5

// T8TOK adds T8W's word times the activation bytes 4c… of the token at T to the int32
// sums S0 (rows 0–7) and S1 (rows 8–15). Clobbers Y0, Y1.
#define T8TOK(T, c, S0, S1) \
	VPBROADCASTD (4*c)(T), Y0 \
	VPSIGNB Y3, Y0, Y1 \
	VPSIGNB Y2, Y0, Y0 \
	VPMADDUBSW Y0, Y4, Y0 \
	VPMADDUBSW Y1, Y5, Y1 \
	VPMADDWD Y14, Y0, Y0 \
	VPMADDWD Y14, Y1, Y1 \
	VPADDD Y0, S0, S0 \
	VPADDD Y1, S1, S1

// T8ONE runs word c of the block at SI against the token at R10 into Y6, Y7.
#define T8ONE(c) \
	T8W(0, c) \
	T8TOK(R10, c, Y6, Y7)

// T8CVT2 makes one token's int32 sums Σ q·y (T8ONE) float32 (st unused, as T8CVT8's).
#define T8CVT2(S0, S1, st) \
	VCVTDQ2PS S0, S0 \
	VCVTDQ2PS S1, S1

// func tileQ8x1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)
//
// One token against a Q8_0 tile (units of two 32-element blocks: 2×512 bytes of
// quant words, then 2×16 fp16 scales, 1088 bytes); accumulators Y12, Y13.
TEXT ·tileQ8x1AVX2(SB), NOSPLIT, $0-40
	TQ8X1(T8MASKS, T8ONE, T8CVT2)

// T8WM runs word c of the block at q of the four tiles (SI, R8, R9, BX) against the
// token at R10 into their int32 sums Y6…Y13 (tile k: Y6+2k rows 0–7, Y7+2k rows 8–15),
// each tile's line prefetched 1 KiB ahead just before it is read.
#define T8WM(q, c) \
	T8WP(T8PF, SI, q, c) \
	T8TOK(R10, c, Y6, Y7) \
	T8WP(T8PF, R8, q, c) \
	T8TOK(R10, c, Y8, Y9) \
	T8WP(T8PF, R9, q, c) \
	T8TOK(R10, c, Y10, Y11) \
	T8WP(T8PF, BX, q, c) \
	T8TOK(R10, c, Y12, Y13)

// T8BLKM runs the Q8_0 block at q (scales at sc) of the four tiles against the token:
// its eight words (two per T2BLK4 word, T8WM2), then each tile's float operations as
// tileQ8x1AVX2's (T2FIN4).
#define T8BLKM(q, sc) T2BLK4(T8WM2, TNLSUM, q, sc, Y13)
#define T8WM2(q, c) \
	T8WM(q, (2*c)) \
	T8WM(q, (2*c+1))

// T8ALL runs word c of the block against the four tokens.
#define T8ALL(c) \
	T8W(0, c) \
	T8TOK(DI, c, Y6, Y7) \
	T8TOK(R10, c, Y8, Y9) \
	T8TOK(R11, c, Y10, Y11) \
	T8TOK(R12, c, Y12, Y13)

// T8CVT8 makes the four tokens' int32 sums Σ q·y (T8ALL) float32 (st unused: the AVX2
// Q8_0 kernels form Σ q·y without a starting sum).
#define T8CVT8(st) \
	VCVTDQ2PS Y6, Y6 \
	VCVTDQ2PS Y7, Y7 \
	VCVTDQ2PS Y8, Y8 \
	VCVTDQ2PS Y9, Y9 \
	VCVTDQ2PS Y10, Y10 \
	VCVTDQ2PS Y11, Y11 \
	VCVTDQ2PS Y12, Y12 \
	VCVTDQ2PS Y13, Y13

// func tileQ8x4AVX2(nu int, tile, act *byte, out *[64]float32)
//
// tileQ8x1AVX2 for four tokens at once; each word is loaded and its signs taken once
// for the four tokens (int32 sums of token t in Y6+2t and Y7+2t, accumulators in out).
TEXT ·tileQ8x4AVX2(SB), NOSPLIT, $0-32
	TQ8X4(T8MASKS, T8ALL, T8CVT8)

// The Q4_K kernels: per 256-element super-block of a tile, 16 fp16 d, 16 fp16 dmin, 8×16
// scale bytes, 8×16 min bytes, then eight 32-element sub-blocks of Q4_0's nibble words
// (tile.go). Per sub-block, as the VNNI kernels: the integer as Q4_0's, then
// acc = fma(float32(sum), (sc·d)·d_t, acc) and acc = fma(m·(−dmin), m_t, acc), with the
// token's min sum m_t at 160 in the activation tail.

DATA t2sign<>+0(SB)/8, $0x8000000080000000
DATA t2sign<>+8(SB)/8, $0x8000000080000000
DATA t2sign<>+16(SB)/8, $0x8000000080000000
DATA t2sign<>+24(SB)/8, $0x8000000080000000
GLOBL t2sign<>(SB), RODATA|NOPTR, $32

// T2ROWS sets RS0, RS1 (rows 0–7, 8–15) to the sub-block's byte factors at memory
// operands b0, b1 (eight bytes each) times the fp16 row values at h0, h1: the row
// scales sc·d. Clobbers Y0, Y1.
#define T2ROWS(b0, b1, h0, h1, RS0, RS1) \
	VPMOVZXBD b0, RS0 \
	VPMOVZXBD b1, RS1 \
	VCVTDQ2PS RS0, RS0 \
	VCVTDQ2PS RS1, RS1 \
	VCVTPH2PS h0, Y0 \
	VCVTPH2PS h1, Y1 \
	VMULPS Y0, RS0, RS0 \
	VMULPS Y1, RS1, RS1

// T2MINS is T2ROWS for the min factors m·(−dmin).
#define T2MINS(b0, b1, h0, h1, RS0, RS1) \
	VPMOVZXBD b0, RS0 \
	VPMOVZXBD b1, RS1 \
	VCVTDQ2PS RS0, RS0 \
	VCVTDQ2PS RS1, RS1 \
	VCVTPH2PS h0, Y0 \
	VCVTPH2PS h1, Y1 \
	VXORPS t2sign<>(SB), Y0, Y0 \
	VXORPS t2sign<>(SB), Y1, Y1 \
	VMULPS Y0, RS0, RS0 \
	VMULPS Y1, RS1, RS1

// T2MIN adds the min factors RS times the token's min sum at memory operand m to the
// accumulator at off(AX). Clobbers Y0, Y1.
#define T2MIN(RS, m, off) \
	VBROADCASTSS m, Y0 \
	VMOVUPS off(AX), Y1 \
	VFMADD231PS Y0, RS, Y1 \
	VMOVUPS Y1, off(AX)

// T2ACCMIN is T2ACC(F, RS, d, off) then T2MIN(MS, m, off) with the accumulator loaded
// and stored once: the same two fused multiply-adds, without a store and a load
// between them (the store-to-load forwarding on the accumulator's chain cost Q2_K's
// four-tile kernel a fifth of its time). Clobbers Y0, Y1.
#define T2ACCMIN(F, RS, d, MS, m, off) \
	VBROADCASTSS d, Y0 \
	VMULPS Y0, RS, Y0 \
	VMOVUPS off(AX), Y1 \
	VFMADD231PS Y0, F, Y1 \
	VBROADCASTSS m, Y0 \
	VFMADD231PS Y0, MS, Y1 \
	VMOVUPS Y1, off(AX)

// T2KFAC sets a Q4_K or Q5_K sub-block's row scales d·sc in Y2, Y3 (scale bytes at
// memory operands s0, s1) and min factors −dmin·m in Y4, Y5 (min bytes at m0, m1),
// the super-block's head at P. Clobbers Y0, Y1.
#define T2KFAC(s0, s1, m0, m1, P) \
	T2ROWS(s0, s1, (P), 16(P), Y2, Y3) \
	T2MINS(m0, m1, 32(P), 48(P), Y4, Y5)

// T2KACC1 adds one token's float sums S0 (rows 0–7), S1 (rows 8–15) times T2KFAC's
// factors into the accumulators at off(AX) (the token's scale at (R12), its min sum
// at 32(R12)).
#define T2KACC1(S0, S1, off) \
	T2ACCMIN(S0, Y2, (R12), Y4, 32(R12), off) \
	T2ACCMIN(S1, Y3, (R12), Y5, 32(R12), off+32)

// TQ4KX1 is the Q4_K one-token kernel with TQ4X1's ONE and SUM.
#define TQ4KX1(ONE, SUM) \
	T2ARGS1(32) \
	T2MASKS \
	VPXOR Y0, Y0, Y0 \
	VMOVUPS Y0, (AX) \
	VMOVUPS Y0, 32(AX) \
	TESTQ CX, CX \
	JZ done \
super: \
	MOVQ SI, BX \
	LEAQ 64(SI), R14 \
	ADDQ $320, SI \
	MOVQ $8, R13 \
sub: \
	VPXOR Y6, Y6, Y6 \
	VPXOR Y7, Y7, Y7 \
	ONE(0) \
	ONE(1) \
	ONE(2) \
	ONE(3) \
	SUM(Y6, Y7, 16(R12)) \
	T2KFAC((R14), 8(R14), 128(R14), 136(R14), BX) \
	T2KACC1(Y6, Y7, 0) \
	ADDQ $256, SI \
	ADDQ $16, R14 \
	ADDQ $176, R10 \
	ADDQ $176, R12 \
	DECQ R13 \
	JNZ sub \
	DECQ CX \
	JNZ super \
done: \
	VZEROUPPER \
	RET

// func tileQ4Kx1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)
//
// One token against a Q4_K tile; the accumulators live in out (zeroed first), BX
// points at the super-block's head, R14 at its sub-block's scale bytes.
TEXT ·tileQ4Kx1AVX2(SB), NOSPLIT, $0-40
	TQ4KX1(T2Q4ONE, T2SUM)

// T2KFIN4 scales the four tokens' float sums Y6…Y13 of a Q4_K or Q5_K sub-block by
// its row scales and adds its mins (head at BX, scale bytes at R14) into out.
#define T2KFIN4 \
	T2KFAC((R14), 8(R14), 128(R14), 136(R14), BX) \
	T2ACCMIN8(128, 160)

// TQ4KX4 is the Q4_K four-token kernel with TQ4X4's ALL and SUM.
#define TQ4KX4(ALL, SUM) \
	T2MASKS \
	T2ARGS4(32) \
	TESTQ CX, CX \
	JZ done \
super: \
	MOVQ SI, BX \
	LEAQ 64(SI), R14 \
	ADDQ $320, SI \
	MOVQ $8, R13 \
sub: \
	T2ZERO8 \
	ALL(0) \
	ALL(1) \
	ALL(2) \
	ALL(3) \
	SUM(144) \
	T2KFIN4 \
	ADDQ $256, SI \
	ADDQ $16, R14 \
	ADDQ $176, DI \
	ADDQ $176, R10 \
	ADDQ $176, R11 \
	ADDQ $176, R12 \
	DECQ R13 \
	JNZ sub \
	DECQ CX \
	JNZ super \
done: \
	VZEROUPPER \
	RET

// func tileQ4Kx4AVX2(nu int, tile, act *byte, out *[64]float32)
//
// tileQ4Kx1AVX2 for four tokens at once (int16 sums of token t in Y6+2t and Y7+2t).
TEXT ·tileQ4Kx4AVX2(SB), NOSPLIT, $0-32
	TQ4KX4(T2Q4ALL, T2SUM4)

// The Q5_K kernels: Q4_K's with the fifth bits (tile.go: per super-block Q4_K's
// 320-byte head, eight high-bit words at 320, then the sub-blocks' nibbles at 832).
// Sub-block j of a super-block takes bit j of the high-bit words; a set bit adds 16
// (t2q5c10) to its nibble (T2HI5S). Quants reach 31, so a VPMADDUBSW pair sum is
// |·| ≤ 2·31·128 = 7936 and four of them add exactly in int16: words 0 and 1 of a
// sub-block are summed as int16 and widened, words 2 and 3 apart (one token: in their
// own registers; four: widened one word at a time).

DATA t2q5c10<>+0(SB)/8, $0x1010101010101010
DATA t2q5c10<>+8(SB)/8, $0x1010101010101010
DATA t2q5c10<>+16(SB)/8, $0x1010101010101010
DATA t2q5c10<>+24(SB)/8, $0x1010101010101010
GLOBL t2q5c10<>(SB), RODATA|NOPTR, $32

// T2HI5S adds 16 to the nibbles in N (a ymm of one nibble word of Q5_K sub-block j)
// whose fifth bit, bit j of the high-bit bytes at memory operand m, is set: the word
// shift SH (VPSLLW by 4−j for j < 4, else VPSRLW by j−4) by CNT (an xmm register or a
// 16-byte memory operand) takes it to bit 4, one operation where a compare with the
// bit takes three. Shifting 16-bit words moves bits across the bytes, but only into
// bits that C10 then clears. Clobbers Y0.
#define T2HI5S(m, SH, CNT, C10, N) \
	VMOVDQU m, Y0 \
	SH CNT, Y0, Y0 \
	VPAND C10, Y0, Y0 \
	VPOR Y0, N, N

// t2q5cnt holds T2HI5S's shift counts for sub-blocks 0–7 (16 bytes each): 4−j left,
// then j−4 right.
DATA t2q5cnt<>+0(SB)/8, $4
DATA t2q5cnt<>+8(SB)/8, $0
DATA t2q5cnt<>+16(SB)/8, $3
DATA t2q5cnt<>+24(SB)/8, $0
DATA t2q5cnt<>+32(SB)/8, $2
DATA t2q5cnt<>+40(SB)/8, $0
DATA t2q5cnt<>+48(SB)/8, $1
DATA t2q5cnt<>+56(SB)/8, $0
DATA t2q5cnt<>+64(SB)/8, $0
DATA t2q5cnt<>+72(SB)/8, $0
DATA t2q5cnt<>+80(SB)/8, $1
DATA t2q5cnt<>+88(SB)/8, $0
DATA t2q5cnt<>+96(SB)/8, $2
DATA t2q5cnt<>+104(SB)/8, $0
DATA t2q5cnt<>+112(SB)/8, $3
DATA t2q5cnt<>+120(SB)/8, $0
GLOBL t2q5cnt<>(SB), RODATA|NOPTR, $128

// T2NIB5 is T2NIB for word c of a Q5_K sub-block (nibbles at SI, high-bit words at
// DX) with its fifth bits added (T2HI5S with SH, CNT and C10).
#define T2NIB5(c, SH, CNT, C10) \
	T2NIB((64*c)(SI), (64*c+32)(SI)) \
	T2HI5S((64*c)(DX), SH, CNT, C10, Y2) \
	T2HI5S((64*c+32)(DX), SH, CNT, C10, Y3) \
	T2HI5S((256+64*c)(DX), SH, CNT, C10, Y4) \
	T2HI5S((256+64*c+32)(DX), SH, CNT, C10, Y5)

// T2Q5HEAD starts a Q5_K super-block: BX its head, R14 its scale bytes, DX its
// high-bit words, SI its first sub-block's nibbles, R13 the sub-block count.
#define T2Q5HEAD \
	MOVQ SI, BX \
	LEAQ 64(SI), R14 \
	LEAQ 320(SI), DX \
	ADDQ $832, SI \
	MOVQ $8, R13

// T2Q5SUB1 runs sub-block j of a Q5_K tile against one token (tileQ5Kx1AVX2), its
// fifth bits taken to bit 4 by SH X8, and steps to the next.
#define T2Q5SUB1(SH) \
	VPXOR Y6, Y6, Y6 \
	VPXOR Y7, Y7, Y7 \
	VPXOR Y10, Y10, Y10 \
	VPXOR Y11, Y11, Y11 \
	T2NIB5(0, SH, X8, Y9) \
	T2TOK(R10, 0, Y6, Y7) \
	T2NIB5(1, SH, X8, Y9) \
	T2TOK(R10, 1, Y6, Y7) \
	T2NIB5(2, SH, X8, Y9) \
	T2TOK(R10, 2, Y10, Y11) \
	T2NIB5(3, SH, X8, Y9) \
	T2TOK(R10, 3, Y10, Y11) \
	VPMADDWD Y14, Y6, Y6 \
	VPMADDWD Y14, Y7, Y7 \
	VPMADDWD Y14, Y10, Y10 \
	VPMADDWD Y14, Y11, Y11 \
	VPADDD Y10, Y6, Y6 \
	VPADDD Y11, Y7, Y7 \
	T2SUMD(Y6, Y7, 16(R12)) \
	T2KFAC((R14), 8(R14), 128(R14), 136(R14), BX) \
	T2KACC1(Y6, Y7, 0) \
	ADDQ $256, SI \
	ADDQ $16, R14 \
	ADDQ $176, R10 \
	ADDQ $176, R12

// TQ5KX1 is the Q5_K one-token kernel with SUB (T2Q5SUB1, V5KSUB1) running a
// sub-block.
#define TQ5KX1(SUB) \
	T2ARGS1(32) \
	T2MASKS \
	VMOVDQU t2q5c10<>(SB), Y9 \
	VPXOR Y0, Y0, Y0 \
	VMOVUPS Y0, (AX) \
	VMOVUPS Y0, 32(AX) \
	TESTQ CX, CX \
	JZ done \
super: \
	T2Q5HEAD \
	MOVQ $4, R13 \
lo: \
	VMOVQ R13, X8 \
	SUB(VPSLLW) \
	DECQ R13 \
	JNZ lo \
hi: \
	VMOVQ R13, X8 \
	SUB(VPSRLW) \
	INCQ R13 \
	CMPQ R13, $4 \
	JNE hi \
	DECQ CX \
	JNZ super \
done: \
	VZEROUPPER \
	RET

// func tileQ5Kx1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)
//
// tileQ4Kx1AVX2 for Q5_K tiles: the sub-block's shift count in X8 (R13: 4−j for the
// first four sub-blocks, then j−4), 0x10 bytes in Y9, words 2 and 3 summed in Y10, Y11.
TEXT ·tileQ5Kx1AVX2(SB), NOSPLIT, $0-40
	TQ5KX1(T2Q5SUB1)

// T2TOKD is T2TOK with each word's pair sums widened to int32 before they are added
// to the int32 sums S0, S1.
#define T2TOKD(T, c, S0, S1) \
	VPBROADCASTD (4*c)(T), Y0 \
	VPMADDUBSW Y0, Y3, Y1 \
	VPMADDUBSW Y0, Y2, Y0 \
	VPMADDWD Y14, Y0, Y0 \
	VPMADDWD Y14, Y1, Y1 \
	VPADDD Y0, S0, S0 \
	VPADDD Y1, S1, S1 \
	VPBROADCASTD (16+4*c)(T), Y0 \
	VPMADDUBSW Y0, Y5, Y1 \
	VPMADDUBSW Y0, Y4, Y0 \
	VPMADDWD Y14, Y0, Y0 \
	VPMADDWD Y14, Y1, Y1 \
	VPADDD Y0, S0, S0 \
	VPADDD Y1, S1, S1

// T2Q5ALL runs word c of the Q5_K sub-block against the four tokens with TOK (T2TOK:
// int16 sums; T2TOKD: int32).
#define T2Q5ALL(c, TOK, SH) \
	T2NIB5(c, SH, (R8), t2q5c10<>(SB)) \
	TOK(DI, c, Y6, Y7) \
	TOK(R10, c, Y8, Y9) \
	TOK(R11, c, Y10, Y11) \
	TOK(R12, c, Y12, Y13)

// T2Q5SUB4 runs sub-block j of a Q5_K tile against four tokens (tileQ5Kx4AVX2), its
// fifth bits taken to bit 4 by SH (R8), and steps to the next.
#define T2Q5SUB4(SH) T2Q5SUB4X(T2Q5W4, SH)

// T2Q5W4 sums the sub-block's four words against the four tokens into Y6…Y13 (int32).
#define T2Q5W4(SH) \
	T2Q5ALL(0, T2TOK, SH) \
	T2Q5ALL(1, T2TOK, SH) \
	T2WIDEN8(Y14) \
	T2Q5ALL(2, T2TOKD, SH) \
	T2Q5ALL(3, T2TOKD, SH)

// T2Q5SUB4X is T2Q5SUB4 with W (T2Q5W4; V5KW4 with AVX-VNNI) summing the words.
#define T2Q5SUB4X(W, SH) \
	T2ZERO8 \
	W(SH) \
	T2SUMD(Y6, Y7, 144(DI)) \
	T2SUMD(Y8, Y9, 148(DI)) \
	T2SUMD(Y10, Y11, 152(DI)) \
	T2SUMD(Y12, Y13, 156(DI)) \
	T2KFIN4 \
	ADDQ $16, R8 \
	ADDQ $256, SI \
	ADDQ $16, R14 \
	ADDQ $176, DI \
	ADDQ $176, R10 \
	ADDQ $176, R11 \
	ADDQ $176, R12

// TQ5KX4 is the Q5_K four-token kernel with SUB (T2Q5SUB4, V5KSUB4) running a
// sub-block.
#define TQ5KX4(SUB) \
	T2MASKS \
	T2ARGS4(32) \
	TESTQ CX, CX \
	JZ done \
super: \
	T2Q5HEAD \
	LEAQ t2q5cnt<>(SB), R8 \
	MOVQ $4, R13 \
lo: \
	SUB(VPSLLW) \
	DECQ R13 \
	JNZ lo \
	MOVQ $4, R13 \
hi: \
	SUB(VPSRLW) \
	DECQ R13 \
	JNZ hi \
	DECQ CX \
	JNZ super \
done: \
	VZEROUPPER \
	RET

// func tileQ5Kx4AVX2(nu int, tile, act *byte, out *[64]float32)
//
// tileQ5Kx1AVX2 for four tokens at once (sums of token t in Y6+2t and Y7+2t; R8 at the
// sub-block's shift count in t2q5cnt).
TEXT ·tileQ5Kx4AVX2(SB), NOSPLIT, $0-32
	TQ5KX4(T2Q5SUB4)

// The Q6_K kernels: per 256-element super-block of a tile, 16 fp16 d, 32 bytes of
// padding, 16×16 int8 scales, then sixteen 16-element blocks of two nibble words and
// one word of high bit pairs (tile.go), stored as q+32 (0…63). A block's four 6-bit
// chunks (elements 0–3, 4–7, 8–11, 12–15 of each row) are rebuilt as the VNNI kernels'
// Q6BITS does; VPMADDUBSW pair sums are |·| ≤ 2·63·128, so two chunks' add exactly in
// int16 before VPMADDWD. Then acc = fma(float32(start + Σ (q+32)·y), (sc·d)·d_t, acc).
// Activation blocks are 4·16 quant bytes, then the tail (d at 64, starting sums at 80).
// Y13 holds 0x30 bytes.

// T6MASKS is T2MASKS and Y13 = 0x30 bytes.
#define T6MASKS \
	T2MASKS \
	MOVL $0x30303030, R9 \
	MOVQ R9, X13 \
	VPBROADCASTD X13, Y13

// T6BITS rebuilds one half (rows 0–7 or 8–15) of a block, its two nibble words at
// memory operands w0, w1 and its high bit pairs at hb, as its four chunks in Y5…Y8.
// Clobbers Y2, Y3, Y4, Y9. T6CHUNKS is half h of the block at SI.
#define T6BITS(w0, w1, hb) \
	VMOVDQU w0, Y2 \
	VMOVDQU w1, Y3 \
	VMOVDQU hb, Y4 \
	VPAND Y15, Y2, Y5 \
	VPSLLW $4, Y4, Y9 \
	VPAND Y13, Y9, Y9 \
	VPOR Y9, Y5, Y5 \
	VPAND Y15, Y3, Y6 \
	VPSLLW $2, Y4, Y9 \
	VPAND Y13, Y9, Y9 \
	VPOR Y9, Y6, Y6 \
	VPSRLW $4, Y2, Y7 \
	VPAND Y15, Y7, Y7 \
	VPAND Y13, Y4, Y9 \
	VPOR Y9, Y7, Y7 \
	VPSRLW $4, Y3, Y8 \
	VPAND Y15, Y8, Y8 \
	VPSRLW $2, Y4, Y9 \
	VPAND Y13, Y9, Y9 \
	VPOR Y9, Y8, Y8

#define T6CHUNKS(h) T6BITS((32*h)(SI), (64+32*h)(SI), (128+32*h)(SI))

// T6TOK sets S to the int32 sums Σ (q+32)·y of the four chunks with the 16 activation
// bytes of the token at T. Clobbers Y0, Y1, Y10.
#define T6TOK(T, S) \
	VPBROADCASTD (T), Y0 \
	VPMADDUBSW Y0, Y5, Y1 \
	VPBROADCASTD 4(T), Y0 \
	VPMADDUBSW Y0, Y6, Y0 \
	VPADDW Y0, Y1, Y1 \
	VPMADDWD Y14, Y1, Y1 \
	VPBROADCASTD 8(T), Y0 \
	VPMADDUBSW Y0, Y7, Y10 \
	VPBROADCASTD 12(T), Y0 \
	VPMADDUBSW Y0, Y8, Y0 \
	VPADDW Y0, Y10, Y10 \
	VPMADDWD Y14, Y10, Y10 \
	VPADDD Y10, Y1, S

// T6FLOAT turns the int32 sum S into float32(start + S), the start at memory operand st.
#define T6FLOAT(S, st) \
	VPBROADCASTD st, Y0 \
	VPADDD Y0, S, S \
	VCVTDQ2PS S, S

// T6SCALE sets Y11 to half h's row scales sc·d (int8 scales at R14, fp16 d at BX).
// Clobbers Y12.
#define T6SCALE(h) \
	VPMOVSXBD (8*h)(R14), Y11 \
	VCVTDQ2PS Y11, Y11 \
	VCVTPH2PS (16*h)(BX), Y12 \
	VMULPS Y12, Y11, Y11

// TKX1 is the one-token kernel of the K-quant tiles in 16 blocks per 256-element
// super-block (Q6_K, Q2_K): MASKS sets the constants, BLK(TOK) runs a block (TOK
// summing its chunks against the token into Y2: T6TOK2, V6TOK2), the block's quants are
// step bytes; the accumulators live in out (zeroed first), BX points at the
// super-block's head, R14 at the block's scale bytes.
#define TKX1(MASKS, BLK, TOK, step) \
	T2ARGS1(16) \
	MASKS \
	VPXOR Y0, Y0, Y0 \
	VMOVUPS Y0, (AX) \
	VMOVUPS Y0, 32(AX) \
	TESTQ CX, CX \
	JZ done \
super: \
	MOVQ SI, BX \
	LEAQ 64(SI), R14 \
	ADDQ $320, SI \
	MOVQ $16, R13 \
blk: \
	BLK(TOK) \
	ADDQ step, SI \
	ADDQ $16, R14 \
	ADDQ $112, R10 \
	ADDQ $112, R12 \
	DECQ R13 \
	JNZ blk \
	DECQ CX \
	JNZ super \
done: \
	VZEROUPPER \
	RET

// T6BLK1 runs a Q6_K block against the token: each half's chunks rebuilt, summed by TOK.
#define T6BLK1(TOK) \
	T6CHUNKS(0) \
	TOK \
	T6FLOAT(Y2, 16(R12)) \
	T6SCALE(0) \
	T2ACC(Y2, Y11, (R12), 0) \
	T6CHUNKS(1) \
	TOK \
	T6FLOAT(Y2, 16(R12)) \
	T6SCALE(1) \
	T2ACC(Y2, Y11, (R12), 32)

// T6TOK2 is T6TOK of the token at R10 into Y2.
#define T6TOK2 T6TOK(R10, Y2)

// func tileQ6Kx1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)
//
// One token against a Q6_K tile.
TEXT ·tileQ6Kx1AVX2(SB), NOSPLIT, $0-40
	TKX1(T6MASKS, T6BLK1, T6TOK2, $192)

// T6HALFT runs half h of the block against the four tokens (quants at DI, R10, R11,
// R12; tail at 64(DI)) into the accumulators of that half, its chunks rebuilt;
// T6HALFTX is it with TOKS (T6TOKS4, or V6TOKS4 with AVX-VNNI) summing the four tokens
// into Y2, Y3, Y4 and Y9.
#define T6HALFT(h) T6HALFTX(h, T6TOKS4)

#define T6TOKS4 \
	T6TOK(DI, Y2) \
	T6TOK(R10, Y3) \
	T6TOK(R11, Y4) \
	T6TOK(R12, Y9)

#define T6HALFTX(h, TOKS) \
	TOKS \
	T6FLOAT(Y2, 80(DI)) \
	T6FLOAT(Y3, 84(DI)) \
	T6FLOAT(Y4, 88(DI)) \
	T6FLOAT(Y9, 92(DI)) \
	T6SCALE(h) \
	T2ACC(Y2, Y11, 64(DI), 32*h) \
	T2ACC(Y3, Y11, 68(DI), 64+32*h) \
	T2ACC(Y4, Y11, 72(DI), 128+32*h) \
	T2ACC(Y9, Y11, 76(DI), 192+32*h)

// TKX4 is TKX1 for four tokens at once (BLK(TOKS): T6TOKS4, V6TOKS4 summing them into
// Y2, Y3, Y4 and Y9).
#define TKX4(MASKS, BLK, TOKS, step) \
	MASKS \
	T2ARGS4(16) \
	TESTQ CX, CX \
	JZ done \
super: \
	MOVQ SI, BX \
	LEAQ 64(SI), R14 \
	ADDQ $320, SI \
	MOVQ $16, R13 \
blk: \
	BLK(TOKS) \
	ADDQ step, SI \
	ADDQ $16, R14 \
	ADDQ $112, DI \
	ADDQ $112, R10 \
	ADDQ $112, R11 \
	ADDQ $112, R12 \
	DECQ R13 \
	JNZ blk \
	DECQ CX \
	JNZ super \
done: \
	VZEROUPPER \
	RET

// T6BLK4 runs a Q6_K block against the four tokens, each half's chunks rebuilt once.
#define T6BLK4(TOKS) \
	T6CHUNKS(0) \
	T6HALFTX(0, TOKS) \
	T6CHUNKS(1) \
	T6HALFTX(1, TOKS)

// func tileQ6Kx4AVX2(nu int, tile, act *byte, out *[64]float32)
//
// tileQ6Kx1AVX2 for four tokens at once.
TEXT ·tileQ6Kx4AVX2(SB), NOSPLIT, $0-32
	TKX4(T6MASKS, T6BLK4, T6TOKS4, $192)

// T2Q4W runs word c of the block at q of the four tiles (SI, R8, R9, BX).
#define T2Q4W(q, c) \
	VPBROADCASTD (4*c)(R10), Y0 \
	VPBROADCASTD (16+4*c)(R10), Y1 \
	T2Q4M((q+64*c)(SI), (q+64*c+32)(SI), Y6, Y7) \
	T2Q4M((q+64*c)(R8), (q+64*c+32)(R8), Y8, Y9) \
	T2Q4M((q+64*c)(R9), (q+64*c+32)(R9), Y10, Y11) \
	T2Q4M((q+64*c)(BX), (q+64*c+32)(BX), Y12, Y13)

// T2FIN4 scales tile P's sums S0, S1 of the block (made float by SUM: T2Q4SUM or
// TNLSUM) by its scales at sc(P) into its accumulators at off(AX). Clobbers Y0–Y3.
#define T2FIN4(SUM, P, sc, S0, S1, off) \
	SUM(S0, S1) \
	VCVTPH2PS sc(P), Y2 \
	VCVTPH2PS (sc+16)(P), Y3 \
	T2ACC(S0, Y2, (R12), off) \
	T2ACC(S1, Y3, (R12), off+32)

// T2Q4SUM turns the int16 sums of a Q4_0 block into float32(start + Σ q·y).
#define T2Q4SUM(S0, S1) T2SUM(S0, S1, 16(R12))

// T2BLK4 runs the block at q (scales at sc) of the four tiles: their words (W: T2Q4W,
// TNLWM) into the sums Y6…Y12 and S7 (Y13, or Y14 where Y13 holds a table), then
// T2FIN4 with SUM.
#define T2BLK4(W, SUM, q, sc, S7) \
	T2ZERO7 \
	VPXOR S7, S7, S7 \
	W(q, 0) \
	W(q, 1) \
	W(q, 2) \
	W(q, 3) \
	T2FIN4(SUM, SI, sc, Y6, Y7, 0) \
	T2FIN4(SUM, R8, sc, Y8, Y9, 64) \
	T2FIN4(SUM, R9, sc, Y10, Y11, 128) \
	T2FIN4(SUM, BX, sc, Y12, S7, 192) \
	ADDQ $176, R10 \
	ADDQ $176, R12

// T2X1M is the body of the four-tile kernels of 576-byte units of two 32-element
// blocks (Q4_0, IQ4_NL): MASKS sets up the constants, T2BLK4(W, SUM, …, S7) runs
// each block.
#define T2X1M(MASKS, W, SUM, S7) \
	MASKS \
	T2ARGSM(32) \
	TESTQ CX, CX \
	JZ x1m_done \
x1m_loop: \
	T2BLK4(W, SUM, 0, 512, S7) \
	T2BLK4(W, SUM, 256, 544, S7) \
	ADDQ $576, SI \
	ADDQ $576, R8 \
	ADDQ $576, R9 \
	ADDQ $576, BX \
	DECQ CX \
	JNZ x1m_loop \
x1m_done: \
	VZEROUPPER \
	RET

// func tileQ4x1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ4x1AVX2 on four tiles at once (tile + k·stride, outputs at out[16k:]), a word
// of each in turn: four streams from memory. The accumulators live in out.
TEXT ·tileQ4x1mAVX2(SB), NOSPLIT, $0-48
	T2X1M(T2MASKS, T2Q4W, T2Q4SUM, Y13)

// T2Q4KW runs word c of sub-block R11/256 of the four Q4_K tiles (quants at 320 in each
// super-block).
#define T2Q4KW(c) \
	VPBROADCASTD (4*c)(R10), Y0 \
	VPBROADCASTD (16+4*c)(R10), Y1 \
	T2Q4M((320+64*c)(SI)(R11*1), (352+64*c)(SI)(R11*1), Y6, Y7) \
	T2Q4M((320+64*c)(R8)(R11*1), (352+64*c)(R8)(R11*1), Y8, Y9) \
	T2Q4M((320+64*c)(R9)(R11*1), (352+64*c)(R9)(R11*1), Y10, Y11) \
	T2Q4M((320+64*c)(BX)(R11*1), (352+64*c)(BX)(R11*1), Y12, Y13)

// T2Q4KFIN scales tile P's int16 sums S0, S1 of sub-block R14/16 (its head at P) and
// adds its mins, into its accumulators at off(AX). Clobbers Y0–Y5.
#define T2Q4KFIN(P, S0, S1, off) \
	VPMADDWD Y14, S0, S0 \
	VPMADDWD Y14, S1, S1 \
	T2KFIND(P, S0, S1, off)

// T2KFIND is T2Q4KFIN with int32 sums S0, S1 (Q4_K and Q5_K tiles share the head).
#define T2KFIND(P, S0, S1, off) \
	T2SUMD(S0, S1, 16(R12)) \
	T2KFAC(64(P)(R14*1), 72(P)(R14*1), 192(P)(R14*1), 200(P)(R14*1), P) \
	T2KACC1(S0, S1, off)

// T2SUPERM is the body of the AVX2 four-tile kernels over 256-element super-blocks of
// eight 32-element sub-blocks (Q4_K, IQ4_XS), a word of each tile in turn: SETUP sets
// the constants, ZERO clears the int sums, W(c) runs word c of sub-block R11/256 of
// the four tiles, FIN scales the sums into the accumulators in out (each tile's scales
// from its super-block's head through R14, 16·sub-block), and the tiles step n bytes
// per super-block.
#define T2SUPERM(SETUP, ZERO, W, FIN, n) \
	SETUP \
	T2ARGSM(32) \
	TESTQ CX, CX \
	JZ done \
super: \
	XORQ R11, R11 \
	XORQ R14, R14 \
	MOVQ $8, R13 \
sub: \
	ZERO \
	W(0) \
	W(1) \
	W(2) \
	W(3) \
	FIN \
	ADDQ $176, R10 \
	ADDQ $176, R12 \
	ADDQ $256, R11 \
	ADDQ $16, R14 \
	DECQ R13 \
	JNZ sub \
	ADDQ n, SI \
	ADDQ n, R8 \
	ADDQ n, R9 \
	ADDQ n, BX \
	DECQ CX \
	JNZ super \
done: \
	VZEROUPPER \
	RET

// FIN4T runs FIN(P, S0, S1, off) for the four tiles: their sums Y6…Y12 and S7 (Y13,
// or Y14 where Y13 holds a table), their accumulators 64 bytes apart in out.
#define FIN4T(FIN, S7) \
	FIN(SI, Y6, Y7, 0) \
	FIN(R8, Y8, Y9, 64) \
	FIN(R9, Y10, Y11, 128) \
	FIN(BX, Y12, S7, 192)

// T2Q4KFIN4 is T2Q4KFIN for the four tiles.
#define T2Q4KFIN4 FIN4T(T2Q4KFIN, Y13)

// func tileQ4Kx1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ4Kx1AVX2 on four tiles at once (tile + k·stride, outputs at out[16k:]), a word
// of each in turn (T2SUPERM), its quants through R11.
TEXT ·tileQ4Kx1mAVX2(SB), NOSPLIT, $0-48
	T2SUPERM(T2MASKS, T2ZERO8, T2Q4KW, T2Q4KFIN4, $2368)

// T6CHUNKSM is T6CHUNKS for block R11/192 of the Q6_K super-block at P (its quants at
// 320 in the super-block).
#define T6CHUNKSM(P, h) T6BITS((320+32*h)(P)(R11*1), (384+32*h)(P)(R11*1), (448+32*h)(P)(R11*1))

// T6HALFM runs half h of block R11/192 of the tile whose super-block is at P against
// the token (R10, R12) into its accumulators at off(AX) (scales through R14).
#define T6HALFM(P, h, off) \
	T6CHUNKSM(P, h) \
	T6HALFMT(P, h, off)

// V6HALFM is T6HALFM with AVX-VNNI.
#define V6HALFM(P, h, off) \
	T6CHUNKSM(P, h) \
	T6HALFMTX(P, h, off, V6TOK2)

// T6HALFMT is T6HALFM after the chunks are rebuilt (Q6_K and Q3_K tiles share the
// head).
#define T6HALFMT(P, h, off) T6HALFMTX(P, h, off, T6TOK2)

// T6HALFMTX is T6HALFMT with TOK (T6TOK2, V6TOK2) summing the chunks into Y2.
#define T6HALFMTX(P, h, off, TOK) \
	TOK \
	T6FLOAT(Y2, 16(R12)) \
	VPMOVSXBD (64+8*h)(P)(R14*1), Y11 \
	VCVTDQ2PS Y11, Y11 \
	VCVTPH2PS (16*h)(P), Y12 \
	VMULPS Y12, Y11, Y11 \
	T2ACC(Y2, Y11, (R12), off)

// TQ6KX1M is the Q6_K four-tile kernel with HALFM (T6HALFM, V6HALFM).
#define TQ6KX1M(HALFM) \
	T6MASKS \
	T2ARGSM(16) \
	TESTQ CX, CX \
	JZ done \
super: \
	XORQ R11, R11 \
	XORQ R14, R14 \
	MOVQ $16, R13 \
blk: \
	HALFM(SI, 0, 0) \
	HALFM(SI, 1, 32) \
	HALFM(R8, 0, 64) \
	HALFM(R8, 1, 96) \
	HALFM(R9, 0, 128) \
	HALFM(R9, 1, 160) \
	HALFM(BX, 0, 192) \
	HALFM(BX, 1, 224) \
	ADDQ $112, R10 \
	ADDQ $112, R12 \
	ADDQ $192, R11 \
	ADDQ $16, R14 \
	DECQ R13 \
	JNZ blk \
	ADDQ $3392, SI \
	ADDQ $3392, R8 \
	ADDQ $3392, R9 \
	ADDQ $3392, BX \
	DECQ CX \
	JNZ super \
done: \
	VZEROUPPER \
	RET

// func tileQ6Kx1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ6Kx1AVX2 on four tiles at once (tile + k·stride, outputs at out[16k:]), a block
// of each in turn; each tile's quants come through R11 (192·block), its scales through
// R14 (16·block).
TEXT ·tileQ6Kx1mAVX2(SB), NOSPLIT, $0-48
	TQ6KX1M(T6HALFM)

// The IQ4_NL kernels: Q4_0's tile layout, the nibbles indices into IQ4_NL's levels
// (stored as level+128 for VPDPBUSD at the VNNI level, so its integer is start +
// Σ (level+128)·y = Σ level·y). Here VPSHUFB looks the signed levels up
// (lutSignedIQ4NL, both lanes) and |level| × y·sign(level) runs through VPMADDUBSW
// (pair sums |·| ≤ 2·127·127 < 2¹⁵), each product widened by VPMADDWD. Y13 holds the
// table.

// TNLMASKS is T2MASKS and Y13 = the signed levels.
#define TNLMASKS \
	T2MASKS \
	VBROADCASTI128 ·lutSignedIQ4NL(SB), Y13

// TNLH adds one half-word of nibbles at memory operand m times the activation words
// YL (low nibbles' elements) and YH (high nibbles') to the int32 sum S. Clobbers Y2,
// Y3, Y8, Y9.
#define TNLH(m, YL, YH, S) TNLHX(m, YL, YH, S, Y8, Y9, Y14)

// TNLHX is TNLH with the temporaries T0, T1 and the int16 ones at ONES (a register or
// memory operand).
#define TNLHX(m, YL, YH, S, T0, T1, ONES) \
	VMOVDQU m, Y2 \
	VPSRLW $4, Y2, Y3 \
	VPAND Y15, Y2, Y2 \
	VPAND Y15, Y3, Y3 \
	VPSHUFB Y2, Y13, Y2 \
	VPSHUFB Y3, Y13, Y3 \
	VPSIGNB Y2, YL, T0 \
	VPSIGNB Y3, YH, T1 \
	VPABSB Y2, Y2 \
	VPABSB Y3, Y3 \
	VPMADDUBSW T0, Y2, Y2 \
	VPMADDUBSW T1, Y3, Y3 \
	VPMADDWD ONES, Y2, Y2 \
	VPMADDWD ONES, Y3, Y3 \
	VPADDD Y2, S, S \
	VPADDD Y3, S, S

// TNLW1 runs word c of the block at q(SI) against the token at R10 into Y6, Y7.
#define TNLW1(q, c) \
	VPBROADCASTD (4*c)(R10), Y0 \
	VPBROADCASTD (16+4*c)(R10), Y1 \
	TNLH((q+64*c)(SI), Y0, Y1, Y6) \
	TNLH((q+64*c+32)(SI), Y0, Y1, Y7)

// TNLBLK1 runs the block at q (scales at sc) of the tile against the token into the
// accumulators Y10, Y11.
#define TNLBLK1(q, sc) \
	VPXOR Y6, Y6, Y6 \
	VPXOR Y7, Y7, Y7 \
	TNLW1(q, 0) \
	TNLW1(q, 1) \
	TNLW1(q, 2) \
	TNLW1(q, 3) \
	VCVTDQ2PS Y6, Y6 \
	VCVTDQ2PS Y7, Y7 \
	VCVTPH2PS sc(SI), Y2 \
	VCVTPH2PS (sc+16)(SI), Y3 \
	VBROADCASTSS (R12), Y0 \
	VMULPS Y0, Y2, Y2 \
	VMULPS Y0, Y3, Y3 \
	VFMADD231PS Y2, Y6, Y10 \
	VFMADD231PS Y3, Y7, Y11 \
	ADDQ $176, R10 \
	ADDQ $176, R12

// func tileIQ4NLx1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileIQ4NLx1AVX2(SB), NOSPLIT, $0-40
	T2ARGS1(32)
	TNLMASKS
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	TESTQ CX, CX
	JZ nla1_done

nla1_loop:
	TNLBLK1(0, 512)
	TNLBLK1(256, 544)
	ADDQ $576, SI
	DECQ CX
	JNZ nla1_loop

nla1_done:
	VMOVUPS Y10, (AX)
	VMOVUPS Y11, 32(AX)
	VZEROUPPER
	RET

// TNLW4 runs half h of word c of the block at q(SI) against the four tokens (DI, R10,
// R11, R12) into Y4…Y7 (token t: Y4+t).
#define TNLW4(q, c, h) \
	VMOVDQU (q+64*c+32*h)(SI), Y2 \
	VPSRLW $4, Y2, Y3 \
	VPAND Y15, Y2, Y2 \
	VPAND Y15, Y3, Y3 \
	VPSHUFB Y2, Y13, Y2 \
	VPSHUFB Y3, Y13, Y3 \
	VPABSB Y2, Y10 \
	VPABSB Y3, Y11 \
	TNLT(DI, c, Y4) \
	TNLT(R10, c, Y5) \
	TNLT(R11, c, Y6) \
	TNLT(R12, c, Y7)

// TNLT adds one token's (at T) products with TNLW4's levels (signs Y2, Y3; absolute
// values Y10, Y11) to the int32 sum S. Clobbers Y0, Y1, Y8, Y9.
#define TNLT(T, c, S) \
	VPBROADCASTD (4*c)(T), Y0 \
	VPBROADCASTD (16+4*c)(T), Y1 \
	VPSIGNB Y2, Y0, Y8 \
	VPSIGNB Y3, Y1, Y9 \
	VPMADDUBSW Y8, Y10, Y8 \
	VPMADDUBSW Y9, Y11, Y9 \
	VPMADDWD Y14, Y8, Y8 \
	VPMADDWD Y14, Y9, Y9 \
	VPADDD Y8, S, S \
	VPADDD Y9, S, S

// TNLHALF4 runs half h of the block at q against the four tokens into their
// accumulators in out (rows 8h…8h+7), its row scales set into Y12 by SC (NLSC, XSSC).
#define TNLHALF4(q, h, SC) \
	VPXOR Y4, Y4, Y4 \
	VPXOR Y5, Y5, Y5 \
	VPXOR Y6, Y6, Y6 \
	VPXOR Y7, Y7, Y7 \
	TNLW4(q, 0, h) \
	TNLW4(q, 1, h) \
	TNLW4(q, 2, h) \
	TNLW4(q, 3, h) \
	VCVTDQ2PS Y4, Y4 \
	VCVTDQ2PS Y5, Y5 \
	VCVTDQ2PS Y6, Y6 \
	VCVTDQ2PS Y7, Y7 \
	SC \
	T2ACC(Y4, Y12, 128(DI), 32*h) \
	T2ACC(Y5, Y12, 132(DI), 64+32*h) \
	T2ACC(Y6, Y12, 136(DI), 128+32*h) \
	T2ACC(Y7, Y12, 140(DI), 192+32*h)

// NLSC(sc, h) sets Y12 to half h of an IQ4_NL block's fp16 scales at sc(SI).
#define NLSC(sc, h) VCVTPH2PS (sc+16*h)(SI), Y12

// XSSC(h) sets Y12 to half h of an IQ4_XS sub-block's row scales d·(ls−32): int8 at
// (8h)(R14), fp16 d at (16h)(BX). Clobbers Y2.
#define XSSC(h) \
	VPMOVSXBD (8*h)(R14), Y12 \
	VCVTDQ2PS Y12, Y12 \
	VCVTPH2PS (16*h)(BX), Y2 \
	VMULPS Y2, Y12, Y12

// TNLBLK4 runs the block at q (scales at sc) against the four tokens.
#define TNLBLK4(q, sc) \
	TNLHALF4(q, 0, NLSC(sc, 0)) \
	TNLHALF4(q, 1, NLSC(sc, 1)) \
	ADDQ $176, DI \
	ADDQ $176, R10 \
	ADDQ $176, R11 \
	ADDQ $176, R12

// func tileIQ4NLx4AVX2(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileIQ4NLx4AVX2(SB), NOSPLIT, $0-32
	TNLMASKS
	T2ARGS4(32)
	TESTQ CX, CX
	JZ nla4_done

nla4_loop:
	TNLBLK4(0, 512)
	TNLBLK4(256, 544)
	ADDQ $576, SI
	DECQ CX
	JNZ nla4_loop

nla4_done:
	VZEROUPPER
	RET

// The IQ4_NL four-tile kernel (AMD, as tileQ4x1mAVX2): each word's activations in Y0,
// Y1, the four tiles' int32 sums in Y6…Y12 and Y14 (tile k: rows 0–7 and 8–15), so the
// int16 ones come from memory (t2ones).

DATA t2ones<>+0(SB)/8, $0x0001000100010001
DATA t2ones<>+8(SB)/8, $0x0001000100010001
DATA t2ones<>+16(SB)/8, $0x0001000100010001
DATA t2ones<>+24(SB)/8, $0x0001000100010001
GLOBL t2ones<>(SB), RODATA|NOPTR, $32

// TNLHM is TNLH with the word's activations in Y0, Y1 and the ones in memory. Clobbers
// Y2–Y5.
#define TNLHM(m, S) TNLHX(m, Y0, Y1, S, Y4, Y5, t2ones<>(SB))

// TNLWM runs word c of the block at q of the four tiles.
#define TNLWM(q, c) TNLWMP(c, (q+64*c)(SI), (q+64*c+32)(SI), (q+64*c)(R8), (q+64*c+32)(R8), (q+64*c)(R9), (q+64*c+32)(R9), (q+64*c)(BX), (q+64*c+32)(BX))

// TNLWMP runs word c of a block of the four tiles, its halves at memory operands
// a0, a1 (tile SI) … d0, d1 (tile BX), into the sums Y6…Y12 and Y14.
#define TNLWMP(c, a0, a1, b0, b1, c0, c1, d0, d1) \
	VPBROADCASTD (4*c)(R10), Y0 \
	VPBROADCASTD (16+4*c)(R10), Y1 \
	TNLHM(a0, Y6) \
	TNLHM(a1, Y7) \
	TNLHM(b0, Y8) \
	TNLHM(b1, Y9) \
	TNLHM(c0, Y10) \
	TNLHM(c1, Y11) \
	TNLHM(d0, Y12) \
	TNLHM(d1, Y14)

// TNLSUM turns the int32 sums of an IQ4_NL block into float32.
#define TNLSUM(S0, S1) \
	VCVTDQ2PS S0, S0 \
	VCVTDQ2PS S1, S1

// func tileIQ4NLx1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileIQ4NLx1AVX2 on four tiles at once (tile + k·stride, outputs at out[16k:]), a word
// of each in turn.
TEXT ·tileIQ4NLx1mAVX2(SB), NOSPLIT, $0-48
	T2X1M(TNLMASKS, TNLWM, TNLSUM, Y14)

// The IQ4_XS kernels: IQ4_NL's products on IQ4_XS tiles (per 256-element super-block
// 16 fp16 d, 32 bytes of padding, 8×16 int8 scales ls−32, then eight sub-blocks of
// Q4_0's nibble words, tile_lut.go), each sub-block's row scales d·(ls−32) (XSSC).
// BX points at the super-block's head, R14 at the sub-block's scales.

// XSHEAD starts a super-block at SI.
#define XSHEAD \
	MOVQ SI, BX \
	LEAQ 64(SI), R14 \
	ADDQ $192, SI \
	MOVQ $8, R13

// TXSX1 is the IQ4_XS one-token kernel: MASKS (TNLMASKS, VNLMASKS) sets the
// constants, ONE (TNLONE, VNLONE) sums nibble word c of the sub-block at SI against
// the token into Y6, Y7, SUM (TNLSUM, VQ4SUM) makes them float32.
#define TXSX1(MASKS, ONE, SUM) \
	T2ARGS1(32) \
	MASKS \
	VPXOR Y10, Y10, Y10 \
	VPXOR Y11, Y11, Y11 \
	TESTQ CX, CX \
	JZ done \
super: \
	XSHEAD \
sub: \
	VPXOR Y6, Y6, Y6 \
	VPXOR Y7, Y7, Y7 \
	ONE(0) \
	ONE(1) \
	ONE(2) \
	ONE(3) \
	SUM(Y6, Y7) \
	XSSC(0) \
	VMOVUPS Y12, Y4 \
	XSSC(1) \
	VBROADCASTSS (R12), Y0 \
	VMULPS Y0, Y4, Y4 \
	VMULPS Y0, Y12, Y12 \
	VFMADD231PS Y4, Y6, Y10 \
	VFMADD231PS Y12, Y7, Y11 \
	ADDQ $256, SI \
	ADDQ $16, R14 \
	ADDQ $176, R10 \
	ADDQ $176, R12 \
	DECQ R13 \
	JNZ sub \
	DECQ CX \
	JNZ super \
done: \
	VMOVUPS Y10, (AX) \
	VMOVUPS Y11, 32(AX) \
	VZEROUPPER \
	RET

// TNLONE is TNLW1 of the block at SI.
#define TNLONE(c) TNLW1(0, c)

// func tileIQ4XSx1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileIQ4XSx1AVX2(SB), NOSPLIT, $0-40
	TXSX1(TNLMASKS, TNLONE, TNLSUM)

// XSWM runs word c of sub-block R11/256 of the four IQ4_XS tiles (its nibbles at 192
// in each super-block).
#define XSWM(c) TNLWMP(c, (192+64*c)(SI)(R11*1), (224+64*c)(SI)(R11*1), (192+64*c)(R8)(R11*1), (224+64*c)(R8)(R11*1), (192+64*c)(R9)(R11*1), (224+64*c)(R9)(R11*1), (192+64*c)(BX)(R11*1), (224+64*c)(BX)(R11*1))

// XSSCM sets RS to half h of the row scales d·(ls−32) of sub-block R14/16 of the
// IQ4_XS tile at P, as XSSC does. Clobbers Y2.
#define XSSCM(P, h, RS) \
	VPMOVSXBD (64+8*h)(P)(R14*1), RS \
	VCVTDQ2PS RS, RS \
	VCVTPH2PS (16*h)(P), Y2 \
	VMULPS Y2, RS, RS

// XSFINM scales tile P's int32 sums S0 (rows 0–7), S1 (rows 8–15) of sub-block R14/16
// into its accumulators at off(AX): tileIQ4XSx1AVX2's operations. Clobbers Y0–Y3.
#define XSFINM(P, S0, S1, off) XSFINX(TNLSUM, P, S0, S1, off)

// XSFINX is XSFINM with SUM (TNLSUM; VQ4SUM with AVX-VNNI) making the sums float32.
#define XSFINX(SUM, P, S0, S1, off) \
	SUM(S0, S1) \
	XSSCM(P, 0, Y3) \
	T2ACC(S0, Y3, (R12), off) \
	XSSCM(P, 1, Y3) \
	T2ACC(S1, Y3, (R12), off+32)

// XSZERO clears the IQ4_XS four-tile sums (Y6…Y12 and Y14: Y13 holds the table);
// XSFIN4 is XSFINM for the four tiles.
#define XSZERO \
	T2ZERO7 \
	VPXOR Y14, Y14, Y14
#define XSFIN4 FIN4T(XSFINM, Y14)

// func tileIQ4XSx1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileIQ4XSx1AVX2 on four tiles at once (tile + k·stride, outputs at out[16k:]), a word
// of each in turn, as tileQ4Kx1mAVX2 (T2SUPERM), its nibbles through R11.
TEXT ·tileIQ4XSx1mAVX2(SB), NOSPLIT, $0-48
	T2SUPERM(TNLMASKS, XSZERO, XSWM, XSFIN4, $2240)

// func tileIQ4XSx4AVX2(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileIQ4XSx4AVX2(SB), NOSPLIT, $0-32
	TNLMASKS
	T2ARGS4(32)
	TESTQ CX, CX
	JZ xsa4_done

xsa4_super:
	XSHEAD

xsa4_sub:
	TNLHALF4(0, 0, XSSC(0))
	TNLHALF4(0, 1, XSSC(1))
	ADDQ $256, SI
	ADDQ $16, R14
	ADDQ $176, DI
	ADDQ $176, R10
	ADDQ $176, R11
	ADDQ $176, R12
	DECQ R13
	JNZ xsa4_sub
	DECQ CX
	JNZ xsa4_super

xsa4_done:
	VZEROUPPER
	RET

// T2ADDW adds T2Q5M's int16 pair sums (Y2, Y3) to the int16 sums S0, S1; T2ADDD widens
// them to int32 first.
#define T2ADDW(S0, S1) \
	VPADDW Y2, S0, S0 \
	VPADDW Y3, S1, S1

#define T2ADDD(S0, S1) \
	VPMADDWD t2ones<>(SB), Y2, Y2 \
	VPMADDWD t2ones<>(SB), Y3, Y3 \
	VPADDD Y2, S0, S0 \
	VPADDD Y3, S1, S1

// T2Q5W runs word c of the sub-block of the four Q5_K tiles.
#define T2Q5W(c, ADD, SH) \
	T2Q5M(SI, c, Y6, Y7, ADD, SH) \
	T2Q5M(R8, c, Y8, Y9, ADD, SH) \
	T2Q5M(R9, c, Y10, Y11, ADD, SH) \
	T2Q5M(BX, c, Y12, Y13, ADD, SH)

// T2Q5SUB runs sub-block R11/256 of the four Q5_K tiles, its fifth bits moved to bit 4
// by SH X1, and steps to the next.
#define T2Q5SUB(SH) \
	T2ACTS \
	T2ZERO8 \
	T2Q5W(0, T2ADDW, SH) \
	T2Q5W(1, T2ADDW, SH) \
	T2WIDEN8(t2ones<>(SB)) \
	T2Q5W(2, T2ADDD, SH) \
	T2Q5W(3, T2ADDD, SH) \
	T2KFIND(SI, Y6, Y7, 0) \
	T2KFIND(R8, Y8, Y9, 64) \
	T2KFIND(R9, Y10, Y11, 128) \
	T2KFIND(BX, Y12, Y13, 192) \
	ADDQ $176, R10 \
	ADDQ $176, R12 \
	ADDQ $256, R11 \
	ADDQ $16, R14

// func tileQ5Kx1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ5Kx1AVX2 on four tiles at once (tile + k·stride, outputs at out[16k:]), a word
// of each in turn, as tileQ4Kx1mAVX2. Sub-block j's fifth bits (bit j of the high-bit
// bytes) reach bit 4 by a word shift, left by 4−j for the first four sub-blocks and
// right by j−4 for the others (X1; R13 counts), one operation where a compare with
// the bit takes three.
TEXT ·tileQ5Kx1mAVX2(SB), NOSPLIT, $256-48
	T2MASKS
	T2ARGSM(32)
	VMOVDQU t2q5c10<>(SB), Y14
	TESTQ CX, CX
	JZ q5kam_done

q5kam_super:
	XORQ R11, R11
	XORQ R14, R14
	MOVQ $4, R13

q5kam_lo:
	VMOVQ R13, X1
	T2Q5SUB(VPSLLW)
	DECQ R13
	JNZ q5kam_lo

q5kam_hi:
	VMOVQ R13, X1
	T2Q5SUB(VPSRLW)
	INCQ R13
	CMPQ R13, $4
	JNE q5kam_hi
	ADDQ $2880, SI
	ADDQ $2880, R8
	ADDQ $2880, R9
	ADDQ $2880, BX
	DECQ CX
	JNZ q5kam_super

q5kam_done:
	VZEROUPPER
	RET

// The Q3_K kernels: Q6_K's with 3-bit quants (tile.go: Q6_K's head, then per pair of
// 16-element blocks a crumb word each and one word of their high bits), stored as q+4
// (0…7). Chunk c of block p of a pair is its crumbs' bits 2c…2c+1 plus 4 times the
// high-bit word's bit 4p+c: the high word is shifted left 2 (p = 0) or right 2 (p = 1)
// once, so that bit 2 of each byte is the chunk's after a further right shift by c.
// Y13 holds the 0x03 bytes, Y15 the 0x04 bytes; VPMADDUBSW pair sums are |·| ≤ 2·7·128.

// T2Q2MASKS is T2MASKS with Y13 = 0x03 bytes.
#define T2Q2MASKS \
	T2MASKS \
	MOVL $0x03030303, R9 \
	MOVQ R9, X13 \
	VPBROADCASTD X13, Y13

// T3MASKS is T2Q2MASKS and Y15 = 0x04 bytes.
#define T3MASKS \
	T2Q2MASKS \
	MOVL $0x04040404, R9 \
	MOVQ R9, X15 \
	VPBROADCASTD X15, Y15

// T2CRUMBS splits one half (rows 0–7 or 8–15) of a crumb word at memory operand m into
// its four chunks in Y5…Y8. Clobbers Y2.
#define T2CRUMBS(m) \
	VMOVDQU m, Y2 \
	VPAND Y13, Y2, Y5 \
	VPSRLW $2, Y2, Y6 \
	VPAND Y13, Y6, Y6 \
	VPSRLW $4, Y2, Y7 \
	VPAND Y13, Y7, Y7 \
	VPSRLW $6, Y2, Y8 \
	VPAND Y13, Y8, Y8

// T3BITS rebuilds one half (rows 0–7 or 8–15) of a block, its crumbs at memory operand
// lw and its pair's high bits at hw (PRE: VPSLLW for the pair's first block, VPSRLW for
// its second), as its four chunks in Y5…Y8. Clobbers Y2, Y3, Y9.
#define T3BITS(lw, hw, PRE) \
	T2CRUMBS(lw) \
	VMOVDQU hw, Y3 \
	PRE $2, Y3, Y3 \
	VPAND Y15, Y3, Y9 \
	VPOR Y9, Y5, Y5 \
	VPSRLW $1, Y3, Y9 \
	VPAND Y15, Y9, Y9 \
	VPOR Y9, Y6, Y6 \
	VPSRLW $2, Y3, Y9 \
	VPAND Y15, Y9, Y9 \
	VPOR Y9, Y7, Y7 \
	VPSRLW $3, Y3, Y9 \
	VPAND Y15, Y9, Y9 \
	VPOR Y9, Y8, Y8

// T3CHUNKS is T3BITS for half h of block p of the pair at SI.
#define T3CHUNKS(p, h, PRE) T3BITS((64*p+32*h)(SI), (128+32*h)(SI), PRE)

// T3HALF1 runs half h of block p of the pair against the token (R10, R12) into the
// accumulators of that half.
#define T3HALF1(p, h, PRE) T3HALF1X(p, h, PRE, T6TOK2)

// T3HALF1X is T3HALF1 with TOK (T6TOK2; V6TOK2 with AVX-VNNI) summing the chunks.
#define T3HALF1X(p, h, PRE, TOK) \
	T3CHUNKS(p, h, PRE) \
	TOK \
	T6FLOAT(Y2, 16(R12)) \
	T6SCALE(h) \
	T2ACC(Y2, Y11, (R12), 32*h)

// T3NEXT1 steps the one-token kernels to the next block.
#define T3NEXT1 \
	ADDQ $16, R14 \
	ADDQ $112, R10 \
	ADDQ $112, R12

// T3LOOP is the loop of the one- and four-token Q3_K kernels over CX super-blocks at SI
// (BX its head, R14 its scale bytes, R13 counting its eight pairs of blocks): HALF runs
// half h of block p of a pair (its high bits shifted by PRE), NEXT steps to the next
// block.
#define T3LOOP(HALF, NEXT) \
	TESTQ CX, CX \
	JZ q3k_done \
q3k_super: \
	MOVQ SI, BX \
	LEAQ 64(SI), R14 \
	ADDQ $320, SI \
	MOVQ $8, R13 \
q3k_pair: \
	HALF(0, 0, VPSLLW) \
	HALF(0, 1, VPSLLW) \
	NEXT \
	HALF(1, 0, VPSRLW) \
	HALF(1, 1, VPSRLW) \
	NEXT \
	ADDQ $192, SI \
	DECQ R13 \
	JNZ q3k_pair \
	DECQ CX \
	JNZ q3k_super \
q3k_done: \
	VZEROUPPER \
	RET

// func tileQ3Kx1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)
//
// One token against a Q3_K tile; the accumulators live in out (zeroed first).
TEXT ·tileQ3Kx1AVX2(SB), NOSPLIT, $0-40
	T2ARGS1(16)
	T3MASKS
	VPXOR Y0, Y0, Y0
	VMOVUPS Y0, (AX)
	VMOVUPS Y0, 32(AX)
	T3LOOP(T3HALF1, T3NEXT1)

// T3HALF4 is T6HALF for half h of block p of the Q3_K pair at SI.
#define T3HALF4(p, h, PRE) \
	T3CHUNKS(p, h, PRE) \
	T6HALFT(h)

// T3NEXT4 steps the four-token kernel to the next block.
#define T3NEXT4 \
	ADDQ $16, R14 \
	ADDQ $112, DI \
	ADDQ $112, R10 \
	ADDQ $112, R11 \
	ADDQ $112, R12

// func tileQ3Kx4AVX2(nu int, tile, act *byte, out *[64]float32)
//
// tileQ3Kx1AVX2 for four tokens at once: each half's chunks are rebuilt once for the
// four tokens.
TEXT ·tileQ3Kx4AVX2(SB), NOSPLIT, $0-32
	T3MASKS
	T2ARGS4(16)
	T3LOOP(T3HALF4, T3NEXT4)

// T3HALFM is T6HALFM for half h of block p of pair R11/192 of the Q3_K super-block at P.
#define T3HALFM(P, p, h, PRE, off) \
	T3BITS((320+64*p+32*h)(P)(R11*1), (448+32*h)(P)(R11*1), PRE) \
	T6HALFMT(P, h, off)

// T3BLKM runs block p of the pair of the four tiles and steps to the next block.
#define T3BLKM(p, PRE) \
	T3HALFM(SI, p, 0, PRE, 0) \
	T3HALFM(SI, p, 1, PRE, 32) \
	T3HALFM(R8, p, 0, PRE, 64) \
	T3HALFM(R8, p, 1, PRE, 96) \
	T3HALFM(R9, p, 0, PRE, 128) \
	T3HALFM(R9, p, 1, PRE, 160) \
	T3HALFM(BX, p, 0, PRE, 192) \
	T3HALFM(BX, p, 1, PRE, 224) \
	ADDQ $112, R10 \
	ADDQ $112, R12 \
	ADDQ $16, R14

// func tileQ3Kx1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ3Kx1AVX2 on four tiles at once (tile + k·stride, outputs at out[16k:]), a block
// of each in turn, as tileQ6Kx1mAVX2 (quants through R11: 192·pair).
TEXT ·tileQ3Kx1mAVX2(SB), NOSPLIT, $0-48
	T3MASKS
	T2ARGSM(16)
	TESTQ CX, CX
	JZ q3kam_done

q3kam_super:
	XORQ R11, R11
	XORQ R14, R14
	MOVQ $8, R13

q3kam_pair:
	T3BLKM(0, VPSLLW)
	T3BLKM(1, VPSRLW)
	ADDQ $192, R11
	DECQ R13
	JNZ q3kam_pair
	ADDQ $1856, SI
	ADDQ $1856, R8
	ADDQ $1856, R9
	ADDQ $1856, BX
	DECQ CX
	JNZ q3kam_super

q3kam_done:
	VZEROUPPER
	RET

// The Q2_K kernels: per block of a tile (tile.go) four chunks of two-bit quants from a
// crumb word (T2CRUMBS), summed as Q6_K's (pair sums |·| ≤ 2·3·128), then Q4_K's float
// operations with the scale and min of each row split from one byte. Y13 holds the
// 0x03 bytes, Y15 the 0x0F bytes.

// T2Q2SC sets Y11 to half h's row scales d·sc and Y12 to its min factors −dmin·m
// (scale-and-min bytes at memory operand m, the head's fp16 d and dmin at P).
// Clobbers Y0.
#define T2Q2SC(m, P, h) \
	VPMOVZXBD m, Y11 \
	VPSRLD $4, Y11, Y12 \
	VPAND Y15, Y11, Y11 \
	VCVTDQ2PS Y11, Y11 \
	VCVTPH2PS (16*h)(P), Y0 \
	VMULPS Y0, Y11, Y11 \
	VCVTDQ2PS Y12, Y12 \
	VCVTPH2PS (32+16*h)(P), Y0 \
	VXORPS t2sign<>(SB), Y0, Y0 \
	VMULPS Y0, Y12, Y12

// T2Q2T1 runs half h of a block (crumbs at memory operand m, scale bytes at sc, head
// at P) against the token (R10, R12) into the accumulators at off(AX).
#define T2Q2T1(m, sc, P, h, off) T2Q2T1X(m, sc, P, h, off, T6TOK2)

// T2Q2T1X is T2Q2T1 with TOK (T6TOK2; V6TOK2 with AVX-VNNI) summing the chunks.
#define T2Q2T1X(m, sc, P, h, off, TOK) \
	T2CRUMBS(m) \
	TOK \
	T6FLOAT(Y2, 16(R12)) \
	T2Q2SC(sc, P, h) \
	T2ACCMIN(Y2, Y11, (R12), Y12, 32(R12), off)

// T2Q2BLK1 runs a Q2_K block against the token, its halves' chunks summed by TOK.
#define T2Q2BLK1(TOK) \
	T2Q2T1X((SI), (R14), BX, 0, 0, TOK) \
	T2Q2T1X(32(SI), 8(R14), BX, 1, 32, TOK)

// func tileQ2Kx1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)
//
// One token against a Q2_K tile.
TEXT ·tileQ2Kx1AVX2(SB), NOSPLIT, $0-40
	TKX1(T2Q2MASKS, T2Q2BLK1, T6TOK2, $64)

// T2Q2HALF4 runs half h of the block at SI against the four tokens (quants at DI, R10,
// R11, R12; tail at 64(DI)).
#define T2Q2HALF4(h) T2Q2HALF4X(h, T6TOKS4)

// T2Q2HALF4X is T2Q2HALF4 with TOKS (T6TOKS4; V6TOKS4 with AVX-VNNI) summing the chunks
// against the four tokens.
#define T2Q2HALF4X(h, TOKS) \
	T2CRUMBS((32*h)(SI)) \
	TOKS \
	T6FLOAT(Y2, 80(DI)) \
	T6FLOAT(Y3, 84(DI)) \
	T6FLOAT(Y4, 88(DI)) \
	T6FLOAT(Y9, 92(DI)) \
	T2Q2SC((8*h)(R14), BX, h) \
	T2ACCMIN(Y2, Y11, 64(DI), Y12, 96(DI), 32*h) \
	T2ACCMIN(Y3, Y11, 68(DI), Y12, 100(DI), 64+32*h) \
	T2ACCMIN(Y4, Y11, 72(DI), Y12, 104(DI), 128+32*h) \
	T2ACCMIN(Y9, Y11, 76(DI), Y12, 108(DI), 192+32*h)

// T2Q2BLK4 runs a Q2_K block against the four tokens, its halves' chunks summed by TOKS.
#define T2Q2BLK4(TOKS) \
	T2Q2HALF4X(0, TOKS) \
	T2Q2HALF4X(1, TOKS)

// func tileQ2Kx4AVX2(nu int, tile, act *byte, out *[64]float32)
//
// tileQ2Kx1AVX2 for four tokens at once.
TEXT ·tileQ2Kx4AVX2(SB), NOSPLIT, $0-32
	TKX4(T2Q2MASKS, T2Q2BLK4, T6TOKS4, $64)

// T2Q2BLKM runs block R11/64 of the Q2_K tile whose super-block is at P against the
// token into its accumulators at off(AX) (scale bytes through R14).
#define T2Q2BLKM(P, off) \
	T2Q2T1(320(P)(R11*1), 64(P)(R14*1), P, 0, off) \
	T2Q2T1(352(P)(R11*1), 72(P)(R14*1), P, 1, off+32)

// func tileQ2Kx1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ2Kx1AVX2 on four tiles at once (tile + k·stride, outputs at out[16k:]), a block
// of each in turn, as tileQ6Kx1mAVX2 (quants through R11: 64·block).
TEXT ·tileQ2Kx1mAVX2(SB), NOSPLIT, $0-48
	T2Q2MASKS
	T2ARGSM(16)
	TESTQ CX, CX
	JZ q2kam_done

q2kam_super:
	XORQ R11, R11
	XORQ R14, R14
	MOVQ $16, R13

q2kam_blk:
	T2Q2BLKM(SI, 0)
	T2Q2BLKM(R8, 64)
	T2Q2BLKM(R9, 128)
	T2Q2BLKM(BX, 192)
	ADDQ $112, R10
	ADDQ $112, R12
	ADDQ $64, R11
	ADDQ $16, R14
	DECQ R13
	JNZ q2kam_blk
	ADDQ $1344, SI
	ADDQ $1344, R8
	ADDQ $1344, R9
	ADDQ $1344, BX
	DECQ CX
	JNZ q2kam_super

q2kam_done:
	VZEROUPPER
	RET

// The Q4_1, Q5_0 and Q5_1 kernels: Q4_0's (tile.go: per pair of 32-element blocks the
// nibble words, for Q5 a high-bit word per block, fp16 scales, for Q4_1 and Q5_1 fp16
// mins 64 bytes after the scales). R8 walks the blocks' nibbles, R9 their scales, BX
// their high-bit words (the low nibbles of word c take bit c of the high-bit word, the
// high ones bit 4+c). A Q5 quant reaches 31, so its int16 sums
// are widened every two words, as Q5_K's.

// T2HI5B adds the fifth bits of word c of a block (bits c and 4+c of the high-bit
// bytes at memory operand m) to its low and high nibbles L and H as 16s: word shifts
// take each to bit 4 (bits moved across bytes land where the 0x10 mask clears them).
// Clobbers Y0, Y1.
#define T2HI5B(m, L, H, c) \
	VMOVDQU m, Y0 \
	VPSRLW $c, Y0, Y1 \
	VPSLLW $(4-c), Y0, Y0 \
	VPAND t2q5c10<>(SB), Y0, Y0 \
	VPAND t2q5c10<>(SB), Y1, Y1 \
	VPOR Y0, L, L \
	VPOR Y1, H, H

// T2NIB5B is T2NIB for word c of the block at SI with the high bits of the word at BX.
#define T2NIB5B(c) \
	T2NIB((64*c)(SI), (64*c+32)(SI)) \
	T2HI5B((BX), Y2, Y4, c) \
	T2HI5B(32(BX), Y3, Y5, c)

// T2L1FMA adds the int32 sums Y6, Y7 of one token's block times its row scales (R9)
// times the token's scale to the accumulators Y12, Y13; T2L1MIN adds the row mins (at
// 64(R9)) times the token's min sum; T2NOMIN nothing.
#define T2L1FMA \
	T2SUMD(Y6, Y7, 16(R12)) \
	VCVTPH2PS (R9), Y2 \
	VCVTPH2PS 16(R9), Y3 \
	VBROADCASTSS (R12), Y0 \
	VMULPS Y0, Y2, Y2 \
	VMULPS Y0, Y3, Y3 \
	VFMADD231PS Y2, Y6, Y12 \
	VFMADD231PS Y3, Y7, Y13

#define T2L1MIN \
	VCVTPH2PS 64(R9), Y2 \
	VCVTPH2PS 80(R9), Y3 \
	VBROADCASTSS 32(R12), Y0 \
	VFMADD231PS Y0, Y2, Y12 \
	VFMADD231PS Y0, Y3, Y13

#define T2NOMIN

// T2L1Q4 and T2L1Q5 run the nibble words of the block at R8 against the token (R10)
// into the int32 sums Y6, Y7.
#define T2L1Q4 \
	VPXOR Y6, Y6, Y6 \
	VPXOR Y7, Y7, Y7 \
	MOVQ R8, SI \
	T2Q4ONE(0) \
	T2Q4ONE(1) \
	T2Q4ONE(2) \
	T2Q4ONE(3) \
	VPMADDWD Y14, Y6, Y6 \
	VPMADDWD Y14, Y7, Y7

#define T2L1Q5 \
	VPXOR Y6, Y6, Y6 \
	VPXOR Y7, Y7, Y7 \
	VPXOR Y8, Y8, Y8 \
	VPXOR Y9, Y9, Y9 \
	MOVQ R8, SI \
	T2NIB5B(0) \
	T2TOK(R10, 0, Y6, Y7) \
	T2NIB5B(1) \
	T2TOK(R10, 1, Y6, Y7) \
	T2NIB5B(2) \
	T2TOK(R10, 2, Y8, Y9) \
	T2NIB5B(3) \
	T2TOK(R10, 3, Y8, Y9) \
	VPMADDWD Y14, Y6, Y6 \
	VPMADDWD Y14, Y7, Y7 \
	VPMADDWD Y14, Y8, Y8 \
	VPMADDWD Y14, Y9, Y9 \
	VPADDD Y8, Y6, Y6 \
	VPADDD Y9, Y7, Y7

// TILEL1(WORDS, MIN, sc, n) is the body of a one-token kernel: units of n bytes, two
// blocks each, their scales at sc.
#define TILEL1(WORDS, MIN, sc, n) \
	T2ARGS1(32) \
	T2MASKS \
	VPXOR Y12, Y12, Y12 \
	VPXOR Y13, Y13, Y13 \
	TESTQ CX, CX \
	JZ l1_done \
l1_loop: \
	MOVQ $2, R13 \
	MOVQ SI, R8 \
	LEAQ sc(SI), R9 \
	LEAQ 512(SI), BX \
l1_block: \
	WORDS \
	T2L1FMA \
	MIN \
	ADDQ $256, R8 \
	ADDQ $32, R9 \
	ADDQ $64, BX \
	ADDQ $176, R10 \
	ADDQ $176, R12 \
	DECQ R13 \
	JNZ l1_block \
	LEAQ (n-512)(R8), SI \
	DECQ CX \
	JNZ l1_loop \
l1_done: \
	VMOVUPS Y12, (AX) \
	VMOVUPS Y13, 32(AX) \
	VZEROUPPER \
	RET

// func tileQ41x1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ41x1AVX2(SB), NOSPLIT, $0-40
	TILEL1(T2L1Q4, T2L1MIN, 512, 640)

// func tileQ50x1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ50x1AVX2(SB), NOSPLIT, $0-40
	TILEL1(T2L1Q5, T2NOMIN, 640, 704)

// func tileQ51x1AVX2(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ51x1AVX2(SB), NOSPLIT, $0-40
	TILEL1(T2L1Q5, T2L1MIN, 640, 768)

// T2L4Q4 and T2L4Q5 run the nibble words of the block at R8 against the four tokens
// into the int32 sums Y6…Y13 (token t in Y6+2t, Y7+2t).
#define T2L4Q4 \
	MOVQ R8, SI \
	T2ZERO8 \
	T2Q4ALL(0) \
	T2Q4ALL(1) \
	T2Q4ALL(2) \
	T2Q4ALL(3) \
	T2WIDEN8(Y14)

#define T2L4Q5 \
	MOVQ R8, SI \
	T2ZERO8 \
	T2Q5B4(0, T2TOK) \
	T2Q5B4(1, T2TOK) \
	T2WIDEN8(Y14) \
	T2Q5B4(2, T2TOKD) \
	T2Q5B4(3, T2TOKD)

// T2Q5B4 runs word c of the block against the four tokens with TOK (T2TOK, T2TOKD).
#define T2Q5B4(c, TOK) \
	T2NIB5B(c) \
	TOK(DI, c, Y6, Y7) \
	TOK(R10, c, Y8, Y9) \
	TOK(R11, c, Y10, Y11) \
	TOK(R12, c, Y12, Y13)

// T2L4ACC adds the four tokens' float sums times the block's row scales (Y2, Y3) to
// the accumulators in out; T2L4ACCMIN also its row mins (at 64(R9)) times each
// token's min sum (T2ACCMIN8).
#define T2L4ACC T2ACC8(128)

#define T2L4ACCMIN \
	VCVTPH2PS 64(R9), Y4 \
	VCVTPH2PS 80(R9), Y5 \
	T2ACCMIN8(128, 160)

// TILEL4(WORDS, ACC, sc, n) is TILEL1 for four tokens (accumulators in out; ACC is
// T2L4ACC or T2L4ACCMIN).
#define TILEL4(WORDS, ACC, sc, n) \
	T2MASKS \
	T2ARGS4(32) \
	TESTQ CX, CX \
	JZ l4_done \
l4_loop: \
	MOVQ $2, R13 \
	MOVQ SI, R8 \
	LEAQ sc(SI), R9 \
	LEAQ 512(SI), BX \
l4_block: \
	WORDS \
	T2SUMD(Y6, Y7, 144(DI)) \
	T2SUMD(Y8, Y9, 148(DI)) \
	T2SUMD(Y10, Y11, 152(DI)) \
	T2SUMD(Y12, Y13, 156(DI)) \
	VCVTPH2PS (R9), Y2 \
	VCVTPH2PS 16(R9), Y3 \
	ACC \
	ADDQ $256, R8 \
	ADDQ $32, R9 \
	ADDQ $64, BX \
	ADDQ $176, DI \
	ADDQ $176, R10 \
	ADDQ $176, R11 \
	ADDQ $176, R12 \
	DECQ R13 \
	JNZ l4_block \
	LEAQ (n-512)(R8), SI \
	DECQ CX \
	JNZ l4_loop \
l4_done: \
	VZEROUPPER \
	RET

// func tileQ41x4AVX2(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileQ41x4AVX2(SB), NOSPLIT, $0-32
	TILEL4(T2L4Q4, T2L4ACCMIN, 512, 640)

// func tileQ50x4AVX2(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileQ50x4AVX2(SB), NOSPLIT, $0-32
	TILEL4(T2L4Q5, T2L4ACC, 640, 704)

// func tileQ51x4AVX2(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileQ51x4AVX2(SB), NOSPLIT, $0-32
	TILEL4(T2L4Q5, T2L4ACCMIN, 640, 768)

// TQ8X1M is the Q8_0 four-tile kernel: MASKS its constants, BLK (T8BLKM, V8BLKM) a
// block of the four tiles.
#define TQ8X1M(MASKS, BLK) \
	MASKS \
	T2ARGSM(32) \
	TESTQ CX, CX \
	JZ done \
loop: \
	BLK(0, 1024) \
	BLK(512, 1056) \
	ADDQ $1088, SI \
	ADDQ $1088, R8 \
	ADDQ $1088, R9 \
	ADDQ $1088, BX \
	DECQ CX \
	JNZ loop \
done: \
	VZEROUPPER \
	RET

// func tileQ8x1mAVX2(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
//
// tileQ8x1AVX2 on four tiles at once (tile + k·stride, outputs at out[16k:]), a word
// of each in turn: four streams from memory, as tileQ4x1mAVX2, with software prefetch
// (AMD Zen 5's quarters: without it, 0.91–0.93× one tile at a time there).
TEXT ·tileQ8x1mAVX2(SB), NOSPLIT, $0-48
	TQ8X1M(T8MASKS, T8BLKM)

// The AVX-VNNI kernels (AVX2 CPUs with AVX-VNNI: VPDPBUSD on ymm, VEX-encoded by hand,
// vnni256_amd64.h): the AVX2 four-token kernels' walks with each word's products summed
// straight into int32 lanes, one VPDPBUSD per half word where VPMADDUBSW, VPADDW and a
// widening VPMADDWD per block (Q4_0, Q4_1, Q5_0, Q5_1, Q4_K), two per chunk pair
// (Q3_K, Q6_K), or VPSIGNB, VPMADDUBSW, VPMADDWD and VPADDD per word (Q8_0) did the same
// sums. The integers are the same (exact in any order), and the float operations after
// them are the AVX2 and VNNI kernels': the same results bit for bit.

// VQ4_a_b adds a nibble word's low (Y2, Y3) and high (Y4, Y5) nibbles times the token's
// words (Y0, Y1) to the int32 sums Ya (rows 0–7) and Yb (rows 8–15).
#define VQ4_6_7 VDP_6_2_0; VDP_7_3_0; VDP_6_4_1; VDP_7_5_1
#define VQ4_8_9 VDP_8_2_0; VDP_9_3_0; VDP_8_4_1; VDP_9_5_1
#define VQ4_10_11 VDP_10_2_0; VDP_11_3_0; VDP_10_4_1; VDP_11_5_1
#define VQ4_12_13 VDP_12_2_0; VDP_13_3_0; VDP_12_4_1; VDP_13_5_1

// VTOK broadcasts word c of the token at T (elements 4c… in Y0, 16+4c… in Y1) and
// adds its products with the loaded word through DP (a VQ4 macro).
#define VTOK(T, c, DP) \
	VPBROADCASTD (4*c)(T), Y0 \
	VPBROADCASTD (16+4*c)(T), Y1 \
	DP

// VQ4TOKS runs the loaded nibble word c against the four tokens (DI, R10, R11, R12)
// into Y6…Y13.
#define VQ4TOKS(c) \
	VTOK(DI, c, VQ4_6_7) \
	VTOK(R10, c, VQ4_8_9) \
	VTOK(R11, c, VQ4_10_11) \
	VTOK(R12, c, VQ4_12_13)

// VQ4ALL is T2Q4ALL with AVX-VNNI: nibble word c of the block at SI against the four
// tokens; VQ5ALL the same with the fifth bits of the word at BX (T2NIB5B).
#define VQ4ALL(c) \
	T2NIB((64*c)(SI), (64*c+32)(SI)) \
	VQ4TOKS(c)

#define VQ5ALL(c) \
	T2NIB5B(c) \
	VQ4TOKS(c)

// VSUM4 turns the four tokens' int32 sums into float32(start + Σ q·y), their starting
// sums at st(DI) + 4t.
#define VSUM4(st) \
	T2SUMD(Y6, Y7, st(DI)) \
	T2SUMD(Y8, Y9, (st+4)(DI)) \
	T2SUMD(Y10, Y11, (st+8)(DI)) \
	T2SUMD(Y12, Y13, (st+12)(DI))

// func tileQ4x4AVXVNNI(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileQ4x4AVXVNNI(SB), NOSPLIT, $0-32
	TQ4X4(T2MASKS, VQ4ALL, VSUM4)

// func tileQ4Kx4AVXVNNI(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileQ4Kx4AVXVNNI(SB), NOSPLIT, $0-32
	TQ4KX4(VQ4ALL, VSUM4)

// V2L4 is T2L4Q4 (ALL: VQ4ALL) and T2L4Q5 (VQ5ALL) with AVX-VNNI (no widening).
#define V2L4(ALL) \
	MOVQ R8, SI \
	T2ZERO8 \
	WORDS4(ALL)

// func tileQ41x4AVXVNNI(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileQ41x4AVXVNNI(SB), NOSPLIT, $0-32
	TILEL4(V2L4(VQ4ALL), T2L4ACCMIN, 512, 640)

// func tileQ50x4AVXVNNI(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileQ50x4AVXVNNI(SB), NOSPLIT, $0-32
	TILEL4(V2L4(VQ5ALL), T2L4ACC, 640, 704)

// func tileQ51x4AVXVNNI(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileQ51x4AVXVNNI(SB), NOSPLIT, $0-32
	TILEL4(V2L4(VQ5ALL), T2L4ACCMIN, 640, 768)

// VQ8_a_b adds a Q8_0 word's quants as stored, q+128 (Y2 rows 0–7, Y3 rows 8–15), times
// the token's word (Y0) to the int32 sums Ya and Yb: with the starting sum −128·Σ y
// (VSUM4), Σ q·y, as the VNNI kernels form it.
#define VQ8_6_7 VDP_6_2_0; VDP_7_3_0
#define VQ8_8_9 VDP_8_2_0; VDP_9_3_0
#define VQ8_10_11 VDP_10_2_0; VDP_11_3_0
#define VQ8_12_13 VDP_12_2_0; VDP_13_3_0

// V8TOK broadcasts word c of the token at T into Y0 and adds its products through DP.
#define V8TOK(T, c, DP) \
	VPBROADCASTD (4*c)(T), Y0 \
	DP

// VQ8ALL runs word c of the Q8_0 block at SI against the four tokens into Y6…Y13.
#define VQ8ALL(c) \
	VMOVDQU (64*c)(SI), Y2 \
	VMOVDQU (64*c+32)(SI), Y3 \
	V8TOK(DI, c, VQ8_6_7) \
	V8TOK(R10, c, VQ8_8_9) \
	V8TOK(R11, c, VQ8_10_11) \
	V8TOK(R12, c, VQ8_12_13)

// VNOMASKS: the AVX-VNNI Q8_0 kernel needs no constants.
#define VNOMASKS

// func tileQ8x4AVXVNNI(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileQ8x4AVXVNNI(SB), NOSPLIT, $0-32
	TQ8X4(VNOMASKS, VQ8ALL, VSUM4)

// V6TOK sets S to the int32 sums Σ (q+32)·y of the four chunks (Y5…Y8) with the 16
// activation bytes of the token at T, through the chunks' VDP macros D5…D8 into S.
#define V6TOK(T, S, D5, D6, D7, D8) \
	VPXOR S, S, S \
	VPBROADCASTD (T), Y0 \
	VPBROADCASTD 4(T), Y1 \
	D5 \
	D6 \
	VPBROADCASTD 8(T), Y0 \
	VPBROADCASTD 12(T), Y1 \
	D7 \
	D8

// V6TOKS4 is T6TOKS4 with AVX-VNNI.
#define V6TOKS4 \
	V6TOK(DI, Y2, VDP_2_5_0, VDP_2_6_1, VDP_2_7_0, VDP_2_8_1) \
	V6TOK(R10, Y3, VDP_3_5_0, VDP_3_6_1, VDP_3_7_0, VDP_3_8_1) \
	V6TOK(R11, Y4, VDP_4_5_0, VDP_4_6_1, VDP_4_7_0, VDP_4_8_1) \
	V6TOK(R12, Y9, VDP_9_5_0, VDP_9_6_1, VDP_9_7_0, VDP_9_8_1)

// V3HALF4 is T3HALF4 with AVX-VNNI.
#define V3HALF4(p, h, PRE) \
	T3CHUNKS(p, h, PRE) \
	T6HALFTX(h, V6TOKS4)

// func tileQ6Kx4AVXVNNI(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileQ6Kx4AVXVNNI(SB), NOSPLIT, $0-32
	TKX4(T6MASKS, T6BLK4, V6TOKS4, $192)

// func tileQ3Kx4AVXVNNI(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileQ3Kx4AVXVNNI(SB), NOSPLIT, $0-32
	T3MASKS
	T2ARGS4(16)
	T3LOOP(V3HALF4, T3NEXT4)

// The AVX-VNNI decode kernels: the one-token and four-tile AVX2 kernels of Q4_0, Q8_0,
// Q4_K and Q6_K with the same VPDPBUSD sums.

// VQ4ONE is T2Q4ONE with AVX-VNNI.
#define VQ4ONE(c) \
	T2NIB((64*c)(SI), (64*c+32)(SI)) \
	VTOK(R10, c, VQ4_6_7)

// func tileQ4x1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ4x1AVXVNNI(SB), NOSPLIT, $0-40
	TQ4X1(T2MASKS, VQ4ONE, T2SUMD)

// func tileQ4Kx1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ4Kx1AVXVNNI(SB), NOSPLIT, $0-40
	TQ4KX1(VQ4ONE, T2SUMD)

// V8ONE is T8ONE with AVX-VNNI (the quants as stored, q+128; T2SUMD adds the start).
#define V8ONE(c) \
	VMOVDQU (64*c)(SI), Y2 \
	VMOVDQU (64*c+32)(SI), Y3 \
	V8TOK(R10, c, VQ8_6_7)

// func tileQ8x1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ8x1AVXVNNI(SB), NOSPLIT, $0-40
	TQ8X1(VNOMASKS, V8ONE, T2SUMD)

// V6TOK2 is T6TOK2 with AVX-VNNI.
#define V6TOK2 V6TOK(R10, Y2, VDP_2_5_0, VDP_2_6_1, VDP_2_7_0, VDP_2_8_1)

// func tileQ6Kx1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ6Kx1AVXVNNI(SB), NOSPLIT, $0-40
	TKX1(T6MASKS, T6BLK1, V6TOK2, $192)

// func tileQ6Kx1mAVXVNNI(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
TEXT ·tileQ6Kx1mAVXVNNI(SB), NOSPLIT, $0-48
	TQ6KX1M(V6HALFM)

// VQ4M runs a nibble word of one tile (rows 0–7 at m0, rows 8–15 at m1) against the
// token's words (Y0, Y1) through DP (a VQ4 macro): T2Q4M with AVX-VNNI.
#define VQ4M(m0, m1, DP) \
	T2NIB(m0, m1) \
	DP

// VW4T runs word c of a block of the four tiles, its halves at memory operands a0, a1
// (tile SI) … d0, d1 (tile BX), through M (VQ4M, VNLM) into the sums Y6…Y13: T2Q4W's
// and TNLWMP's step with AVX-VNNI. VQ4W and VQ4KW are T2Q4W and T2Q4KW with AVX-VNNI,
// VNLW and VXSW TNLWM and XSWM; VQ4SUM is T2Q4SUM's for int32 sums, VQ4KFIN4
// T2Q4KFIN4's.
#define VW4T(M, c, a0, a1, b0, b1, c0, c1, d0, d1) \
	VPBROADCASTD (4*c)(R10), Y0 \
	VPBROADCASTD (16+4*c)(R10), Y1 \
	M(a0, a1, VQ4_6_7) \
	M(b0, b1, VQ4_8_9) \
	M(c0, c1, VQ4_10_11) \
	M(d0, d1, VQ4_12_13)

#define VQ4W(q, c) VW4T(VQ4M, c, (q+64*c)(SI), (q+64*c+32)(SI), (q+64*c)(R8), (q+64*c+32)(R8), (q+64*c)(R9), (q+64*c+32)(R9), (q+64*c)(BX), (q+64*c+32)(BX))
#define VQ4KW(c) VW4T(VQ4M, c, (320+64*c)(SI)(R11*1), (352+64*c)(SI)(R11*1), (320+64*c)(R8)(R11*1), (352+64*c)(R8)(R11*1), (320+64*c)(R9)(R11*1), (352+64*c)(R9)(R11*1), (320+64*c)(BX)(R11*1), (352+64*c)(BX)(R11*1))

#define VQ4SUM(S0, S1) T2SUMD(S0, S1, 16(R12))
#define VQ4KFIN4 FIN4T(T2KFIND, Y13)

// func tileQ4x1mAVXVNNI(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
TEXT ·tileQ4x1mAVXVNNI(SB), NOSPLIT, $0-48
	T2X1M(T2MASKS, VQ4W, VQ4SUM, Y13)

// func tileQ4Kx1mAVXVNNI(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
TEXT ·tileQ4Kx1mAVXVNNI(SB), NOSPLIT, $0-48
	T2SUPERM(T2MASKS, T2ZERO8, VQ4KW, VQ4KFIN4, $2368)

// V8WM is T8WM with AVX-VNNI: word c of the block at q of the four tiles, each line
// prefetched 1 KiB ahead, the token's word broadcast once for the four.
#define V8WM(q, c) \
	VPBROADCASTD (4*c)(R10), Y0 \
	V8WP(SI, q, c) \
	VQ8_6_7 \
	V8WP(R8, q, c) \
	VQ8_8_9 \
	V8WP(R9, q, c) \
	VQ8_10_11 \
	V8WP(BX, q, c) \
	VQ8_12_13

// V8WP loads word c of the block at q of the tile at P as stored (Y2, Y3), its line
// prefetched 1 KiB ahead first.
#define V8WP(P, q, c) \
	T8PF((1024+q+64*c)(P)) \
	VMOVDQU (q+64*c)(P), Y2 \
	VMOVDQU (q+64*c+32)(P), Y3

#define V8WM2(q, c) \
	V8WM(q, (2*c)) \
	V8WM(q, (2*c+1))

// V8BLKM is T8BLKM with AVX-VNNI.
#define V8BLKM(q, sc) T2BLK4(V8WM2, VQ4SUM, q, sc, Y13)

// func tileQ8x1mAVXVNNI(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
TEXT ·tileQ8x1mAVXVNNI(SB), NOSPLIT, $0-48
	TQ8X1M(VNOMASKS, V8BLKM)

// The AVX-VNNI IQ4_NL and IQ4_XS kernels: Q4_0's and Q4_K's walks with the nibbles
// looked up (VPSHUFB) as levels+128 (lutTileIQ4NL, in Y14: these kernels need no int16
// ones), whose sums start at −128·Σ y as the VNNI level's do.

// VNLMASKS is T2MASKS with Y14 = the levels plus 128.
#define VNLMASKS \
	T2MASKS \
	VBROADCASTI128 ·lutTileIQ4NL(SB), Y14

// VNLLOOK looks T2NIB's nibbles (Y2…Y5) up as levels plus 128.
#define VNLLOOK \
	VPSHUFB Y2, Y14, Y2 \
	VPSHUFB Y3, Y14, Y3 \
	VPSHUFB Y4, Y14, Y4 \
	VPSHUFB Y5, Y14, Y5

// VNLALL, VNLONE and VNLM are VQ4ALL, VQ4ONE and VQ4M with the lookup.
#define VNLALL(c) \
	T2NIB((64*c)(SI), (64*c+32)(SI)) \
	VNLLOOK \
	VQ4TOKS(c)

#define VNLONE(c) \
	T2NIB((64*c)(SI), (64*c+32)(SI)) \
	VNLLOOK \
	VTOK(R10, c, VQ4_6_7)

#define VNLM(m0, m1, DP) \
	T2NIB(m0, m1) \
	VNLLOOK \
	DP

// VNLW is VQ4W with the lookup; VXSW is it for IQ4_XS's sub-block R11/256 (nibbles at
// 192 in each super-block).
#define VNLW(q, c) VW4T(VNLM, c, (q+64*c)(SI), (q+64*c+32)(SI), (q+64*c)(R8), (q+64*c+32)(R8), (q+64*c)(R9), (q+64*c+32)(R9), (q+64*c)(BX), (q+64*c+32)(BX))
#define VXSW(c) VW4T(VNLM, c, (192+64*c)(SI)(R11*1), (224+64*c)(SI)(R11*1), (192+64*c)(R8)(R11*1), (224+64*c)(R8)(R11*1), (192+64*c)(R9)(R11*1), (224+64*c)(R9)(R11*1), (192+64*c)(BX)(R11*1), (224+64*c)(BX)(R11*1))

// VXSFINM is XSFINM for int32 sums that start at −128·Σ y; VXSFIN4 it for the four tiles.
#define VXSFINM(P, S0, S1, off) XSFINX(VQ4SUM, P, S0, S1, off)
#define VXSFIN4 FIN4T(VXSFINM, Y13)

// func tileIQ4NLx4AVXVNNI(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileIQ4NLx4AVXVNNI(SB), NOSPLIT, $0-32
	TQ4X4(VNLMASKS, VNLALL, VSUM4)

// func tileIQ4NLx1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileIQ4NLx1AVXVNNI(SB), NOSPLIT, $0-40
	TQ4X1(VNLMASKS, VNLONE, T2SUMD)

// func tileIQ4NLx1mAVXVNNI(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
TEXT ·tileIQ4NLx1mAVXVNNI(SB), NOSPLIT, $0-48
	T2X1M(VNLMASKS, VNLW, VQ4SUM, Y13)

// func tileIQ4XSx1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileIQ4XSx1AVXVNNI(SB), NOSPLIT, $0-40
	TXSX1(VNLMASKS, VNLONE, VQ4SUM)

// func tileIQ4XSx1mAVXVNNI(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)
TEXT ·tileIQ4XSx1mAVXVNNI(SB), NOSPLIT, $0-48
	T2SUPERM(VNLMASKS, T2ZERO8, VXSW, VXSFIN4, $2240)

// VXSSC2 sets Y2, Y3 to an IQ4_XS sub-block's row scales d·(ls−32) (rows 0–7, 8–15) as
// XSSC does. Clobbers Y0.
#define VXSSC2 \
	VPMOVSXBD (R14), Y2 \
	VCVTDQ2PS Y2, Y2 \
	VCVTPH2PS (BX), Y0 \
	VMULPS Y0, Y2, Y2 \
	VPMOVSXBD 8(R14), Y3 \
	VCVTDQ2PS Y3, Y3 \
	VCVTPH2PS 16(BX), Y0 \
	VMULPS Y0, Y3, Y3

// func tileIQ4XSx4AVXVNNI(nu int, tile, act *byte, out *[64]float32)
//
// tileIQ4XSx4AVX2 with AVX-VNNI, in Q4_K's four-token walk (TQ4KX4's, with IQ4_XS's
// head and scales): each output's float operations are the same.
TEXT ·tileIQ4XSx4AVXVNNI(SB), NOSPLIT, $0-32
	VNLMASKS
	T2ARGS4(32)
	TESTQ CX, CX
	JZ done

super:
	XSHEAD

sub:
	T2ZERO8
	VNLALL(0)
	VNLALL(1)
	VNLALL(2)
	VNLALL(3)
	VSUM4(144)
	VXSSC2
	T2ACC8(128)
	ADDQ $256, SI
	ADDQ $16, R14
	ADDQ $176, DI
	ADDQ $176, R10
	ADDQ $176, R11
	ADDQ $176, R12
	DECQ R13
	JNZ sub
	DECQ CX
	JNZ super

done:
	VZEROUPPER
	RET

// V2L1 is T2L1Q4 (ONE: VQ4ONE) and T2L1Q5 (V5ONE) with AVX-VNNI (no widening).
#define V2L1(ONE) \
	VPXOR Y6, Y6, Y6 \
	VPXOR Y7, Y7, Y7 \
	MOVQ R8, SI \
	WORDS4(ONE)

// V5ONE is VQ4ONE with the fifth bits of the word at BX (T2NIB5B).
#define V5ONE(c) \
	T2NIB5B(c) \
	VTOK(R10, c, VQ4_6_7)

// func tileQ41x1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ41x1AVXVNNI(SB), NOSPLIT, $0-40
	TILEL1(V2L1(VQ4ONE), T2L1MIN, 512, 640)

// func tileQ50x1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ50x1AVXVNNI(SB), NOSPLIT, $0-40
	TILEL1(V2L1(V5ONE), T2NOMIN, 640, 704)

// func tileQ51x1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ51x1AVXVNNI(SB), NOSPLIT, $0-40
	TILEL1(V2L1(V5ONE), T2L1MIN, 640, 768)

// The AVX-VNNI Q5_K kernels (one token, four tokens): the fifth bits added as the AVX2
// kernels add them (T2NIB5), the words' products summed with VPDPBUSD.

// V5KSUB1 is T2Q5SUB1 with AVX-VNNI: words 0 and 1 summed in Y6, Y7, words 2 and 3 in
// Y10, Y11, as there (two chains of VPDPBUSD, whose latency a single chain waits on:
// llama-1b Q5_K_M decoded 0.99× as fast as with the AVX2 kernel that way), then added.
#define V5KSUB1(SH) \
	VPXOR Y6, Y6, Y6 \
	VPXOR Y7, Y7, Y7 \
	VPXOR Y10, Y10, Y10 \
	VPXOR Y11, Y11, Y11 \
	T2NIB5(0, SH, X8, Y9) \
	VTOK(R10, 0, VQ4_6_7) \
	T2NIB5(1, SH, X8, Y9) \
	VTOK(R10, 1, VQ4_6_7) \
	T2NIB5(2, SH, X8, Y9) \
	VTOK(R10, 2, VQ4_10_11) \
	T2NIB5(3, SH, X8, Y9) \
	VTOK(R10, 3, VQ4_10_11) \
	VPADDD Y10, Y6, Y6 \
	VPADDD Y11, Y7, Y7 \
	T2SUMD(Y6, Y7, 16(R12)) \
	T2KFAC((R14), 8(R14), 128(R14), 136(R14), BX) \
	T2KACC1(Y6, Y7, 0) \
	ADDQ $256, SI \
	ADDQ $16, R14 \
	ADDQ $176, R10 \
	ADDQ $176, R12

// func tileQ5Kx1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ5Kx1AVXVNNI(SB), NOSPLIT, $0-40
	TQ5KX1(V5KSUB1)

// V5KALL is T2Q5ALL with AVX-VNNI; V5KW4 T2Q5W4.
#define V5KALL(c, SH) \
	T2NIB5(c, SH, (R8), t2q5c10<>(SB)) \
	VQ4TOKS(c)

#define V5KW4(SH) \
	V5KALL(0, SH) \
	V5KALL(1, SH) \
	V5KALL(2, SH) \
	V5KALL(3, SH)

#define V5KSUB4(SH) T2Q5SUB4X(V5KW4, SH)

// func tileQ5Kx4AVXVNNI(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileQ5Kx4AVXVNNI(SB), NOSPLIT, $0-32
	TQ5KX4(V5KSUB4)

// The AVX-VNNI Q2_K and Q3_K one-token kernels (and Q2_K's four-token one): their
// chunks summed with VPDPBUSD (V6TOK2, V6TOKS4), as Q6_K's.

// V3HALF1 is T3HALF1 with AVX-VNNI.
#define V3HALF1(p, h, PRE) T3HALF1X(p, h, PRE, V6TOK2)

// func tileQ3Kx1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ3Kx1AVXVNNI(SB), NOSPLIT, $0-40
	T2ARGS1(16)
	T3MASKS
	VPXOR Y0, Y0, Y0
	VMOVUPS Y0, (AX)
	VMOVUPS Y0, 32(AX)
	T3LOOP(V3HALF1, T3NEXT1)

// func tileQ2Kx1AVXVNNI(nu int, tile, act *byte, tok int, out *[16]float32)
TEXT ·tileQ2Kx1AVXVNNI(SB), NOSPLIT, $0-40
	TKX1(T2Q2MASKS, T2Q2BLK1, V6TOK2, $64)

// func tileQ2Kx4AVXVNNI(nu int, tile, act *byte, out *[64]float32)
TEXT ·tileQ2Kx4AVXVNNI(SB), NOSPLIT, $0-32
	TKX4(T2Q2MASKS, T2Q2BLK4, V6TOKS4, $64)
