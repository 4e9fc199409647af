//go:build amd64 && !purego

#include "textflag.h"
#include "lanes_amd64.h"

// The AVX2 batched kernel: two MXFP4 weight rows (ggml layout) times up to four
// tokens' Q8_0 activations (the other integer types take the AVX2 tile kernels,
// tile_avx2_amd64.s), each weight block unpacked once per call and used for
// every token. Every product (row r, token t) keeps eight int32→float32 lanes, lane m
// holding elements 4m..4m+3 of each block:
//
//	acc[m] = fma(float32(Σ w·x over the lane's four elements), dw·dx, acc[m])
//
// over the blocks in turn, reduced at the end as HSUM does ((a0+a4)+(a1+a5)) +
// ((a2+a6)+(a3+a7)); batch2Go is the pure-Go twin. A product is computed in that one
// order whatever the number of tokens, so decode rows are bit-identical alone or in a
// batch.

DATA b2ones<>+0(SB)/8, $0x0001000100010001
DATA b2ones<>+8(SB)/8, $0x0001000100010001
DATA b2ones<>+16(SB)/8, $0x0001000100010001
DATA b2ones<>+24(SB)/8, $0x0001000100010001
GLOBL b2ones<>(SB), RODATA|NOPTR, $32

DATA b2lo<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA b2lo<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA b2lo<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA b2lo<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL b2lo<>(SB), RODATA|NOPTR, $32

// PAIR adds one weight block (SGN, ABS, scale D) times the activation block at (P) to
// the lanes of ACC.
#define PAIR(P, SGN, ABS, D, ACC) \
	VMOVDQU 2(P), Y6 \
	VPSIGNB SGN, Y6, Y6 \
	VPMADDUBSW Y6, ABS, Y6 \
	VPMADDWD b2ones<>(SB), Y6, Y6 \
	VCVTDQ2PS Y6, Y6 \
	VPBROADCASTW (P), X7 \
	VCVTPH2PS X7, Y7 \
	VMULPS D, Y7, Y7 \
	VFMADD231PS Y7, Y6, ACC

// B2SETUP loads the arguments: rows at SI and R8, tokens at DI, R9, R10, R11 (tokens
// past ntok repeating the last), BX = ntok, accumulators Y8..Y15 cleared.
#define B2SETUP \
	MOVQ nb+0(FP), CX \
	MOVQ w+8(FP), SI \
	MOVQ wstride+16(FP), DX \
	MOVQ x+24(FP), DI \
	MOVQ xstride+32(FP), AX \
	MOVQ ntok+40(FP), BX \
	LEAQ (SI)(DX*1), R8 \
	LEAQ (DI)(AX*1), R9 \
	CMPQ BX, $2 \
	CMOVQLT DI, R9 \
	LEAQ (R9)(AX*1), R10 \
	CMPQ BX, $3 \
	CMOVQLT R9, R10 \
	LEAQ (R10)(AX*1), R11 \
	CMPQ BX, $4 \
	CMOVQLT R10, R11 \
	MOVQ out+48(FP), AX \
	VXORPS Y8, Y8, Y8 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	VXORPS Y11, Y11, Y11 \
	VXORPS Y12, Y12, Y12 \
	VXORPS Y13, Y13, Y13 \
	VXORPS Y14, Y14, Y14 \
	VXORPS Y15, Y15, Y15

// B2TOKENS runs every token of one block pair (row 0 in Y0/Y1/Y4, row 1 in
// Y2/Y3/Y5): out[4r+t] accumulates in Y8+4r+t. With one token (BX = 1) only token 0.
#define B2TOKENS(one) \
	PAIR(DI, Y0, Y1, Y4, Y8) \
	PAIR(DI, Y2, Y3, Y5, Y12) \
	CMPQ BX, $1 \
	JEQ one \
	PAIR(R9, Y0, Y1, Y4, Y9) \
	PAIR(R9, Y2, Y3, Y5, Y13) \
	PAIR(R10, Y0, Y1, Y4, Y10) \
	PAIR(R10, Y2, Y3, Y5, Y14) \
	PAIR(R11, Y0, Y1, Y4, Y11) \
	PAIR(R11, Y2, Y3, Y5, Y15) \
one: \
	ADDQ $34, DI \
	ADDQ $34, R9 \
	ADDQ $34, R10 \
	ADDQ $34, R11

#define B2DONE \
	RED8(Y8, X8, 0) \
	RED8(Y9, X9, 4) \
	RED8(Y10, X10, 8) \
	RED8(Y11, X11, 12) \
	RED8(Y12, X12, 16) \
	RED8(Y13, X13, 20) \
	RED8(Y14, X14, 24) \
	RED8(Y15, X15, 28) \
	VZEROUPPER \
	RET

// WLUT loads one MXFP4 block's 16 nibble bytes at qo(P) as their 32 levels
// (table at R12, VPSHUFB; low nibbles in the low lane) into SGN, their absolute values
// into ABS.
#define WLUT(P, qo, SGN, XSGN, ABS) \
	VMOVDQU qo(P), XSGN \
	VPSRLW $4, XSGN, X7 \
	VINSERTI128 $1, X7, SGN, SGN \
	VPAND b2lo<>(SB), SGN, SGN \
	VBROADCASTI128 (R12), Y6 \
	VPSHUFB SGN, Y6, SGN \
	VPABSB SGN, ABS

// func batchMXFP4AVX2(nb int, w *byte, wstride int, x *byte, xstride, ntok int, out *[8]float32)
//
// The block's factor e8m0Halves[e] (table at R13) takes the place of its fp16 scale.
TEXT ·batchMXFP4AVX2(SB), NOSPLIT, $0-56
	B2SETUP
	LEAQ ·lutSignedMXFP4(SB), R12
	LEAQ ·e8m0Halves(SB), R13
	TESTQ CX, CX
	JZ bmxfp4_done
bmxfp4_loop:
	WLUT(SI, 1, Y0, X0, Y1)
	MOVBLZX (SI), R14
	VBROADCASTSS (R13)(R14*4), Y4
	WLUT(R8, 1, Y2, X2, Y3)
	MOVBLZX (R8), R14
	VBROADCASTSS (R13)(R14*4), Y5
	B2TOKENS(bmxfp4_one)
	ADDQ $17, SI
	ADDQ $17, R8
	DECQ CX
	JNZ bmxfp4_loop
bmxfp4_done:
	B2DONE
